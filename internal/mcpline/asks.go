package mcpline

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Requests from the server to the peer (roots/list, elicitation/create):
// the session writes the request and waits for the peer's response, which
// dispatch hands over by id.

var (
	_ server.SessionWithRoots       = (*lineSession)(nil)
	_ server.SessionWithElicitation = (*lineSession)(nil)
)

// asks are a connection's requests to the peer waiting for responses.
type asks struct {
	mu      sync.Mutex
	next    int
	waiting map[string]chan json.RawMessage // by idKey; guarded by mu
}

// ask writes one request to the peer and waits for its response (the
// whole message), or for ctx or the session to end.
func (c *conn) ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.asks.mu.Lock()
	c.asks.next++
	id := json.RawMessage(strconv.Quote("srv-" + strconv.Itoa(c.asks.next)))
	ch := make(chan json.RawMessage, 1)
	if c.asks.waiting == nil {
		c.asks.waiting = map[string]chan json.RawMessage{}
	}
	c.asks.waiting[idKey(id)] = ch
	c.asks.mu.Unlock()
	defer func() {
		c.asks.mu.Lock()
		delete(c.asks.waiting, idKey(id))
		c.asks.mu.Unlock()
	}()
	b, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := c.writeMsg(b); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  *errorDetails   `json:"error"`
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
	case <-c.ctx.Done():
		return nil, c.ctx.Err()
	}
}

// answered hands a response to the request waiting for it; false when
// none waits for that id.
func (c *conn) answered(id json.RawMessage, msg []byte) bool {
	c.asks.mu.Lock()
	ch := c.asks.waiting[idKey(id)]
	delete(c.asks.waiting, idKey(id))
	c.asks.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- append(json.RawMessage(nil), msg...)
	return true
}

// ListRoots asks the peer's roots.
func (s *lineSession) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	raw, err := s.conn.ask(ctx, string(mcp.MethodListRoots), map[string]any{})
	if err != nil {
		return nil, err
	}
	var res mcp.ListRootsResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// RequestElicitation asks the peer an elicitation.
func (s *lineSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := s.conn.ask(ctx, string(mcp.MethodElicitationCreate), req.Params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
