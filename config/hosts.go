package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// HostKinds are the hosts whose configuration files "imports" can name.
var HostKinds = []string{"cursor", "claude-code", "claude-desktop", "opencode", "vscode", "windsurf", "codex"}

func knownHost(name string) bool {
	for _, k := range HostKinds {
		if k == name {
			return true
		}
	}
	return false
}

// MaxHostFileSize bounds a host's file: larger than MaxFileSize because
// some hosts keep other state in the same file (~/.claude.json).
const MaxHostFileSize = 8 << 20

// hostEnv is what locating and translating host files needs.
type hostEnv struct {
	home, workDir string
	lookup        func(string) (string, bool)
}

// hostFile is one file a host may use, and how to read it.
type hostFile struct {
	path  string
	found bool
	// format is "json" (with comments), "toml" (Codex) or "opencode".
	format string
	// keys is the path of the server object inside the root.
	keys []string
	// vars is how the host writes variables: "vscode" (${env:X},
	// ${workspaceFolder}, ...), "shell" (${X}, ${X:-d}) or "" (none: values
	// are literal).
	vars string
	// rename maps the host's field names to ours.
	rename map[string]string
	// home and workspace stand in for the host's ${userHome} and
	// ${workspaceFolder}.
	home, workspace string
}

// hostLayers is what one import contributes.
type hostLayers struct {
	files           []hostFile
	layers          []*layer
	issues, notices []Issue
	// parsed pairs each found, usable file with its layer.
	parsed map[int]*layer
}

func (e hostEnv) env(k string) string {
	if e.lookup == nil {
		return ""
	}
	v, _ := e.lookup(k)
	return v
}

// configHome is $XDG_CONFIG_HOME, else ~/.config.
func (e hostEnv) configHome() string {
	if v := e.env("XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		return v
	}
	return e.inHome(".config")
}

func (e hostEnv) inHome(parts ...string) string {
	if e.home == "" {
		return ""
	}
	return filepath.Join(append([]string{e.home}, parts...)...)
}

// files lists a host's files, lowest precedence first (a project's file
// above the user's).
func (e hostEnv) files(kind string) []hostFile {
	std := func(path string, keys ...string) hostFile {
		return hostFile{path: path, format: "json", keys: keys, vars: "vscode"}
	}
	var out []hostFile
	switch kind {
	case "cursor":
		out = []hostFile{std(e.inHome(".cursor", "mcp.json"), "mcpServers"), std(filepath.Join(e.workDir, ".cursor", "mcp.json"), "mcpServers")}
	case "claude-code":
		shell := func(path string, keys ...string) hostFile {
			return hostFile{path: path, format: "json", keys: keys, vars: "shell"}
		}
		out = []hostFile{shell(e.inHome(".claude", "claude_desktop_config.json"), "mcpServers"), shell(e.inHome(".claude", "mcp.json"), "mcpServers"),
			shell(e.inHome(".claude.json"), "mcpServers"), shell(e.inHome(".claude.json"), "projects", e.workDir, "mcpServers")}
	case "claude-desktop":
		lit := func(path string) hostFile { return hostFile{path: path, format: "json", keys: []string{"mcpServers"}} }
		out = []hostFile{lit(e.inHome("Library", "Application Support", "Claude", "claude_desktop_config.json")),
			lit(filepath.Join(e.configHome(), "Claude", "claude_desktop_config.json"))}
		if app := e.env("APPDATA"); filepath.IsAbs(app) {
			out = append(out, lit(filepath.Join(app, "Claude", "claude_desktop_config.json")))
		}
	case "vscode":
		users := []string{filepath.Join(e.configHome(), "Code", "User"), e.inHome("Library", "Application Support", "Code", "User")}
		if app := e.env("APPDATA"); filepath.IsAbs(app) {
			users = append(users, filepath.Join(app, "Code", "User"))
		}
		for _, u := range users {
			out = append(out, std(filepath.Join(u, "settings.json"), "mcp", "servers"), std(filepath.Join(u, "mcp.json"), "servers"))
		}
		out = append(out, std(filepath.Join(e.workDir, ".vscode", "mcp.json"), "servers"))
	case "windsurf":
		ws := func(path string) hostFile {
			f := std(path, "mcpServers")
			f.rename = map[string]string{"serverUrl": "url"}
			return f
		}
		out = []hostFile{ws(e.inHome(".windsurf", "mcp.json")), ws(e.inHome(".codeium", "mcp_config.json")), ws(e.inHome(".codeium", "windsurf", "mcp_config.json"))}
	case "opencode":
		dir := filepath.Join(e.configHome(), "opencode")
		for _, n := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
			out = append(out, hostFile{path: filepath.Join(dir, n), format: "opencode", keys: []string{"mcp"}})
		}
		for _, p := range e.opencodeProject() {
			out = append(out, hostFile{path: p, format: "opencode", keys: []string{"mcp"}})
		}
	case "codex":
		home := e.env("CODEX_HOME")
		if !filepath.IsAbs(home) {
			home = e.inHome(".codex")
		}
		if home != "" {
			out = append(out, hostFile{path: filepath.Join(home, "config.toml"), format: "toml"})
		}
		out = append(out, hostFile{path: filepath.Join(e.workDir, ".codex", "config.toml"), format: "toml"})
	}
	kept := out[:0]
	for _, f := range out {
		if f.path != "" && filepath.IsAbs(f.path) {
			f.home, f.workspace = e.home, e.workDir
			kept = append(kept, f)
		}
	}
	return kept
}

// opencodeProject finds the project's opencode.json (or .jsonc): the
// nearest one from the working directory up to the git root (only the
// working directory itself outside a git repository).
func (e hostEnv) opencodeProject() []string {
	top := e.workDir
	for dir := e.workDir; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			top = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	for dir := e.workDir; ; dir = filepath.Dir(dir) {
		for _, n := range []string{"opencode.json", "opencode.jsonc"} {
			if st, err := os.Stat(filepath.Join(dir, n)); err == nil && !st.IsDir() {
				return []string{filepath.Join(dir, n)}
			}
		}
		if dir == top || filepath.Dir(dir) == dir {
			return nil
		}
	}
}

// read reads every file of one host into layers. Nothing here is fatal: a
// host file that cannot be used is reported and skipped.
func (e hostEnv) read(kind string) hostLayers {
	out := hostLayers{parsed: map[int]*layer{}}
	for _, f := range e.files(kind) {
		data, err := readHostFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			out.files = append(out.files, f)
			continue
		}
		f.found = true
		out.files = append(out.files, f)
		if err == nil {
			var servers []hostServer
			if servers, err = e.hostServers(data, f); err == nil {
				out.addLayer(f, servers)
				continue
			}
		}
		out.issues = append(out.issues, Issue{File: f.path, Message: err.Error() + "; its servers are not imported"})
	}
	return out
}

// addLayer translates one host file's servers into a layer.
func (out *hostLayers) addLayer(f hostFile, servers []hostServer) {
	l := &layer{path: f.path, dir: filepath.Dir(f.path)}
	for i, hs := range servers {
		ent, issues, notices := hostEntry(f, i+1, hs)
		l.entries = append(l.entries, ent)
		out.issues, out.notices = append(out.issues, issues...), append(out.notices, notices...)
	}
	out.parsed[len(out.files)-1] = l
	out.layers = append(out.layers, l)
}

func readHostFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, errors.New("cannot be read")
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return nil, errors.New("is a directory")
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxHostFileSize+1))
	if err != nil {
		return nil, errors.New("cannot be read")
	}
	if len(data) > MaxHostFileSize {
		return nil, fmt.Errorf("is larger than %d MiB", MaxHostFileSize>>20)
	}
	return data, nil
}

// hostServer is one server of a host file, decoded generically.
type hostServer struct {
	name   string
	fields map[string]any
}

// hostServers finds the server object of a host file and decodes it.
func (e hostEnv) hostServers(data []byte, f hostFile) ([]hostServer, error) {
	if f.format == "toml" {
		return codexServers(data)
	}
	std, err := standardize(data, f.path)
	if err != nil {
		return nil, errors.New("is not valid JSON")
	}
	raw := json.RawMessage(std)
	for _, k := range f.keys {
		members, err := objectMembers(raw, 0)
		if err != nil {
			return nil, errors.New("does not hold a JSON object where the servers are expected")
		}
		raw = nil
		for _, m := range members {
			if m.key == k {
				raw = m.value
			}
		}
		if raw == nil {
			return nil, nil
		}
	}
	members, err := objectMembers(raw, 0)
	if err != nil {
		return nil, errors.New("its server list is not a JSON object")
	}
	out := make([]hostServer, 0, len(members))
	for _, m := range members {
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(m.value))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			v = nil
		}
		out = append(out, hostServer{name: m.key, fields: v})
	}
	return out, nil
}

// hostEntry translates one host server into an entry of ours: names
// kept as the host has them, fields renamed, host-only fields dropped with a notice,
// values made literal where the host does not interpolate. What remains is
// checked as strictly as a native entry.
func hostEntry(f hostFile, pos int, hs hostServer) (entry, []Issue, []Issue) {
	var notices []Issue
	name := hs.name // as the host names it: "GitHub" stays "GitHub"
	if !ValidName(name) {
		return entry{pos: pos, invalid: true}, []Issue{{File: f.path, Server: "#" + itoa(pos), Message: nameRule}}, nil
	}
	if hs.fields == nil {
		return entry{name: name, pos: pos, invalid: true}, []Issue{{File: f.path, Server: name, Message: "the entry must be a JSON object"}}, notices
	}
	var fields map[string]any
	var dropped []string
	var skip string
	switch f.format {
	case "opencode":
		fields, dropped, skip = translateOpenCode(hs.fields)
	case "toml":
		fields, dropped = translateCodex(hs.fields)
	default:
		fields, dropped, skip = translateJSONHost(hs.fields, f)
	}
	if skip != "" {
		return entry{name: name, pos: pos, invalid: true}, []Issue{{File: f.path, Server: name, Message: skip + "; the server is not imported"}}, notices
	}
	sort.Strings(dropped)
	for _, d := range dropped {
		notices = append(notices, Issue{File: f.path, Server: name, Field: fieldLabel(d), Message: "is specific to that host and ignored"})
	}
	raw := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		raw[k] = b
	}
	_, issues := parseEntry(raw, f.path, name)
	return entry{name: name, pos: pos, fields: raw, invalid: len(issues) > 0}, issues, notices
}
