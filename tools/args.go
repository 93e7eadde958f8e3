package tools

import (
	"encoding/json"
	"strings"

	"github.com/mcprt/mcprt/messages"
)

// decodeToolArgs accepts an object, or a JSON string holding one.
func decodeToolArgs(raw json.RawMessage) (json.RawMessage, *messages.Error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", "args must be a JSON object")
		}
		raw = json.RawMessage(strings.TrimSpace(s))
		if len(raw) == 0 {
			return json.RawMessage(`{}`), nil
		}
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, messages.Errorf(messages.KindInvalidArgs, "", "args must be a JSON object, not %s", jsonKind(raw))
	}
	return raw, nil
}

func jsonKind(raw json.RawMessage) string {
	if !json.Valid(raw) {
		return "invalid JSON"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
