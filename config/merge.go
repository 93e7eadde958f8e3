package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// endpointFields name how a server is reached.
var endpointFields = []string{"command", "url", "socket"}

// boundFields are the credentials bound to the endpoint they were written
// for: a layer that changes the endpoint does not inherit them.
var boundFields = []string{"headers", "env", "bearerToken", "bearerTokenEnv", "oauth"}

// stdioFields only make sense for the command they were written with's
// transport: a layer that switches transport does not inherit them.
var stdioFields = []string{"args", "cwd"}

// mergedServer is one server name folded across every layer.
type mergedServer struct {
	name   string
	fields map[string]json.RawMessage
	from   map[string]*layer // which layer each field came from
	// files lists the layers that declare the server, lowest first.
	files []*layer
	// invalid lists the layers whose entry for this name is invalid.
	invalid []*layer
}

// highest is the highest layer declaring the server.
func (m *mergedServer) highest() *layer { return m.files[len(m.files)-1] }

// merge folds layers (lowest precedence first) into servers by name, field
// by field. It returns the names in order of first appearance.
func merge(layers []*layer) ([]string, map[string]*mergedServer) {
	var order []string
	servers := map[string]*mergedServer{}
	for _, l := range layers {
		for _, e := range l.entries {
			if e.name == "" {
				continue
			}
			m := servers[e.name]
			if m == nil {
				m = &mergedServer{name: e.name, fields: map[string]json.RawMessage{}, from: map[string]*layer{}}
				servers[e.name] = m
				order = append(order, e.name)
			}
			m.files = append(m.files, l)
			if e.invalid {
				m.invalid = append(m.invalid, l)
				continue
			}
			m.apply(e.fields, l)
		}
	}
	return order, servers
}

// apply lays one valid entry over what the lower layers gave.
func (m *mergedServer) apply(fields map[string]json.RawMessage, l *layer) {
	if changed, kindChanged := m.endpointChange(fields); changed {
		drop := append(append([]string{"type"}, endpointFields...), boundFields...)
		if kindChanged {
			drop = append(drop, stdioFields...)
		}
		for _, f := range drop {
			m.remove(f)
		}
	}
	_, token := fields["bearerToken"]
	_, tokenEnv := fields["bearerTokenEnv"]
	if token || tokenEnv {
		m.remove("bearerToken")
		m.remove("bearerTokenEnv")
	}
	for k, v := range fields {
		if k == "timeout" {
			k = "requestTimeoutMs" // the synonym is stored under one name
		}
		m.fields[k] = v
		m.from[k] = l
	}
}

func (m *mergedServer) remove(f string) {
	delete(m.fields, f)
	delete(m.from, f)
}

// endpointChange reports whether fields set an endpoint other than the one
// merged so far (or set one where there was none, so that credentials
// written without an endpoint never attach to one chosen elsewhere), and
// whether the transport kind changes too.
func (m *mergedServer) endpointChange(fields map[string]json.RawMessage) (changed, kindChanged bool) {
	newKind, oldKind := "", ""
	for _, f := range endpointFields {
		if _, ok := fields[f]; ok {
			newKind = f
		}
		if _, ok := m.fields[f]; ok {
			oldKind = f
		}
	}
	if newKind == "" {
		return false, false
	}
	if oldKind != newKind {
		return true, oldKind != ""
	}
	return !sameString(fields[newKind], m.fields[oldKind]), false
}

func sameString(a, b json.RawMessage) bool {
	var x, y string
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return x == y
}

// build turns a merged server into a Server, or reports why it cannot run.
func (m *mergedServer) build() (Server, []Issue) {
	top := m.highest()
	if len(m.invalid) > 0 {
		bad := m.invalid[len(m.invalid)-1]
		var others []string
		for _, l := range m.files {
			if l != bad && !containsLayer(m.invalid, l) {
				others = append(others, displayPath(l.path))
			}
		}
		if len(others) == 0 {
			return Server{}, nil // the entry's own issues say it all
		}
		return Server{}, []Issue{{File: bad.path, Server: m.name, Message: fmt.Sprintf(
			"is not started: this file's entry for it is invalid, which also masks its definition in %s", strings.Join(others, ", "))}}
	}
	s, issues := parseEntry(m.fields, top.path, m.name)
	if len(issues) > 0 {
		return Server{}, issues
	}
	if issues := checkEntry(&s, top.path, len(m.files) > 1); len(issues) > 0 {
		return Server{}, issues
	}
	s.Provenance = map[string]string{}
	for k, l := range m.from {
		s.Provenance[k] = l.path
	}
	return s, nil
}

func containsLayer(ls []*layer, l *layer) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// displayPath names a file in a diagnostic ("in-memory configuration" for
// none).
func displayPath(p string) string {
	if p == "" {
		return "the in-memory configuration"
	}
	return p
}

// mergeSettings folds the layers' settings key by key (a higher layer's
// key replaces a lower one's), remembering where each came from.
func mergeSettings(layers []*layer) (map[string]json.RawMessage, map[string]string) {
	raw, from := map[string]json.RawMessage{}, map[string]string{}
	for _, l := range layers {
		for _, m := range l.settings {
			raw[m.key], from[m.key] = m.value, l.path
		}
	}
	return raw, from
}

// mergeImports unions the layers' imports in order of first mention,
// reporting names that are not hosts mcprt can import.
func mergeImports(layers []*layer) ([]string, []Issue) {
	var out []string
	var issues []Issue
	seen := map[string]bool{}
	for _, l := range layers {
		for i, name := range l.imports {
			if !knownHost(name) {
				issues = append(issues, Issue{File: l.path, Field: fmt.Sprintf("imports[%d]", i+1),
					Message: "is not a host mcprt can import (ignored; use " + orList(HostKinds) + ")"})
				continue
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, issues
}
