package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tailscale/hujson"
)

// ErrServerExists reports an add for a name the file already declares.
var ErrServerExists = errors.New("config: the file already declares a server of that name")

// AddTarget is the file "runtime config add" writes: the project's
// .mcp.json (scope "project", the default: shared with every host that
// reads it) or the user file ~/.config/mcp/mcp.json (scope "user").
func AddTarget(src Sources, scope string) (string, error) {
	switch scope {
	case "", "project":
		return filepath.Join(workDir(src), ".mcp.json"), nil
	case "user":
		if src.Home == "" {
			return "", errors.New("config: the home directory is unknown")
		}
		return filepath.Join(src.Home, ".config", "mcp", "mcp.json"), nil
	}
	return "", fmt.Errorf("config: unknown scope %q (use project or user)", scope)
}

// AddServer returns data (a configuration file, possibly empty) with the
// server entry name set to entry, keeping the file's comments and every
// other entry. An existing entry of that name is refused unless replace
// is set. The new entry is checked as Parse checks it: an entry that would
// be invalid is refused with its issue, and nothing is written.
func AddServer(data []byte, name string, entry map[string]any, replace bool) ([]byte, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("config: %s", nameRule)
	}
	root, err := editable(data)
	if err != nil {
		return nil, err
	}
	if err := ensureObject(&root, "/mcpServers"); err != nil {
		return nil, err
	}
	path := "/mcpServers/" + pointerToken(name)
	if root.Find(path) != nil {
		if !replace {
			return nil, ErrServerExists
		}
		if err := patch(&root, op{"remove", path, nil}); err != nil {
			return nil, err
		}
	}
	if err := patch(&root, op{"add", path, entry}); err != nil {
		return nil, err
	}
	out := formatKeepingJSON(root, data)
	f, issues, err := Parse(out, "")
	if err != nil {
		return nil, err
	}
	for _, is := range issues {
		if is.Server == name {
			is.File = ""
			return nil, errors.New("config: " + is.String())
		}
	}
	if _, ok := f.MCPServers[name]; !ok {
		return nil, errors.New("config: the new entry would not be usable")
	}
	return out, nil
}

// RemoveServer returns data without the server entry name, keeping the
// file's comments and every other entry; removed says whether the file
// declared it.
func RemoveServer(data []byte, name string) (out []byte, removed bool, err error) {
	if !ValidName(name) {
		return nil, false, fmt.Errorf("config: %s", nameRule)
	}
	root, err := editable(data)
	if err != nil {
		return nil, false, err
	}
	path := "/mcpServers/" + pointerToken(name)
	if root.Find(path) == nil {
		return data, false, nil
	}
	if err := patch(&root, op{"remove", path, nil}); err != nil {
		return nil, false, err
	}
	return formatKeepingJSON(root, data), true, nil
}

// Declaring lists the files that declare a server named name, lowest
// precedence first: mcprt's standard files (which `config remove` edits)
// and, separately, other hosts' imported files (which mcprt never edits).
func Declaring(src Sources, name string) (own, hosts []string, err error) {
	eff := &Effective{}
	layers, err := loadNative(src, eff, "")
	if err != nil {
		return nil, nil, err
	}
	for _, l := range layers {
		for _, e := range l.entries {
			if e.name != name {
				continue
			}
			if isNativeScope(l.path, src) {
				own = append(own, l.path)
			} else {
				hosts = append(hosts, l.path)
			}
			break
		}
	}
	return own, hosts, nil
}

// formatKeepingJSON formats an edited file. A file other hosts read too
// (.mcp.json) must stay plain JSON when it was: hujson's formatting adds
// trailing commas, which strict JSON readers refuse, so a file that had
// none (no comments, no trailing commas) is written as standard JSON,
// indented; a file with comments keeps them.
func formatKeepingJSON(root hujson.Value, original []byte) []byte {
	root.Format()
	out := root.Pack()
	if len(bytes.TrimSpace(original)) == 0 || json.Valid(original) {
		std, err := hujson.Standardize(out)
		if err == nil {
			var buf bytes.Buffer
			if json.Indent(&buf, compactJSON(std), "", "  ") == nil {
				return append(buf.Bytes(), '\n')
			}
		}
	}
	return out
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
