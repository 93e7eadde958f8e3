package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// HostReport is what "runtime config detect" says about one host.
type HostReport struct {
	// Kind is the host's import name (cursor, codex, ...).
	Kind string `json:"kind"`
	// Imported reports whether some file's imports already lists it.
	Imported bool `json:"imported"`
	// Files are the host's files that exist.
	Files []HostFileReport `json:"files"`
}

// HostFileReport is one host file found.
type HostFileReport struct {
	Path string `json:"path"`
	// Scope is "" or, for a host that keeps several server lists in one
	// file, which list this is (Claude Code's per-project list).
	Scope string `json:"scope,omitempty"`
	// New are the servers importing it would add; Present are those a
	// standard file already declares (which win over the import).
	New     []string `json:"new"`
	Present []string `json:"present"`
	// Problem says why the file cannot be imported, if so.
	Problem string `json:"problem,omitempty"`
	// Skipped are the servers of the file importing it would not add, each
	// with why (an entry the strict checks refuse, a variable only that
	// host can resolve, a definition masked by an invalid one): what
	// detect says is what the import does.
	Skipped []SkippedServer `json:"skipped"`
}

// SkippedServer is a host server an import would leave out, and why.
type SkippedServer struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Adds reports whether importing the host would add a server.
func (h HostReport) Adds() bool {
	for _, f := range h.Files {
		if len(f.New) > 0 {
			return true
		}
	}
	return false
}

// Detect looks for every host's configuration files and reports which
// servers each would add. It reads files only; it runs nothing and writes
// nothing.
func Detect(src Sources) ([]HostReport, error) {
	eff := &Effective{}
	layers, err := loadNative(src, eff, "")
	if err != nil {
		return nil, err
	}
	native := map[string]bool{}
	var nativeLayers []*layer
	for _, l := range layers {
		if isNativeScope(l.path, src) {
			nativeLayers = append(nativeLayers, l)
			for _, e := range l.entries {
				native[e.name] = e.name != ""
			}
		}
	}
	imported, _ := mergeImports(nativeLayers)
	env := hostEnv{home: src.Home, workDir: workDir(src), lookup: src.lookup}
	var out []HostReport
	for _, kind := range HostKinds {
		rep := HostReport{Kind: kind, Imported: contains(imported, kind)}
		hl := env.read(kind)
		refused := importRefusals(hl, nativeLayers)
		for i, f := range hl.files {
			if !f.found {
				continue
			}
			fr := HostFileReport{Path: f.path, New: []string{}, Present: []string{}, Skipped: []SkippedServer{}}
			if len(f.keys) > 1 && f.keys[0] == "projects" {
				fr.Scope = "project " + f.keys[1]
			}
			l, ok := hl.parsed[i]
			if !ok {
				fr.Problem = problemOf(hl.issues, f.path)
			} else {
				for _, e := range l.entries {
					switch {
					case e.name == "":
					case native[e.name]:
						fr.Present = append(fr.Present, e.name)
					case refused[e.name] != "":
						fr.Skipped = append(fr.Skipped, SkippedServer{Name: e.name, Reason: refused[e.name]})
					default:
						fr.New = append(fr.New, e.name)
					}
				}
				if len(l.entries) == 0 && fr.Scope != "" {
					continue // no list for this project: nothing to say
				}
			}
			rep.Files = append(rep.Files, fr)
		}
		if len(rep.Files) > 0 {
			out = append(out, rep)
		}
	}
	return out, nil
}

// importRefusals merges a host's layers under the standard files, as
// importing it would, and returns, by name, why each of its servers would
// not be added ("" for none).
func importRefusals(hl hostLayers, native []*layer) map[string]string {
	out := map[string]string{}
	_, merged := merge(append(append([]*layer{}, hl.layers...), native...))
	for name, m := range merged {
		_, issues := m.build()
		if issues == nil && len(m.invalid) == 0 {
			continue
		}
		reason := "its entry is invalid (runtime config show says why)"
		for _, is := range append(issues, hl.issues...) {
			if is.Server == name {
				reason = strings.TrimPrefix(is.String(), is.File+": server "+quoteName(name)+": ")
				break
			}
		}
		out[name] = reason
	}
	return out
}

func isNativeScope(path string, src Sources) bool {
	for _, f := range NativeFiles(src) {
		if f.Path == path {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func problemOf(issues []Issue, path string) string {
	for _, is := range issues {
		if is.File == path && is.Server == "" {
			return is.Message
		}
	}
	return "cannot be imported"
}

// AgentFile is the agent-dir configuration file, the only file "config
// detect --write" edits.
func AgentFile(src Sources) string {
	if src.AgentDir == "" {
		return ""
	}
	return filepath.Join(src.AgentDir, "mcp.json")
}

// PlanImports returns the agent-dir file's path and its new content with
// kinds added to its imports list. current is the file's content (nil when
// it does not exist yet).
func PlanImports(src Sources, current []byte, kinds []string) (string, []byte, error) {
	path := AgentFile(src)
	if path == "" {
		return "", nil, errors.New("config: no agent directory (set MCPRT_AGENT_DIR or HOME)")
	}
	data, err := AddImports(current, kinds)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return path, data, nil
}

// ErrNotFromFiles reports an edit asked for configuration that does not
// come from the standard files.
var ErrNotFromFiles = errors.New("config: enable and disable edit the project override .mcprt/mcp.json, which an explicit or in-memory configuration does not read")

// PlanToggle computes the project override's new content for "runtime
// disable NAME" (disable true) or "runtime enable NAME": only the server's
// disabled field changes. Disabling writes true. Enabling removes the
// override's flag when the lower files leave the server enabled, and writes
// false when one of them disables it. current is the override's content
// (nil when it does not exist yet). It returns the override's path, its
// new content, and whether the server is now disabled.
func PlanToggle(src Sources, current []byte, name string, disable bool) (string, []byte, error) {
	if src.Inline != nil || src.Path != "" {
		return "", nil, ErrNotFromFiles
	}
	if !ValidName(name) {
		return "", nil, fmt.Errorf("%w: %s", ErrUnknownServer, nameRule)
	}
	path := OverridePath(src)
	layers, err := loadNative(src, &Effective{}, path)
	if err != nil {
		return "", nil, err
	}
	known := false
	if len(current) > 0 {
		l, _, err := parseLayer(current, path, filepath.Dir(path))
		if err != nil {
			return "", nil, err
		}
		for _, e := range l.entries {
			known = known || e.name == name
		}
	}
	_, merged := merge(layers)
	m := merged[name]
	if m == nil && !known {
		return "", nil, fmt.Errorf("%w: no server of that name is configured", ErrUnknownServer)
	}
	var v *bool
	switch {
	case disable:
		v = ptr(true)
	case m != nil && lowerDisabled(m):
		v = ptr(false)
	}
	data, err := SetDisabled(current, name, v)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return path, data, nil
}

func ptr[T any](v T) *T { return &v }

// lowerDisabled reports whether the merged lower files disable the server.
func lowerDisabled(m *mergedServer) bool {
	var d bool
	return json.Unmarshal(m.fields["disabled"], &d) == nil && d
}
