package transports

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/internal/jsonscan"
	"github.com/mcprt/mcprt/messages"
)

// Responses are matched to requests on every transport. A response whose
// id this connection never sent is ignored and counted
// (ServerStatus.UnknownResponses): on stdio and sockets by the line reader,
// on the legacy SSE GET stream and on each Streamable HTTP response stream
// by the SSE tap, before the client (which takes the first response on a
// POST's stream as that request's answer, whatever its id) sees it. On a
// POST's response stream only the POST's own id is accepted. A Streamable
// HTTP POST answered with a single JSON body of another id has nothing
// else to wait for: that request fails (protocol_error) and the response is
// counted.

var responseKeys = []string{"id", "method"}

// responseID returns the raw id of a JSON-RPC response (a message with a
// non-null id and no method) and true; false for anything else.
func responseID(data []byte) ([]byte, bool) {
	var v [2][]byte
	if !jsonscan.Object(data, responseKeys, v[:]) {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		if json.Unmarshal(data, &f) != nil {
			return nil, false
		}
		v[0], v[1] = f.ID, f.Method
	}
	id, method := v[0], v[1]
	if method != nil || id == nil || string(id) == "null" {
		return nil, false
	}
	return id, true
}

// sseData returns the data of one SSE event (its data lines joined with
// newlines); one data line is returned without copying.
func sseData(ev []byte) []byte {
	var data []byte
	lines := 0
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		v, ok := bytes.CutPrefix(line, dataField)
		if !ok {
			continue
		}
		v = bytes.TrimPrefix(v, []byte(" "))
		switch lines++; lines {
		case 1:
			data = v
		case 2:
			data = append(append(append([]byte(nil), data...), '\n'), v...)
		default:
			data = append(append(data, '\n'), v...)
		}
	}
	return data
}

// sentID reports whether this connection sent a request with id (a JSON
// string): its own prefix, and a handshake or operation number it has
// issued.
func (c *conn) sentID(id string) bool {
	rest, ok := strings.CutPrefix(id, c.ids.prefix+"-")
	if !ok {
		return false
	}
	if h, ok := strings.CutPrefix(rest, "h"); ok {
		n, err := strconv.ParseUint(h, 10, 64)
		return err == nil && n >= 1 && n <= c.ids.n.Load()
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	return err == nil && n <= c.maxOp.Load()
}

// unknownResponse counts one ignored response.
func (c *conn) unknownResponse() {
	c.sink(messages.UnknownResponse{Server: c.server, Gen: c.gen})
}

// onLineResponse is the line reader's report of a response that matched no
// pending request: one this connection never sent is counted; a late
// answer to a request it gave up (cancelled, timed out) is just dropped.
func (c *conn) onLineResponse(rawID []byte) {
	id, ok := jsonscan.String(rawID)
	if !ok || !c.sentID(id) {
		c.unknownResponse()
	}
}

// foreignResponse reports whether an SSE event is a response to drop:
// on a POST's stream (want set) one whose id is not the POST's; on the
// legacy GET stream one whose id this connection never sent.
func (c *conn) foreignResponse(ev []byte, want string) bool {
	rawID, ok := responseID(sseData(ev))
	if !ok {
		return false
	}
	id, isString := jsonscan.String(rawID)
	if want != "" {
		return !isString || id != want
	}
	return !isString || !c.sentID(id)
}
