package tools

import (
	"encoding/json"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// The hot path of a tool call reads the model's arguments and the server's
// result without encoding/json's reflection when internal/jsonscan is sure
// that encoding/json would read them the same way; otherwise (anything
// unusual) encoding/json does it as before. The fuzz tests in
// fastjson_test.go hold each fast path to its encoding/json twin.

// callKeys are the members of the common calls, {"tool", "args"} and
// {"server", "tool", "args"}, that fastArgs reads.
var callKeys = []string{"tool", "args", "server"}

// fastArgs decodes the arguments of a call without reflection when they
// have no other member and are read by encoding/json the same way
// (internal/jsonscan); it reports false, leaving a partly set, for the
// decoder to do it. a.Args shares raw's bytes: the call only reads them
// while Execute runs.
func fastArgs(raw json.RawMessage, a *mcpArgs) bool {
	var vals [3][]byte
	if !jsonscan.ObjectOnly(raw, callKeys, vals[:]) {
		return false
	}
	var ok bool
	if vals[0] != nil {
		if a.Tool, ok = jsonscan.String(vals[0]); !ok {
			return false
		}
	}
	if vals[2] != nil {
		if a.Server, ok = jsonscan.String(vals[2]); !ok {
			return false
		}
	}
	a.Args = vals[1]
	return true
}

// contentKeys are contentItem's JSON names, in fastItem's order.
var contentKeys = []string{"type", "text", "mimeType", "data", "uri", "name", "resource"}

// resultKeys are callResult's JSON names.
var resultKeys = []string{"content", "structuredContent", "isError"}

// decodeCallResult is json.Unmarshal of a tools/call result.
func decodeCallResult(raw json.RawMessage) (callResult, error) {
	var r callResult
	if fastCallResult(raw, &r) {
		return r, nil
	}
	r = callResult{}
	err := json.Unmarshal(raw, &r)
	return r, err
}

// fastCallResult is json.Unmarshal of a tools/call result into r for the
// usual shape (content items without an embedded resource); it reports
// false, leaving r partly set, for json.Unmarshal to do it. r shares
// raw's bytes (structuredContent).
func fastCallResult(raw json.RawMessage, r *callResult) bool {
	var vals [3][]byte
	if !jsonscan.Object(raw, resultKeys, vals[:]) {
		return false
	}
	switch string(vals[2]) {
	case "true":
		r.IsError = true
	case "", "false", "null":
	default:
		return false
	}
	r.StructuredContent = vals[1]
	if vals[0] == nil || string(vals[0]) == "null" {
		return true
	}
	var buf [4][]byte
	elems, ok := jsonscan.Array(vals[0], buf[:0])
	if !ok {
		return false
	}
	r.Content = make([]contentItem, len(elems))
	for i, el := range elems {
		if !fastItem(el, &r.Content[i]) {
			return false
		}
	}
	return true
}

// fastItem reads one content item that is an object of string members
// (unknown members ignored, null leaving a member empty, as encoding/json
// does); false for anything else, an embedded resource included.
func fastItem(raw []byte, c *contentItem) bool {
	var vals [7][]byte
	if !jsonscan.Object(raw, contentKeys, vals[:]) {
		return false
	}
	if vals[6] != nil && string(vals[6]) != "null" {
		return false
	}
	if string(vals[0]) == `"text"` {
		c.Type, vals[0] = "text", nil // the usual type, without a copy
	}
	for i, dst := range [...]*string{&c.Type, &c.Text, &c.MimeType, &c.Data, &c.URI, &c.Name} {
		if v := vals[i]; v != nil && string(v) != "null" {
			s, ok := jsonscan.String(v)
			if !ok {
				return false
			}
			*dst = s
		}
	}
	return true
}
