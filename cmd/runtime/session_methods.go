package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/mcprt/mcprt/messages"
)

// sessionMethod answers one {"id", "method", "params"} line of the sidecar
// protocol from the embedding API.
type sessionMethod func(ctx context.Context, s *session, params json.RawMessage) (any, error)

// sessionMethods is the sidecar's typed API (docs/sidecar.md lists each
// method's params and result).
var sessionMethods map[string]sessionMethod

func init() {
	sessionMethods = baseMethods
	for name, m := range catalogMethods {
		sessionMethods[name] = m
	}
}

// baseMethods are the status, tools, calls and prompts.
var baseMethods = map[string]sessionMethod{
	// status is the same snapshot the {"status": ...} lines carry.
	"status": func(_ context.Context, s *session, _ json.RawMessage) (any, error) {
		return s.rt.Status(), nil
	},
	"servers": func(_ context.Context, s *session, _ json.RawMessage) (any, error) {
		return s.rt.Servers(), nil
	},
	"tools": func(_ context.Context, s *session, _ json.RawMessage) (any, error) {
		return toolDefs(s.rt.Tools()), nil
	},
	"connect": func(ctx context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Server string `json:"server"`
			Fresh  bool   `json:"fresh"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Server == "" {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", `connect needs params {"server": NAME}`)
		}
		info, err := s.rt.Connect(ctx, p.Server, p.Fresh)
		if err != nil {
			return nil, err
		}
		return map[string]any{"server": p.Server, "name": info.Name, "version": info.Version}, nil
	},
	"callTool": func(ctx context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Server    string         `json:"server"`
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Server == "" || p.Tool == "" {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", `callTool needs params {"server": NAME, "tool": NAME}`)
		}
		res, err := s.rt.CallTool(ctx, p.Server, p.Tool, p.Arguments)
		if err != nil {
			return nil, err
		}
		content := make([]json.RawMessage, 0, len(res.Content))
		for _, c := range res.Content {
			content = append(content, c.Raw)
		}
		out := map[string]any{"content": content, "isError": res.IsError}
		if len(res.Structured) > 0 {
			out["structuredContent"] = res.Structured
		}
		return out, nil
	},
	"serverTools": func(_ context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Server string `json:"server"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		tools, ok := s.rt.ServerTools(p.Server)
		if !ok {
			return nil, messages.Errorf(messages.KindInvalidArgs, p.Server, "the tools of %q are not listed yet (connect it first)", p.Server)
		}
		return tools, nil
	},
	"prompts": func(_ context.Context, s *session, _ json.RawMessage) (any, error) {
		out := []map[string]any{}
		for _, p := range s.rt.Prompts() {
			out = append(out, map[string]any{"server": p.Server, "name": p.Name, "description": p.Description, "arguments": p.Arguments})
		}
		return out, nil
	},
	"getPrompt": func(ctx context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Server    string            `json:"server"`
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		res, err := s.rt.GetPrompt(ctx, p.Server, p.Name, p.Arguments)
		if err != nil {
			return nil, err
		}
		msgs := make([]map[string]any, 0, len(res.Messages))
		for _, m := range res.Messages {
			msgs = append(msgs, map[string]any{"role": m.Role, "text": m.Text})
		}
		return map[string]any{"description": res.Description, "messages": msgs, "text": res.Text}, nil
	},
}

// decodeParams reads a method's params (absent params are an empty object)
// and names the field a malformed one fails on.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return messages.Errorf(messages.KindInvalidArgs, "", "params.%s: expected %s", te.Field, jsonKind(te.Type))
		}
		if te != nil {
			return messages.Errorf(messages.KindInvalidArgs, "", "params: expected an object")
		}
		return messages.Errorf(messages.KindInvalidArgs, "", "params: %s", fmt.Sprint(err))
	}
	return nil
}

// mistyped recognises a JSON object with an id whose tool, method or
// cancel has the wrong type: it is answered with that id, naming the
// member, rather than as a line that could not be read.
func mistyped(line []byte, err error) (json.RawMessage, string, bool) {
	var te *json.UnmarshalTypeError
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if !errors.As(err, &te) || te.Field == "" || json.Unmarshal(line, &probe) != nil || len(probe.ID) == 0 || string(probe.ID) == "null" {
		return nil, "", false
	}
	if te.Field == "cancel" {
		return probe.ID, `"cancel" must be true`, true
	}
	return probe.ID, fmt.Sprintf("%q must be a string", te.Field), true
}

// jsonKind names a Go type as the JSON type a host must send.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "number"
}
