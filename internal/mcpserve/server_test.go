package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// reply is a decoded response.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// rig is a session whose sent messages are recorded.
type rig struct {
	t    *testing.T
	srv  *Server
	ss   *Session
	sent []string // server-initiated messages, in order
}

func newRig(t *testing.T, srv *Server) *rig {
	r := &rig{t: t, srv: srv}
	r.ss = srv.NewSession("s", func(b []byte) error { r.sent = append(r.sent, string(b)); return nil })
	t.Cleanup(r.ss.Close)
	return r
}

// do handles msg with header and returns the reply and the messages sent
// for the request (in order, before the reply).
func (r *rig) do(msg string, header http.Header) (reply, []string) {
	r.t.Helper()
	var related []string
	b := r.ss.Handle(context.Background(), []byte(msg), header, func(m []byte) error { related = append(related, string(m)); return nil })
	var rep reply
	if b != nil {
		if err := json.Unmarshal(b, &rep); err != nil {
			r.t.Fatalf("reply %s: %v", b, err)
		}
	}
	return rep, related
}

func (r *rig) ok(msg string) map[string]any {
	r.t.Helper()
	rep, _ := r.do(msg, nil)
	if rep.Error != nil {
		r.t.Fatalf("%s: error %+v", msg, rep.Error)
	}
	return rep.Result
}

func (r *rig) fails(msg string, header http.Header, code int) string {
	r.t.Helper()
	rep, _ := r.do(msg, header)
	if rep.Error == nil || rep.Error.Code != code {
		r.t.Fatalf("%s: got %+v, want error %d", msg, rep, code)
	}
	return rep.Error.Message
}

func text(name string) ToolHandler {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(name), nil
	}
}

func TestInitializeNegotiatesAndDeclares(t *testing.T) {
	srv := New(Options{Name: "n", Version: "1", Instructions: "use it", Experimental: map[string]any{"events": map[string]any{}}})
	r := newRig(t, srv)
	res := r.ok(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"2"}}}`)
	if res["protocolVersion"] != "2025-06-18" || res["instructions"] != "use it" || res["serverInfo"].(map[string]any)["name"] != "n" {
		t.Fatalf("initialize: %v", res)
	}
	if caps := res["capabilities"].(map[string]any); caps["tools"] != nil || caps["experimental"] == nil {
		t.Fatalf("capabilities before any tool: %v", caps)
	}
	if info, _ := r.ss.Client(); info.Name != "c" {
		t.Fatalf("client %+v", info)
	}
	srv.AddTool(mcp.NewTool("a"), text("a"))
	res = r.ok(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"c","version":"2"}}}`)
	if res["protocolVersion"] != mcp.LATEST_LEGACY_PROTOCOL_VERSION || res["capabilities"].(map[string]any)["tools"] == nil {
		t.Fatalf("initialize with an unknown version: %v", res)
	}
	if got := r.ok(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); len(got) != 0 {
		t.Fatalf("ping: %v", got)
	}
	r.fails(`{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`, nil, mcp.METHOD_NOT_FOUND)
	r.fails(`{"jsonrpc":"2.0","id":5,"method":"nope"}`, nil, mcp.METHOD_NOT_FOUND)
	r.fails(`{"jsonrpc":"2.0","id":6,"method":"server/discover"}`, nil, mcp.METHOD_NOT_FOUND)
	r.fails(`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info"}}`, nil, mcp.METHOD_NOT_FOUND)
	if rep, _ := r.do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); rep.ID != nil || rep.Result != nil {
		t.Fatalf("a notification was answered: %+v", rep)
	}
	r.fails(`{not json`, nil, mcp.PARSE_ERROR)
}

func TestPagination(t *testing.T) {
	srv := New(Options{PageSize: 2})
	for _, n := range []string{"e", "c", "a", "d", "b"} {
		srv.AddTool(mcp.NewTool(n), text(n))
	}
	r := newRig(t, srv)
	var names []string
	cursor, pages := "", 0
	for {
		params := ""
		if cursor != "" {
			params = fmt.Sprintf(`,"params":{"cursor":%q}`, cursor)
		}
		res := r.ok(`{"jsonrpc":"2.0","id":1,"method":"tools/list"` + params + `}`)
		pages++
		for _, tool := range res["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(names, "") != "abcde" || pages != 3 {
		t.Fatalf("%d pages of %v", pages, names)
	}
	r.fails(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"%%%"}}`, nil, mcp.INVALID_PARAMS)
}

func TestModernEnvelope(t *testing.T) {
	srv := New(Options{Name: "n", Version: "1"})
	srv.AddTool(mcp.NewTool("a"), text("a"))
	r := newRig(t, srv)
	res := r.ok(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
	if res["resultType"] != "complete" || res["ttlMs"] != 0.0 || res["cacheScope"] != "private" ||
		res["_meta"].(map[string]any)[mcp.MetaKeyServerInfo].(map[string]any)["name"] != "n" {
		t.Fatalf("discover: %v", res)
	}
	if !strings.Contains(fmt.Sprint(res["supportedVersions"]), "2026-07-28") {
		t.Fatalf("supported versions: %v", res["supportedVersions"])
	}
	res = r.ok(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a",` + modernMeta + `}}`)
	if res["resultType"] != "complete" || res["ttlMs"] != nil {
		t.Fatalf("tools/call: %v", res)
	}
	r.fails(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, nil, mcp.INVALID_PARAMS)
	r.fails(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, nil, mcp.UNSUPPORTED_PROTOCOL_VERSION)
	r.fails(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{`+modernMeta+`}}`, nil, mcp.METHOD_NOT_FOUND)
	r.fails(`{"jsonrpc":"2.0","id":6,"method":"ping","params":{`+modernMeta+`}}`, nil, mcp.METHOD_NOT_FOUND)

	h := http.Header{}
	h.Set(mcp.HeaderProtocolVersion, "2026-07-28")
	h.Set(mcp.HeaderMethod, "tools/list")
	r.fails(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a",`+modernMeta+`}}`, h, mcp.HEADER_MISMATCH)
	h.Set(mcp.HeaderMethod, "tools/call")
	h.Set(mcp.HeaderName, "a")
	if rep, _ := r.do(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a",`+modernMeta+`}}`, h); rep.Error != nil {
		t.Fatalf("matching headers: %+v", rep.Error)
	}
}

func TestCallsReadsAndGets(t *testing.T) {
	srv := New(Options{})
	srv.AddTool(mcp.NewTool("boom"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("bang") })
	srv.AddTool(mcp.NewTool("hdr"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.Header.Get("X-Test") + " " + req.GetString("q", "")), nil
	})
	srv.AddResource(mcp.NewResource("x://one", "one"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "x://one", Text: "1"}}, nil
	})
	srv.AddResourceTemplate(mcp.NewResourceTemplate("x://files/{name}", "files"), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: fmt.Sprint(req.Params.Arguments["name"])}}, nil
	})
	srv.AddPrompt(mcp.NewPrompt("greet"), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("hi", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hi "+req.Params.Arguments["name"]))}), nil
	})
	r := newRig(t, srv)

	if msg := r.fails(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom"}}`, nil, mcp.INTERNAL_ERROR); !strings.Contains(msg, "bang") {
		t.Fatalf("panic: %s", msg)
	}
	r.fails(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`, nil, mcp.INVALID_PARAMS)
	h := http.Header{"X-Test": {"hdr"}}
	rep, _ := r.do(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"hdr","arguments":{"q":"v"}}}`, h)
	if string(rep.ID) != `"s"` || fmt.Sprint(rep.Result["content"]) != "[map[text:hdr v type:text]]" {
		t.Fatalf("tools/call: %+v", rep)
	}
	res := r.ok(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x://files/note"}}`)
	if fmt.Sprint(res["contents"]) != "[map[text:[note] uri:x://files/note]]" {
		t.Fatalf("template read: %v", res)
	}
	if res := r.ok(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"x://one"}}`); fmt.Sprint(res["contents"]) != "[map[text:1 uri:x://one]]" {
		t.Fatalf("read: %v", res)
	}
	r.fails(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"y://none"}}`, nil, mcp.RESOURCE_NOT_FOUND)
	r.fails(`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"y://none",`+modernMeta+`}}`, nil, mcp.INVALID_PARAMS)
	if res := r.ok(`{"jsonrpc":"2.0","id":7,"method":"resources/templates/list"}`); len(res["resourceTemplates"].([]any)) != 1 {
		t.Fatalf("templates: %v", res)
	}
	res = r.ok(`{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"Ann"}}}`)
	if !strings.Contains(fmt.Sprint(res["messages"]), "hi Ann") {
		t.Fatalf("prompt: %v", res)
	}
	r.fails(`{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"nope"}}`, nil, mcp.INVALID_PARAMS)
}

func TestNotifications(t *testing.T) {
	srv := New(Options{ToolsListChanged: true, Logging: true})
	srv.AddTool(mcp.NewTool("work"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := Progress(ctx, 1, 2, "half"); err != nil {
			return nil, err
		}
		if err := Log(ctx, mcp.LoggingLevelInfo, "w", "info line"); err != nil {
			return nil, err
		}
		if err := Log(ctx, mcp.LoggingLevelDebug, "w", "debug line"); err != nil {
			return nil, err
		}
		return mcp.NewToolResultText("done"), nil
	})
	r := newRig(t, srv)
	other := newRig(t, srv) // never initialized: no broadcasts

	_, related := r.do(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work"}}`, nil)
	if len(related) != 0 {
		t.Fatalf("no token, no level: %v", related)
	}
	r.ok(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
	r.fails(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}`, nil, mcp.INVALID_PARAMS)
	_, related = r.do(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p"}}}`, nil)
	if len(related) != 2 || !strings.Contains(related[0], `"method":"notifications/progress"`) || !strings.Contains(related[0], `"progressToken":"p"`) ||
		!strings.Contains(related[1], `"data":"info line"`) {
		t.Fatalf("related: %v", related)
	}
	_, related = r.do(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"work","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}}}`, nil)
	if len(related) != 2 || !strings.Contains(related[1], "debug line") {
		t.Fatalf("a 2026-07-28 request's own level: %v", related)
	}

	r.sent = nil
	r.ok(`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"2"}}}`)
	srv.AddTool(mcp.NewTool("more"), text("more"))
	if len(r.sent) != 1 || r.sent[0] != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` || len(other.sent) != 0 {
		t.Fatalf("list_changed: %v, uninitialized: %v", r.sent, other.sent)
	}
	r.ss.Close()
	srv.DeleteTools("more")
	if len(r.sent) != 1 {
		t.Fatalf("a closed session got %v", r.sent)
	}
	if err := Progress(context.Background(), 1, 0, ""); err != ErrNoRequest {
		t.Fatalf("Progress outside a request: %v", err)
	}
}

// TestListen: a 2026-07-28 client's subscriptions/listen is acknowledged
// with what the server offers, carries the list changes it asked for
// (stamped with its id) and no others, and is answered when the client
// ends it; one asking for nothing offered is answered at once.
func TestListen(t *testing.T) {
	srv := New(Options{Name: "n", Version: "1", ToolsListChanged: true})
	srv.AddTool(mcp.NewTool("a"), text("a"))
	srv.AddPrompt(mcp.NewPrompt("p"), nil)
	r := newRig(t, srv)
	r.fails(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`, nil, mcp.METHOD_NOT_FOUND)

	ctx, cancel := context.WithCancel(context.Background())
	frames := make(chan string, 8)
	done := make(chan []byte, 1)
	go func() {
		done <- r.ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},`+modernMeta+`}}`), nil,
			func(m []byte) error { frames <- string(m); return nil })
	}()
	if ack := <-frames; ack != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"notifications":{"toolsListChanged":true}}}` {
		t.Fatalf("ack: %s", ack)
	}
	srv.AddPrompt(mcp.NewPrompt("q"), nil) // prompts' listChanged is not offered: nothing
	srv.AddTool(mcp.NewTool("b"), text("b"))
	if n := <-frames; n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}` {
		t.Fatalf("list change: %s", n)
	}
	if len(r.sent) != 0 {
		t.Fatalf("a 2026-07-28 session got unasked notifications: %v", r.sent)
	}
	cancel()
	var rep reply
	if err := json.Unmarshal(<-done, &rep); err != nil || rep.Error != nil || rep.Result["resultType"] != "complete" ||
		rep.Result["_meta"].(map[string]any)[mcp.MetaKeySubscriptionID] != "L" {
		t.Fatalf("the end of the listen request: %+v %v", rep, err)
	}
	srv.AddTool(mcp.NewTool("c"), text("c"))
	select {
	case f := <-frames:
		t.Fatalf("after its end: %s", f)
	default:
	}

	rep, related := r.do(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true},`+modernMeta+`}}`, nil)
	if rep.Error != nil || len(related) != 1 || !strings.Contains(related[0], `"notifications":{}`) {
		t.Fatalf("nothing offered: %+v %v", rep, related)
	}
}
