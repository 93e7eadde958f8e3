package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxFileSize bounds a configuration file.
const MaxFileSize = 256 << 10

// Sources says where configuration comes from.
type Sources struct {
	// Path, when set, is the only file read (--config FILE).
	Path string
	// WorkDir is where .mcp.json is looked up ("" = the process's).
	WorkDir string
	// Inline, when set, is an isolated in-memory configuration: no file is
	// read and nothing is merged into it.
	Inline *File
}

// Effective is the configuration the runtime runs with.
type Effective struct {
	// Servers are the usable entries, in file order (disabled ones included,
	// marked Disabled).
	Servers []Server
	// Settings are the file-wide defaults.
	Settings Settings
	// Issues are the entries (and fields) that were dropped, and why.
	Issues []Issue
	// Files are the files that were read, in precedence order.
	Files []string
}

// ErrNotFound reports an explicit configuration file that does not exist.
var ErrNotFound = errors.New("config: file not found")

// Load builds the effective configuration. Its error is fatal for the
// whole configuration (an explicit file missing or unreadable, a file that
// is not JSON); problems with single entries are Issues instead.
func Load(src Sources) (*Effective, error) {
	if src.Inline != nil {
		f := src.Inline.Clone()
		eff := &Effective{Settings: f.Settings}
		for _, name := range f.Names() {
			s := f.MCPServers[name]
			s.Name = name
			if !namePattern.MatchString(name) {
				eff.Issues = append(eff.Issues, Issue{Server: name, Message: "invalid server name"})
				continue
			}
			raw, _ := marshalEntry(s)
			parsed, issues := parseEntry(raw, "", name)
			if len(issues) > 0 {
				eff.Issues = append(eff.Issues, issues...)
				continue
			}
			eff.Servers = append(eff.Servers, parsed)
		}
		return eff, nil
	}
	path := src.Path
	explicit := path != ""
	if !explicit {
		dir := src.WorkDir
		if dir == "" {
			dir = "."
		}
		path = filepath.Join(dir, ".mcp.json")
	}
	data, err := readLimited(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return &Effective{}, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", ErrNotFound, path)
	case err != nil:
		return nil, err
	}
	f, issues, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	eff := &Effective{Settings: f.Settings, Issues: issues, Files: []string{path}}
	for _, name := range f.Order {
		eff.Servers = append(eff.Servers, f.MCPServers[name])
	}
	return eff, nil
}

func readLimited(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("config: %s: cannot be read", path)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %s: cannot be read", path)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("config: %s: larger than %d KiB", path, MaxFileSize>>10)
	}
	return data, nil
}

// marshalEntry renders an in-memory Server as the JSON entry a file would
// hold, so both go through the same validation.
func marshalEntry(s Server) (json.RawMessage, error) {
	s.Name, s.Source = "", ""
	return json.Marshal(s)
}
