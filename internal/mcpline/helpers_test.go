package mcpline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// testCtx bounds a test generously; nothing in it should take long.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// probe records what the test handlers saw.
type probe struct {
	cancelled chan string // the id of every stream whose context ended
	headers   chan string // the X-Test header of every x/stream call
}

func newProbe() *probe {
	return &probe{cancelled: make(chan string, 16), headers: make(chan string, 16)}
}

// methods returns the custom methods the front tests use:
//   - x/echo answers its params;
//   - x/stream sends x/item {"n":1} and {"n":2} (stamped), x/changed
//     (unstamped), then ends as params.end says ("result", "error",
//     "cancel", "eof", "raw", "disconnect" or "never"), then sends x/item
//     {"n":3} late. "raw" writes the line "not json" and an error response
//     whose code is a string, then ends without a result; "disconnect"
//     calls Disconnect.
func (p *probe) methods() Methods {
	return Methods{
		"x/echo": func(_ context.Context, c *Call) (any, error) {
			return c.Params(), nil
		},
		"x/stream": func(ctx context.Context, c *Call) (any, error) {
			var params struct{ End string }
			_ = json.Unmarshal(c.Params(), &params)
			if c.Header() != nil {
				p.headers <- c.Header().Get("X-Test")
			}
			for n := 1; n <= 2; n++ {
				if err := c.Send("x/item", map[string]any{"n": n, "_meta": map[string]any{"keep": "me"}}); err != nil {
					return nil, err
				}
			}
			_ = c.Notify("x/changed", nil)
			var end error
			switch params.End {
			case "result":
				end = c.End(map[string]any{"done": true}, nil)
			case "error":
				end = c.End(nil, &Error{Code: -32012, Message: "forbidden", Data: json.RawMessage(`{"why":"test"}`)})
			case "cancel":
				end = c.End(nil, ErrServerCancel)
			case "eof":
				end = c.End(nil, ErrNoResult)
			case "raw":
				if err := c.SendRaw([]byte("not json")); err != nil {
					return nil, err
				}
				if c.SendRaw([]byte("two\nlines")) == nil {
					return nil, errors.New("SendRaw took a line break")
				}
				if err := c.SendRaw([]byte(`{"jsonrpc":"2.0","id":` + string(c.ID()) + `,"error":{"code":"E1","message":"odd"}}`)); err != nil {
					return nil, err
				}
				end = c.End(nil, ErrNoResult)
			case "disconnect":
				c.Disconnect()
				_ = c.Send("x/item", map[string]any{"n": 4}) // must not reach the wire
				return "ignored", nil
			default:
				<-ctx.Done()
				p.cancelled <- string(c.ID())
				return nil, ctx.Err()
			}
			if end != nil {
				return nil, end
			}
			_ = c.Send("x/item", map[string]any{"n": 3})
			return "ignored", nil
		},
	}
}

// fakeMCP is a minimal Backend: initialize, ping, the tool "hi", which
// answers "hi " and the X-Test header its request came with, x/related,
// which sends x/progress for its request first, and x/push, which sends
// x/pushed to the session's peer first.
type fakeMCP struct{}

func newMCP() Backend { return fakeMCP{} }

func (fakeMCP) Open(_ context.Context, _ string, send func([]byte) error) (Session, error) {
	return fakeSession{send: send}, nil
}

type fakeSession struct{ send func([]byte) error }

func (fakeSession) Close() {}

func (f fakeSession) Handle(ctx context.Context, msg []byte, header http.Header, related func([]byte) error) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &req) != nil || IsNull(req.ID) {
		return nil
	}
	var result any
	switch req.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "0"}}
	case "ping":
		result = map[string]any{}
	case "x/related":
		if related == nil {
			related = f.send
		}
		_ = related([]byte(`{"jsonrpc":"2.0","method":"x/progress"}`))
		result = map[string]any{}
	case "x/push":
		result = map[string]any{"pushed": f.send([]byte(`{"jsonrpc":"2.0","method":"x/pushed"}`)) == nil}
	case "tools/call":
		h := header.Get("X-Test")
		if rh := RequestHeader(ctx); h == "" && rh != nil {
			h = rh.Get("X-Test")
		}
		result = mcp.NewToolResultText("hi " + h)
	default:
		b, _ := json.Marshal(NewErrorReply(req.ID, mcp.METHOD_NOT_FOUND, "method not found"))
		return b
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	return b
}

// frame is one decoded JSON-RPC message as the tests look at it.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		N         int             `json:"n"`
		RequestID json.RawMessage `json:"requestId"`
		Meta      map[string]any  `json:"_meta"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, b []byte) frame {
	t.Helper()
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return f
}

// sseReader reads "message" events (and the "endpoint" event) from a body.
type sseReader struct{ r *bufio.Reader }

// next returns the next event's name and data; io.EOF at a clean end.
func (s *sseReader) next() (event, data string, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && (event != "" || data != "") {
				err = io.ErrUnexpectedEOF
			}
			return event, data, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data != "" || event != "" {
				return event, data, nil
			}
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
}

// checkStreamFrames checks the frames every x/stream call starts with.
func checkStreamFrames(t *testing.T, id string, next func() frame) {
	t.Helper()
	for n := 1; n <= 2; n++ {
		f := next()
		if f.Method != "x/item" || f.Params.N != n {
			t.Fatalf("frame %d: %+v", n, f)
		}
		if got, _ := json.Marshal(f.Params.Meta[SubscriptionIDKey]); string(got) != id || f.Params.Meta["keep"] != "me" {
			t.Fatalf("frame %d _meta = %v, want the subscription id %s and keep=me", n, f.Params.Meta, id)
		}
	}
	if f := next(); f.Method != "x/changed" || f.Params.Meta != nil {
		t.Fatalf("unsolicited frame: %+v", f)
	}
}
