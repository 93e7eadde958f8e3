package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Sources says where configuration comes from and what it may consult.
// Load reads files and calls LookupEnv; it has no other input.
type Sources struct {
	// Path, when set, is the only file read (--config FILE).
	Path string
	// Inline, when set, is an isolated in-memory configuration: no file is
	// read and nothing is merged into it.
	Inline *File
	// WorkDir is the project directory: .mcp.json and .mcprt/mcp.json are
	// looked up there, and relative in-memory paths resolve from it.
	WorkDir string
	// AgentDir holds the agent-dir file mcp.json ("" to skip it).
	AgentDir string
	// Home is the user's home directory ("" to skip every file under it).
	Home string
	// LookupEnv reads environment variables for interpolation,
	// bearerTokenEnv and the hosts' own locations (CODEX_HOME,
	// XDG_CONFIG_HOME, APPDATA); nil means an empty environment.
	LookupEnv func(string) (string, bool)
}

func (src Sources) lookup(k string) (string, bool) {
	if src.LookupEnv == nil {
		return "", false
	}
	return src.LookupEnv(k)
}

// Effective is the configuration the runtime runs with.
type Effective struct {
	// Servers are the usable servers in order of first appearance (lowest
	// layer first), disabled ones included (marked Disabled).
	Servers []Server
	// Settings are the merged file-wide defaults; SettingsProvenance maps
	// each setting to the file it came from.
	Settings           Settings
	SettingsProvenance map[string]string
	// Imports is the union of every file's imports.
	Imports []string
	// Issues are the problems: entries dropped and why, fields and settings
	// ignored, servers that cannot connect as configured.
	Issues []Issue
	// Notices are informational: what a lenient host import left out,
	// imports an explicit configuration does not follow.
	Notices []Issue
	// Sources lists every place looked at, lowest precedence first.
	Sources []SourceFile
}

// SourceFile is one place Load looked at.
type SourceFile struct {
	// Path is the file ("" for in-memory configuration).
	Path string `json:"path"`
	// Scope says what the file is: "user", "agent-dir", "project",
	// "project-override", "explicit", "in-memory", or "import:HOST".
	Scope string `json:"scope"`
	// Found reports whether the file exists (and was read).
	Found bool `json:"found"`
}

// Files returns the files that were read, lowest precedence first.
func (e *Effective) Files() []string {
	var out []string
	for _, s := range e.Sources {
		if s.Found && s.Path != "" {
			out = append(out, s.Path)
		}
	}
	return out
}

// Server returns the effective server of that name.
func (e *Effective) Server(name string) (Server, bool) {
	for _, s := range e.Servers {
		if s.Name == name {
			return s.clone(), true
		}
	}
	return Server{}, false
}

// ErrNotFound reports an explicit configuration file that does not exist.
var ErrNotFound = errors.New("config: file not found")

// ErrLimit reports a configuration over one of the documented limits.
var ErrLimit = errors.New("config: limit exceeded")

// NativeFiles returns the standard files in precedence order, lowest
// first, with their scopes: ~/.config/mcp/mcp.json, ~/.agents/mcp.json,
// ~/.agents/mcp/mcp.json, <agentDir>/mcp.json, .mcp.json and
// .mcprt/mcp.json in the working directory. A path listed twice (an agent
// dir pointed at a project) is kept at its highest rank only.
func NativeFiles(src Sources) []SourceFile {
	var out []SourceFile
	add := func(path, scope string) {
		if path == "" {
			return
		}
		path = filepath.Clean(path)
		for i, f := range out {
			if f.Path == path {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, SourceFile{Path: path, Scope: scope})
	}
	if src.Home != "" {
		add(filepath.Join(src.Home, ".config", "mcp", "mcp.json"), "user")
		add(filepath.Join(src.Home, ".agents", "mcp.json"), "user")
		add(filepath.Join(src.Home, ".agents", "mcp", "mcp.json"), "user")
	}
	if src.AgentDir != "" {
		add(filepath.Join(src.AgentDir, "mcp.json"), "agent-dir")
	}
	add(filepath.Join(workDir(src), ".mcp.json"), "project")
	add(OverridePath(src), "project-override")
	return out
}

// OverridePath is the project override file, .mcprt/mcp.json in the
// working directory: the only file enable and disable write.
func OverridePath(src Sources) string { return filepath.Join(workDir(src), ".mcprt", "mcp.json") }

func workDir(src Sources) string {
	if src.WorkDir == "" {
		return "."
	}
	return src.WorkDir
}

// Load builds the effective configuration. Its error is fatal for the
// whole configuration: an explicit file missing, or any file that cannot
// be read or parsed at all (a broken override may have been the one
// disabling a server, so no server from the standard files starts), or a
// limit exceeded. Problems with single entries are Issues instead, and
// never hide servers of other names.
func Load(src Sources) (*Effective, error) {
	eff := &Effective{}
	var layers []*layer
	switch {
	case src.Inline != nil:
		l, issues := inlineLayer(src.Inline.Clone(), workDir(src))
		layers, eff.Issues = []*layer{l}, issues
		eff.Sources = []SourceFile{{Scope: "in-memory", Found: true}}
		if len(src.Inline.Imports) > 0 {
			eff.Notices = append(eff.Notices, Issue{Field: "imports", Message: "is not followed: in-memory configuration is isolated from every file"})
		}
	case src.Path != "":
		data, err := readLimited(src.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, src.Path)
		} else if err != nil {
			return nil, err
		}
		l, issues, err := parseLayer(data, src.Path, filepath.Dir(src.Path))
		if err != nil {
			return nil, err
		}
		layers, eff.Issues = []*layer{&l}, issues
		eff.Sources = []SourceFile{{Path: src.Path, Scope: "explicit", Found: true}}
		if len(l.imports) > 0 {
			eff.Notices = append(eff.Notices, Issue{File: src.Path, Field: "imports", Message: "is not followed: --config reads only this file"})
		}
	default:
		var err error
		if layers, err = loadNative(src, eff, ""); err != nil {
			return nil, err
		}
	}
	finish(eff, layers, src)
	enabled := 0
	for _, s := range eff.Servers {
		if !s.Disabled {
			enabled++
		}
	}
	if enabled > MaxEnabledServers {
		return nil, fmt.Errorf("%w: %d servers are enabled, more than %d; disable some (runtime disable NAME)", ErrLimit, enabled, MaxEnabledServers)
	}
	return eff, nil
}

// loadNative reads the standard files (but skip), then the hosts their
// imports name (which rank below every standard file).
func loadNative(src Sources, eff *Effective, skip string) ([]*layer, error) {
	var native []*layer
	var sources []SourceFile
	for _, f := range NativeFiles(src) {
		if f.Path == skip {
			continue
		}
		data, err := readLimited(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			sources = append(sources, f)
			continue
		}
		if err != nil {
			return nil, err
		}
		l, issues, err := parseLayer(data, f.Path, filepath.Dir(f.Path))
		if err != nil {
			return nil, err
		}
		f.Found = true
		sources = append(sources, f)
		native = append(native, &l)
		eff.Issues = append(eff.Issues, issues...)
	}
	imports, issues := mergeImports(native)
	eff.Issues = append(eff.Issues, issues...)
	var layers []*layer
	env := hostEnv{home: src.Home, workDir: workDir(src), lookup: src.lookup}
	for _, kind := range imports {
		hl := env.read(kind)
		for _, f := range hl.files {
			eff.Sources = append(eff.Sources, SourceFile{Path: f.path, Scope: "import:" + kind, Found: f.found})
		}
		layers = append(layers, hl.layers...)
		eff.Issues = append(eff.Issues, hl.issues...)
		eff.Notices = append(eff.Notices, hl.notices...)
	}
	eff.Sources = append(eff.Sources, sources...)
	return append(layers, native...), nil
}

// finish merges the layers into eff: servers built and resolved, settings
// and imports merged.
func finish(eff *Effective, layers []*layer, src Sources) {
	order, merged := merge(layers)
	for _, name := range order {
		s, issues := merged[name].build()
		eff.Issues = append(eff.Issues, issues...)
		if issues != nil || len(merged[name].invalid) > 0 {
			continue
		}
		eff.Issues = append(eff.Issues, s.warnings...)
		ep, issues := resolve(&s, src.lookup, src.Home, workDir(src))
		s.endpoint = &ep
		if !s.Disabled { // a disabled server never connects: its problems are not news
			eff.Issues = append(eff.Issues, issues...)
		}
		eff.Servers = append(eff.Servers, s)
	}
	raw, from := mergeSettings(layers)
	set, issues, notices := parseSettings(raw, from)
	eff.Settings, eff.SettingsProvenance = set, from
	eff.Issues, eff.Notices = append(eff.Issues, issues...), append(eff.Notices, notices...)
	eff.Issues = append(eff.Issues, prefixCollisions(eff.Servers, set.ToolPrefix)...)
	if src.Inline == nil && src.Path == "" {
		eff.Imports, _ = mergeImports(layers)
	}
}

// readLimited reads a file of at most MaxFileSize bytes. Its errors name
// the file, never its content.
func readLimited(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("config: %s: cannot be read", path)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("config: %s: is a directory, not a file", path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %s: cannot be read", path)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s: larger than %d KiB", ErrLimit, path, MaxFileSize>>10)
	}
	return data, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
