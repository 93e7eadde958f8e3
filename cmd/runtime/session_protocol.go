package main

import "encoding/json"

// The sidecar protocol (docs/sidecar.md, docs/sidecar.schema.json).
const (
	sessionProtocol = "mcprt-session"
	// sessionVersion changes when a line's meaning changes; new optional
	// fields do not change it.
	sessionVersion = 1
	// maxSessionLine is the longest input line read; a longer one is
	// answered with an error and skipped.
	maxSessionLine = 4 << 20
	// maxInFlight is how many requests may run at once; more are refused.
	maxInFlight = 64
)

// sessionRequest is one input line. Exactly one of Tool, Method and Cancel
// says what it is.
type sessionRequest struct {
	ID     json.RawMessage `json:"id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Cancel bool            `json:"cancel"`
	// Answer, Result and Error are an answer line (session_ask.go).
	Answer *string         `json:"answer"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}
