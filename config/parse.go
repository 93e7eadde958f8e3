package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tailscale/hujson"
)

// Limits of one configuration (docs/config.md, "Limits").
const (
	// MaxFileSize bounds a configuration file.
	MaxFileSize = 256 << 10
	// MaxEntriesPerFile bounds the server entries of one file.
	MaxEntriesPerFile = 128
	// MaxEnabledServers bounds the enabled servers of the merged result.
	MaxEnabledServers = 64
)

// ErrSyntax marks a file that is not usable configuration at all: not JSON
// (with comments), a root that is not an object, mcpServers or settings
// that are not objects, imports that is not a list of strings, a
// duplicate top-level key, or more than MaxEntriesPerFile entries.
var ErrSyntax = errors.New("config: syntax error")

// member is one key of a JSON object, in document order.
type member struct {
	key    string
	value  json.RawMessage
	offset int // byte offset of the key in the document
}

// layer is one configuration source, parsed and checked field by field but
// not yet merged with the others.
type layer struct {
	path     string // the file; "" for in-memory configuration
	dir      string // where relative cwd and socket paths resolve
	entries  []entry
	settings []member
	imports  []string
}

// entry is one server entry of a layer.
type entry struct {
	name    string // "" when the name is unusable
	pos     int    // 1-based position in the file's server object
	fields  map[string]json.RawMessage
	invalid bool // a field-level issue was reported
}

// standardize turns JSON with comments and trailing commas into JSON,
// keeping every byte offset. Its error gives only a line and column.
func standardize(data []byte, source string) ([]byte, error) {
	std, err := hujson.Standardize(append([]byte(nil), data...))
	if err == nil {
		return std, nil
	}
	if m := lineCol().FindStringSubmatch(err.Error()); m != nil {
		return nil, fmt.Errorf("%w: %s: invalid JSON at line %s, column %s", ErrSyntax, source, m[1], m[2])
	}
	return nil, fmt.Errorf("%w: %s: not valid JSON", ErrSyntax, source)
}

// lineCol is compiled on first use, not at package initialisation.
var lineCol = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+), column (\d+)`) })

// position renders a byte offset of data as "line L, column C".
func position(data []byte, offset int) string {
	offset = max(0, min(offset, len(data)))
	line := 1 + bytes.Count(data[:offset], []byte("\n"))
	col := 1 + offset - (bytes.LastIndexByte(data[:offset], '\n') + 1)
	return "line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col)
}

// structureError is a fatal problem with a file's shape, located by line
// and column.
func structureError(data []byte, source string, offset int, what string) error {
	return fmt.Errorf("%w: %s: %s (%s)", ErrSyntax, source, what, position(data, offset))
}

// objectMembers splits a JSON object into its members in order. It fails
// on anything that is not an object, and on a duplicate key (reporting its
// offset).
func objectMembers(raw json.RawMessage, base int) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errNotObject
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		at := int(dec.InputOffset())
		for at < len(raw) && strings.IndexByte(" \t\r\n,", raw[at]) >= 0 {
			at++
		}
		at += base
		t, err := dec.Token()
		if err != nil {
			return nil, errNotObject
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errNotObject
		}
		if seen[key] {
			return out, &duplicateError{offset: at}
		}
		seen[key] = true
		out = append(out, member{key: key, value: v, offset: at})
	}
	return out, nil
}

var errNotObject = errors.New("not an object")

type duplicateError struct{ offset int }

// Error says what the error is, without the key.
func (e *duplicateError) Error() string { return "duplicate key" }

// valueOffset finds where a member's value starts, for diagnostics.
func valueOffset(data []byte, m member) int {
	i := m.offset
	for i < len(data) && data[i] != ':' {
		i++
	}
	for i++; i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'); i++ {
	}
	return i
}

// rootOf parses a document's root object (JSON with comments).
func rootOf(data []byte, source string) ([]byte, []member, error) {
	std, err := standardize(data, source)
	if err != nil {
		return nil, nil, err
	}
	var whole json.RawMessage
	if err := json.Unmarshal(std, &whole); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, structureError(std, source, int(se.Offset), "invalid JSON")
		}
		return nil, nil, fmt.Errorf("%w: %s: not valid JSON", ErrSyntax, source)
	}
	start := len(std) - len(bytes.TrimLeft(std, " \t\r\n"))
	members, err := objectMembers(std, 0)
	var dup *duplicateError
	switch {
	case errors.As(err, &dup):
		return nil, nil, structureError(std, source, dup.offset, "a top-level key appears twice")
	case err != nil:
		return nil, nil, structureError(std, source, start, "the file must hold a JSON object")
	}
	return std, members, nil
}

// parseLayer reads one native configuration file strictly.
func parseLayer(data []byte, source, dir string) (layer, []Issue, error) {
	std, root, err := rootOf(data, source)
	if err != nil {
		return layer{}, nil, err
	}
	l := layer{path: source, dir: dir}
	var issues []Issue
	for _, m := range root {
		switch m.key {
		case "$schema":
		case "mcpServers":
			entries, entryIssues, err := parseServers(m.value, source)
			if err != nil {
				return layer{}, nil, structureError(std, source, valueOffset(std, m), "mcpServers must be an object whose values are server entries")
			}
			if len(entries) > MaxEntriesPerFile {
				return layer{}, nil, structureError(std, source, valueOffset(std, m), fmt.Sprintf("more than %d server entries", MaxEntriesPerFile))
			}
			l.entries, issues = entries, append(issues, entryIssues...)
		case "settings":
			s, err := objectMembers(m.value, valueOffset(std, m))
			var dup *duplicateError
			switch {
			case errors.As(err, &dup):
				return layer{}, nil, structureError(std, source, dup.offset, "a setting appears twice")
			case err != nil:
				return layer{}, nil, structureError(std, source, valueOffset(std, m), "settings must be an object")
			}
			l.settings = s
		case "imports":
			if json.Unmarshal(m.value, &l.imports) != nil || bytes.Equal(bytes.TrimSpace(m.value), []byte("null")) {
				return layer{}, nil, structureError(std, source, valueOffset(std, m), "imports must be a list of host names")
			}
		default:
			issues = append(issues, Issue{File: source, Field: fieldLabel(m.key), Message: "unknown top-level field (ignored; the file takes mcpServers, settings, imports and $schema)"})
		}
	}
	return l, issues, nil
}

// parseServers reads the members of mcpServers into entries, checking each
// field. A duplicate name invalidates that name.
func parseServers(raw json.RawMessage, source string) ([]entry, []Issue, error) {
	var issues []Issue
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errNotObject
	}
	var entries []entry
	seen := map[string]int{}
	for pos := 1; dec.More(); pos++ {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, errNotObject
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, nil, errNotObject
		}
		name, _ := t.(string)
		e := entry{pos: pos}
		if !ValidName(name) {
			issues = append(issues, Issue{File: source, Server: "#" + strconv.Itoa(pos), Message: nameRule})
			entries = append(entries, entry{pos: pos, invalid: true})
			continue
		}
		e.name = name
		if first, dup := seen[name]; dup {
			issues = append(issues, Issue{File: source, Server: name, Message: fmt.Sprintf("is declared twice (entries #%d and #%d); neither is used", first, pos)})
			entries = append(entries, entry{name: name, pos: pos, invalid: true})
			continue
		}
		seen[name] = pos
		fields, fieldIssues := entryFields(v, source, name)
		e.fields, e.invalid = fields, len(fieldIssues) > 0
		issues = append(issues, fieldIssues...)
		entries = append(entries, e)
	}
	return entries, issues, nil
}

// entryFields splits one entry into its fields and checks each.
func entryFields(raw json.RawMessage, source, name string) (map[string]json.RawMessage, []Issue) {
	members, err := objectMembers(raw, 0)
	var dup *duplicateError
	switch {
	case errors.As(err, &dup):
		return nil, []Issue{{File: source, Server: name, Message: "a field appears twice in the entry"}}
	case err != nil:
		return nil, []Issue{{File: source, Server: name, Message: "the entry must be a JSON object"}}
	}
	fields := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		fields[m.key] = m.value
	}
	_, issues := parseEntry(fields, source, name)
	return fields, issues
}
