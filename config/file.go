package config

import (
	"encoding/json"
	"path/filepath"
	"sort"
)

// File is one configuration: what a file holds, or an in-memory snapshot
// given by an embedding host.
type File struct {
	MCPServers map[string]Server `json:"mcpServers"`
	Settings   Settings          `json:"settings,omitempty"`
	// Imports lists the hosts whose configuration files are imported.
	Imports []string `json:"imports,omitempty"`
	// Order lists MCPServers' names in file order; nil means sorted by name.
	Order []string `json:"-"`
}

// Clone returns a deep copy, so a snapshot handed to one runtime can never
// be changed through another.
func (f File) Clone() File {
	out := File{MCPServers: make(map[string]Server, len(f.MCPServers)), Order: cloneSlice(f.Order), Imports: cloneSlice(f.Imports)}
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

// Parse reads one configuration file on its own, strictly, as if it were
// the only file: JSON with comments and trailing commas, every entry
// checked field by field and as a whole. A file that is not usable at all
// fails (ErrSyntax, with line and column); a bad entry only drops that
// entry, reported as an Issue. Variables are resolved against an empty
// environment; Load resolves them against the real one.
func Parse(data []byte, source string) (File, []Issue, error) {
	l, issues, err := parseLayer(data, source, filepath.Dir(source))
	if err != nil {
		return File{}, nil, err
	}
	f := File{MCPServers: map[string]Server{}}
	order, merged := merge([]*layer{&l})
	for _, name := range order {
		s, more := merged[name].build()
		issues = append(issues, more...)
		if more != nil || len(merged[name].invalid) > 0 {
			continue
		}
		issues = append(issues, s.warnings...)
		ep, _ := resolve(&s, nil, "", filepath.Dir(source))
		s.endpoint = &ep
		f.MCPServers[name] = s
		f.Order = append(f.Order, name)
	}
	raw, from := mergeSettings([]*layer{&l})
	set, setIssues, _ := parseSettings(raw, from)
	f.Settings, issues = set, append(issues, setIssues...)
	var servers []Server
	for _, name := range f.Order {
		servers = append(servers, f.MCPServers[name])
	}
	issues = append(issues, prefixCollisions(servers, set.ToolPrefix)...)
	f.Imports, setIssues = mergeImports([]*layer{&l})
	return f, append(issues, setIssues...), nil
}

// inlineLayer turns an in-memory configuration into a layer, through the
// same checks as a file.
func inlineLayer(f File, workDir string) (*layer, []Issue) {
	l := &layer{dir: workDir}
	var issues []Issue
	for i, name := range f.Names() {
		s := f.MCPServers[name]
		if !ValidName(name) {
			issues = append(issues, Issue{Server: "#" + itoa(i+1), Message: nameRule})
			continue
		}
		raw, _ := marshalEntry(s)
		fields, fieldIssues := entryFields(raw, "", name)
		issues = append(issues, fieldIssues...)
		l.entries = append(l.entries, entry{name: name, pos: i + 1, fields: fields, invalid: len(fieldIssues) > 0})
	}
	if b, err := json.Marshal(f.Settings); err == nil {
		l.settings, _ = objectMembers(b, 0)
	}
	return l, issues
}

// marshalEntry renders an in-memory Server as the JSON entry a file would
// hold, so both go through the same validation.
func marshalEntry(s Server) (json.RawMessage, error) {
	s.Name, s.Source, s.Provenance = "", "", nil
	return json.Marshal(s)
}
