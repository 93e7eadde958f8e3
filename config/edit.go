package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// The edits below compute a file's new content; config writes nothing. They
// keep comments and every other field, and change only what they say.

// ErrUnknownServer reports a server name no configuration file declares.
var ErrUnknownServer = errors.New("config: no such server")

// SetDisabled returns data (a configuration file, possibly empty) with the
// disabled field of server name set to *v, or removed when v is nil (and
// the entry with it, when nothing else is left in it).
func SetDisabled(data []byte, name string, v *bool) ([]byte, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("config: %s", nameRule)
	}
	root, err := editable(data)
	if err != nil {
		return nil, err
	}
	entry := "/mcpServers/" + pointerToken(name)
	if v == nil {
		if root.Find(entry+"/disabled") != nil {
			if err := patch(&root, op{"remove", entry + "/disabled", nil}); err != nil {
				return nil, err
			}
		}
		if e := root.Find(entry); e != nil {
			if obj, ok := e.Value.(*hujson.Object); ok && len(obj.Members) == 0 {
				if err := patch(&root, op{"remove", entry, nil}); err != nil {
					return nil, err
				}
			}
		}
	} else {
		if err := ensureObject(&root, "/mcpServers"); err != nil {
			return nil, err
		}
		if err := ensureObject(&root, entry); err != nil {
			return nil, err
		}
		if err := patch(&root, op{"add", entry + "/disabled", *v}); err != nil {
			return nil, err
		}
	}
	root.Format()
	return root.Pack(), nil
}

// AddImports returns data (a configuration file, possibly empty) with the
// given hosts appended to its imports list (those not listed yet).
func AddImports(data []byte, kinds []string) ([]byte, error) {
	root, err := editable(data)
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if !knownHost(k) {
			return nil, fmt.Errorf("config: not a host mcprt can import (use %s)", orList(HostKinds))
		}
	}
	var have []string
	if v := root.Find("/imports"); v != nil {
		if json.Unmarshal(v.Pack(), &have) != nil {
			return nil, errors.New("config: the file's imports is not a list of host names")
		}
	} else if err := patch(&root, op{"add", "/imports", []string{}}); err != nil {
		return nil, err
	}
	for _, k := range kinds {
		present := false
		for _, h := range have {
			present = present || h == k
		}
		if !present {
			if err := patch(&root, op{"add", "/imports/-", k}); err != nil {
				return nil, err
			}
			have = append(have, k)
		}
	}
	root.Format()
	return root.Pack(), nil
}

// editable parses a file for editing: an empty file is an empty object;
// anything that is not a JSON object (with comments) is refused, so a
// broken file is never overwritten.
func editable(data []byte) (hujson.Value, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if len(data) > MaxFileSize {
		return hujson.Value{}, fmt.Errorf("%w: the file is larger than %d KiB", ErrLimit, MaxFileSize>>10)
	}
	v, err := hujson.Parse(append([]byte(nil), data...))
	if err != nil {
		if m := lineCol().FindStringSubmatch(err.Error()); m != nil {
			return hujson.Value{}, fmt.Errorf("%w: invalid JSON at line %s, column %s; fix the file first", ErrSyntax, m[1], m[2])
		}
		return hujson.Value{}, fmt.Errorf("%w: not valid JSON; fix the file first", ErrSyntax)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return hujson.Value{}, fmt.Errorf("%w: the file must hold a JSON object; fix the file first", ErrSyntax)
	}
	return v, nil
}

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func patch(v *hujson.Value, o op) error {
	b, err := json.Marshal([]op{o})
	if err != nil {
		return err
	}
	if o.Op == "add" && o.Value == nil {
		return errors.New("config: internal: add without a value")
	}
	if err := v.Patch(b); err != nil {
		return fmt.Errorf("%w: the file cannot be edited at %s", ErrSyntax, o.Path)
	}
	return nil
}

// ensureObject adds an empty object at path when nothing is there, and
// refuses to edit through anything that is not an object.
func ensureObject(v *hujson.Value, path string) error {
	found := v.Find(path)
	if found == nil {
		return patch(v, op{"add", path, map[string]any{}})
	}
	if _, ok := found.Value.(*hujson.Object); !ok {
		return fmt.Errorf("%w: %s is not an object; fix the file first", ErrSyntax, path)
	}
	return nil
}

// pointerToken escapes a name as one JSON Pointer reference token (RFC
// 6901): "~" as "~0", "/" as "~1" (a server may be named "org/repo").
func pointerToken(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}
