package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
)

// File is one configuration: what a file holds, or an in-memory snapshot
// given by an embedding host.
type File struct {
	MCPServers map[string]Server `json:"mcpServers"`
	Settings   Settings          `json:"settings,omitempty"`
	// Order lists MCPServers' names in file order; nil means sorted by name.
	Order []string `json:"-"`
}

// Clone returns a deep copy, so a snapshot handed to one runtime can never
// be changed through another.
func (f File) Clone() File {
	out := File{MCPServers: make(map[string]Server, len(f.MCPServers)), Settings: f.Settings, Order: append([]string(nil), f.Order...)}
	for k, s := range f.MCPServers {
		out.MCPServers[k] = s.clone()
	}
	out.Settings = f.Settings.clone()
	return out
}

// Names returns the server names in file order (sorted when unknown).
func (f File) Names() []string {
	if len(f.Order) == len(f.MCPServers) {
		return append([]string(nil), f.Order...)
	}
	names := make([]string, 0, len(f.MCPServers))
	for n := range f.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Issue is one problem with a configuration. It never contains a value
// from the configuration.
type Issue struct {
	File string // "" for in-memory configuration
	// Server is the entry's name, or "#N" (its 1-based position) when the
	// name itself is unusable.
	Server  string
	Field   string
	Message string
}

// String renders the issue on one line.
func (i Issue) String() string {
	s := ""
	if i.File != "" {
		s = i.File + ": "
	}
	if i.Server != "" {
		s += fmt.Sprintf("server %s: ", quoteName(i.Server))
	}
	if i.Field != "" {
		s += "field " + i.Field + ": "
	}
	return s + i.Message
}

func quoteName(n string) string {
	if len(n) > 0 && n[0] == '#' {
		return "entry " + n
	}
	return fmt.Sprintf("%q", n)
}

// ErrSyntax marks a file that is not valid configuration JSON at all.
var ErrSyntax = errors.New("config: syntax error")

// namePattern is what a server name may look like: it becomes part of tool
// names, file names and status lines.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Parse reads one configuration file. A file that is not a JSON object with
// an mcpServers object fails as a whole (with line and column); a bad entry
// only drops that entry, reported as an Issue.
func Parse(data []byte, source string) (File, []Issue, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(data, &root); err != nil {
		return File{}, nil, syntaxError(data, source, err)
	}
	f := File{MCPServers: map[string]Server{}}
	var issues []Issue
	for key := range root {
		switch key {
		case "mcpServers", "settings", "$schema", "imports":
		default:
			issues = append(issues, Issue{File: source, Field: key, Message: "unknown top-level field (ignored)"})
		}
	}
	sort.Slice(issues, func(i, j int) bool { return issues[i].Field < issues[j].Field })
	if raw, ok := root["settings"]; ok {
		if err := strictDecode(raw, &f.Settings); err != nil {
			issues = append(issues, Issue{File: source, Field: "settings", Message: "must be an object with known settings of the right types (ignored)"})
			f.Settings = Settings{}
		}
	}
	raw, ok := root["mcpServers"]
	if !ok {
		return f, issues, nil
	}
	names, entries, err := orderedObject(raw)
	if err != nil {
		return File{}, nil, fmt.Errorf("%w: %s: mcpServers must be an object", ErrSyntax, source)
	}
	for i, name := range names {
		pos := fmt.Sprintf("#%d", i+1)
		if !namePattern.MatchString(name) {
			issues = append(issues, Issue{File: source, Server: pos, Message: "invalid server name (use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit)"})
			continue
		}
		if _, dup := f.MCPServers[name]; dup {
			issues = append(issues, Issue{File: source, Server: pos, Message: "duplicate server name; the later entry is ignored"})
			continue
		}
		s, entryIssues := parseEntry(entries[i], source, name)
		if len(entryIssues) > 0 {
			issues = append(issues, entryIssues...)
			continue
		}
		f.MCPServers[name] = s
		f.Order = append(f.Order, name)
	}
	return f, issues, nil
}

// orderedObject splits a JSON object into its keys (in order) and values.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, t.(string)), append(vals, v)
	}
	return keys, vals, nil
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// syntaxError locates a JSON error by line and column, without quoting the
// text around it.
func syntaxError(data []byte, source string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		return fmt.Errorf("%w: %s: the file must hold a JSON object", ErrSyntax, source)
	}
	if offset < 0 {
		return fmt.Errorf("%w: %s: not valid JSON", ErrSyntax, source)
	}
	line, col := 1, 1
	for _, b := range data[:min(int(offset), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("%w: %s: invalid JSON at line %d, column %d", ErrSyntax, source, line, col)
}
