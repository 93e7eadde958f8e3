package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// Requests from the test server to its client (roots/list,
// elicitation/create, for the tools --client-requests adds): the session
// writes the request with its send and waits for the client's response,
// which Handle hands over by id.

var (
	_ server.SessionWithRoots       = (*lineSession)(nil)
	_ server.SessionWithElicitation = (*lineSession)(nil)
)

// peerAsks are one session's requests to its client waiting for answers.
type peerAsks struct {
	send func([]byte) error
	gone <-chan struct{} // closed when the session's pump has exited

	mu      sync.Mutex
	next    int
	waiting map[string]chan []byte // by id; guarded by mu
}

// ask writes one request and waits for its response (the whole message).
func (a *peerAsks) ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	a.mu.Lock()
	a.next++
	id := strconv.Quote("srv-" + strconv.Itoa(a.next))
	ch := make(chan []byte, 1)
	if a.waiting == nil {
		a.waiting = map[string]chan []byte{}
	}
	a.waiting[id] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, id)
		a.mu.Unlock()
	}()
	b, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := a.send(b); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(resp, &r); err != nil {
			return nil, err
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s (JSON-RPC error %d)", r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-a.gone:
		return nil, errors.New("the session ended")
	}
}

// answered hands a response to the request waiting for it; false when msg
// is not a response to one.
func (a *peerAsks) answered(msg []byte) bool {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &head) != nil || head.Method != "" || mcpline.IsNull(head.ID) {
		return false
	}
	a.mu.Lock()
	ch := a.waiting[string(head.ID)]
	delete(a.waiting, string(head.ID))
	a.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- append([]byte(nil), msg...)
	return true
}

// ListRoots asks the client's roots.
func (s *lineSession) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	raw, err := s.asks.ask(ctx, string(mcp.MethodListRoots), map[string]any{})
	if err != nil {
		return nil, err
	}
	var res mcp.ListRootsResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// RequestElicitation asks the client an elicitation.
func (s *lineSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := s.asks.ask(ctx, string(mcp.MethodElicitationCreate), req.Params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
