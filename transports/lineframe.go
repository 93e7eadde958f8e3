package transports

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// frame is every JSON-RPC message shape at once; one decode classifies it.
// Members are kept raw: the id and the error are read by whoever needs
// them (an error object that mcp-go cannot read must fail only its
// request, see rpcErrorOf), the params and the result are passed on.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// frameKeys are frame's members, in the order scanFrame reads them.
var frameKeys = []string{"id", "method", "params", "result", "error"}

// decodeFrame reads one JSON-RPC message exactly as json.Unmarshal into a
// frame does, error included. Most lines are taken apart by jsonscan in
// one pass; a line it is not sure of goes through json.Unmarshal.
func decodeFrame(line []byte) (frame, error) {
	if f, ok := scanFrame(line); ok {
		return f, nil
	}
	return unmarshalFrame(line)
}

// decodeOwnedFrame is decodeFrame for a buffer the caller hands over: the
// members returned share it instead of a copy.
func decodeOwnedFrame(b []byte) (frame, error) {
	if f, ok := scanOwnedFrame(b); ok {
		return f, nil
	}
	return unmarshalFrame(b)
}

// unmarshalFrame is the reference decoding of a frame.
func unmarshalFrame(line []byte) (frame, error) {
	var f frame
	err := json.Unmarshal(line, &f)
	return f, err
}

// scanFrame is decodeFrame's fast path; false means "not sure" (the line
// is invalid, unusual, or its method is neither a string nor null). The
// raw members it returns share one copy of the line, each capped so that
// appending to one cannot overwrite another.
func scanFrame(line []byte) (frame, bool) {
	return scanOwnedFrame(append([]byte(nil), line...))
}

// scanOwnedFrame is scanFrame without the copy.
func scanOwnedFrame(buf []byte) (frame, bool) {
	var vals [5][]byte
	if !jsonscan.Object(buf, frameKeys, vals[:]) {
		return frame{}, false
	}
	var f frame
	if m := vals[1]; m != nil && string(m) != "null" {
		s, ok := jsonscan.String(m)
		if !ok {
			return frame{}, false // not a string: json.Unmarshal fails, with its error
		}
		f.Method = s
	}
	f.ID, f.Params, f.Result, f.Error = capped(vals[0]), capped(vals[2]), capped(vals[3]), capped(vals[4])
	return f, true
}

// capped returns v with no room to grow into what follows it (nil stays
// nil: the member was absent).
func capped(v []byte) json.RawMessage {
	if v == nil {
		return nil
	}
	return v[:len(v):len(v)]
}

// rpcErrorOf reads a response's error member (nil when absent or null).
// mcp-go's reading comes first: the JSON-RPC error object, or a bare
// string some servers send. A value it refuses still makes the response
// an error, so that one malformed answer fails only its request and never
// the connection: the code is kept when it is an integer and is 0 (none)
// otherwise, the message when it is a string, the data as it is.
func rpcErrorOf(raw json.RawMessage) *mcp.JSONRPCErrorDetails {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	d := &mcp.JSONRPCErrorDetails{}
	if d.UnmarshalJSON(raw) == nil {
		return d
	}
	var loose struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		Data    any             `json:"data"`
	}
	d = &mcp.JSONRPCErrorDetails{}
	if json.Unmarshal(raw, &loose) == nil {
		if json.Unmarshal(loose.Code, &d.Code) != nil {
			d.Code = 0
		}
		d.Message, _ = jsonscan.String(loose.Message)
		d.Data = loose.Data
	}
	return d
}
