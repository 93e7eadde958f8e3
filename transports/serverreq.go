package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mcprt/mcprt/messages"
)

// serverRequests answers one connection's server-to-client requests with
// the Dialer's handler. Every request runs on a goroutine of its own,
// counted with the connection's operations (so ConnClosed follows its end),
// at most messages.MaxPendingServerRequests at once; its context ends when
// the server cancels it (notifications/cancelled) or the connection ends,
// and then no answer is sent. ping is answered here, with or without a
// handler; without one every other method is answered -32601.
//
// The answer goes back the way the transport needs (a line on stdio and
// sockets, a POST on HTTP), through answer, with the request's id exactly
// as the server wrote it (0 included).
type serverRequests struct {
	server  string
	gen     uint64
	handler messages.ServerRequestHandler
	ctx     context.Context
	// spawn runs f on a counted goroutine of the connection; false when
	// the connection is closing and f will not run.
	spawn func(f func()) bool
	// answer sends one encoded JSON-RPC response.
	answer func(ctx context.Context, frame []byte) error

	mu sync.Mutex
	// pending maps a request's raw id to its cancel; guarded by mu.
	pending map[string]context.CancelFunc
	// reserved counts the input requests of 2026-07-28 calls being
	// answered (mrtr.go); they share the bound; guarded by mu.
	reserved int
}

// reserve takes n places among the requests waiting for an answer; false
// when that would pass messages.MaxPendingServerRequests.
func (s *serverRequests) reserve(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending)+s.reserved+n > messages.MaxPendingServerRequests {
		return false
	}
	s.reserved += n
	return true
}

// release gives back n places taken by reserve.
func (s *serverRequests) release(n int) {
	s.mu.Lock()
	s.reserved -= n
	s.mu.Unlock()
}

// serve starts answering one request; it never blocks.
func (s *serverRequests) serve(id json.RawMessage, method string, params json.RawMessage) {
	s.serveFor(id, method, params, nil)
}

// serveFor is serve for a request tied to the call whose caller tag is
// caller (a request read from that call's own response stream).
func (s *serverRequests) serveFor(id json.RawMessage, method string, params json.RawMessage, caller any) {
	id = append(json.RawMessage(nil), bytes.TrimSpace(id)...)
	if method == messages.MethodServerPing {
		s.spawn(func() { s.reply(s.ctx, id, json.RawMessage(`{}`), nil) })
		return
	}
	if s.handler == nil {
		s.spawn(func() {
			s.reply(s.ctx, id, nil, &messages.RPCError{Code: messages.RPCMethodNotFound, Message: "the client does not support " + method})
		})
		return
	}
	key := string(id)
	s.mu.Lock()
	_, dup := s.pending[key]
	full := len(s.pending)+s.reserved >= messages.MaxPendingServerRequests
	var ctx context.Context
	var cancel context.CancelFunc
	if !dup && !full {
		ctx, cancel = context.WithCancel(s.ctx)
		if s.pending == nil {
			s.pending = map[string]context.CancelFunc{}
		}
		s.pending[key] = cancel
	}
	s.mu.Unlock()
	switch {
	case dup:
		s.spawn(func() {
			s.reply(s.ctx, id, nil, &messages.RPCError{Code: messages.RPCInvalidParams, Message: "a request with this id is already pending"})
		})
		return
	case full:
		s.spawn(func() {
			s.reply(s.ctx, id, nil, &messages.RPCError{Code: messages.RPCInternal, Message: "too many pending requests"})
		})
		return
	}
	req := messages.ServerRequest{Server: s.server, Gen: s.gen, Method: method, Params: append(json.RawMessage(nil), params...), Caller: caller}
	if !s.spawn(func() {
		defer s.forget(key, cancel)
		res, rerr := s.handler(ctx, req)
		if ctx.Err() != nil {
			return // cancelled by the server, or the connection ended
		}
		s.reply(ctx, id, res, rerr)
	}) {
		s.forget(key, cancel)
	}
}

func (s *serverRequests) forget(key string, cancel context.CancelFunc) {
	cancel()
	s.mu.Lock()
	delete(s.pending, key)
	s.mu.Unlock()
}

// cancelled withdraws the pending request a server's
// notifications/cancelled names; false when it names none of them.
func (s *serverRequests) cancelled(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return false
	}
	s.mu.Lock()
	cancel := s.pending[string(bytes.TrimSpace(p.RequestID))]
	s.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// reply encodes and sends the answer; an error the answer cannot be sent
// with is the connection's business (its reader or stream will notice).
func (s *serverRequests) reply(ctx context.Context, id json.RawMessage, result json.RawMessage, rerr *messages.RPCError) {
	var frame []byte
	if rerr != nil {
		body, _ := json.Marshal(map[string]any{"code": rerr.Code, "message": rerr.Message})
		frame = encodeResponse(id, "error", body)
	} else {
		if len(result) == 0 {
			result = json.RawMessage(`{}`)
		}
		frame = encodeResponse(id, "result", result)
	}
	_ = s.answer(ctx, frame)
}

// encodeResponse writes {"jsonrpc":"2.0","id":ID,"<member>":BODY} with the
// id's bytes as received.
func encodeResponse(id json.RawMessage, member string, body []byte) []byte {
	b := make([]byte, 0, len(id)+len(body)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"`...)
	b = append(b, member...)
	b = append(b, `":`...)
	b = append(b, body...)
	return append(b, '}')
}

// spawnOp runs f on a goroutine counted with the connection's operations
// (ConnClosed waits for it); false when the connection is closing.
func (c *conn) spawnOp(f func()) bool {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return false
	}
	c.opsWG.Add(1)
	c.mu.Unlock()
	c.d.spawn(func() {
		defer c.opsWG.Done()
		f()
	})
	return true
}

// answerServer sends the response to a server's request the transport's
// way: a line on stdio and sockets, a POST on HTTP.
func (c *conn) answerServer(ctx context.Context, frame []byte) error {
	if c.lc != nil {
		return c.lc.writeFrame(frame)
	}
	return c.postAnswer(ctx, frame)
}
