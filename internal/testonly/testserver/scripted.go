package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// Script is what a --script file holds: a catalog served exactly as
// written (hostile names, duplicates, invalid schemas and control
// characters included, which mcp-go's own server would not serve), and the
// answers to calls, reads and prompt requests. With a script, tools/list,
// resources/list, resources/templates/list, prompts/list, tools/call,
// resources/read and prompts/get are answered from it alone.
type Script struct {
	Tools             []json.RawMessage `json:"tools"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	Prompts           []json.RawMessage `json:"prompts"`
	// Calls maps a tool's name to its tools/call result; a tool without
	// one answers the text "NAME called with ARGS".
	Calls map[string]json.RawMessage `json:"calls"`
	// Reads maps a URI to its resources/read result; any other URI answers
	// one text item "read URI".
	Reads map[string]json.RawMessage `json:"reads"`
	// Gets maps a prompt's name to its prompts/get result; any other
	// prompt answers one user message "prompt NAME with ARGS".
	Gets map[string]json.RawMessage `json:"gets"`
}

// WriteScript writes s to a file for --script.
func WriteScript(path string, s Script) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// loadScript reads a --script file.
func loadScript(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("--script %s: %w", path, err)
	}
	return &s, nil
}

// methods returns the handlers that serve the script.
func (s *Script) methods() mcpline.Methods {
	list := func(key string, items []json.RawMessage) mcpline.Handler {
		return func(context.Context, *mcpline.Call) (any, error) {
			if items == nil {
				items = []json.RawMessage{}
			}
			return map[string]any{key: items}, nil
		}
	}
	var params struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
	}
	decode := func(c *mcpline.Call) (name, uri, args string) {
		p := params
		_ = json.Unmarshal(c.Params(), &p)
		return p.Name, p.URI, string(p.Arguments)
	}
	text := func(s string) json.RawMessage {
		b, _ := json.Marshal(s)
		return b
	}
	return mcpline.Methods{
		"tools/list":               list("tools", s.Tools),
		"resources/list":           list("resources", s.Resources),
		"resources/templates/list": list("resourceTemplates", s.ResourceTemplates),
		"prompts/list":             list("prompts", s.Prompts),
		"tools/call": func(_ context.Context, c *mcpline.Call) (any, error) {
			name, _, args := decode(c)
			if r, ok := s.Calls[name]; ok {
				return r, nil
			}
			return json.RawMessage(`{"content":[{"type":"text","text":` + string(text(name+" called with "+args)) + `}]}`), nil
		},
		"resources/read": func(_ context.Context, c *mcpline.Call) (any, error) {
			_, uri, _ := decode(c)
			if r, ok := s.Reads[uri]; ok {
				return r, nil
			}
			return json.RawMessage(`{"contents":[{"uri":` + string(text(uri)) + `,"mimeType":"text/plain","text":` + string(text("read "+uri)) + `}]}`), nil
		},
		"prompts/get": func(_ context.Context, c *mcpline.Call) (any, error) {
			name, _, args := decode(c)
			if r, ok := s.Gets[name]; ok {
				return r, nil
			}
			return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":` + string(text("prompt "+name+" with "+args)) + `}}]}`), nil
		},
	}
}
