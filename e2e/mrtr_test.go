package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// mrtrHost answers a 2026-07-28 server's input requests and records them.
type mrtrHost struct {
	mu      sync.Mutex
	forms   []mcprt.ElicitForm
	urls    []mcprt.ElicitURL
	samples []mcprt.SamplingRequest
	decline bool
	// block: the person never answers; the hook returns when its context
	// ends, counted in withdrawn.
	block     bool
	withdrawn int
}

func (h *mrtrHost) hooks() mcprt.ClientHooks {
	return mcprt.ClientHooks{
		Elicit: func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.forms = append(h.forms, q)
			if h.block {
				h.mu.Unlock()
				<-ctx.Done()
				h.mu.Lock()
				h.withdrawn++
				return mcprt.ElicitAnswer{}, ctx.Err()
			}
			if h.decline {
				return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
			}
			content := map[string]any{}
			for _, f := range q.Form.Fields {
				switch f.Name {
				case "name":
					content["name"] = "Ada Lovelace"
				case "sure":
					content["sure"] = true
				}
			}
			return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept, Content: content}, nil
		},
		ElicitURL: func(_ context.Context, q mcprt.ElicitURL) (mcprt.ElicitAnswer, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.urls = append(h.urls, q)
			return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept}, nil
		},
		Sample: func(_ context.Context, q mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.samples = append(h.samples, q)
			return mcprt.SamplingResult{Text: "Paris", Model: "host-model"}, nil
		},
		Roots: []mcprt.Root{{URI: "file:///work/project", Name: "project"}},
	}
}

// A 2026-07-28 server written with the official TypeScript SDK (v2) asks
// for input the 2026-07-28 way: it answers tools/call with an
// InputRequiredResult, and the runtime answers its input requests with the
// host's hooks and retries the call with inputResponses and the
// requestState exactly as sent (multi round-trip requests). Over Streamable
// HTTP (protocolVersion auto: the server refuses initialize, so
// server/discover) and stdio (pinned to 2026-07-28).
func TestMultiRoundTripWithTSPeer(t *testing.T) {
	url, _ := testenv.StartTSPeer(t, "modern-http")
	node, args := testenv.TSPeerStdio(t, "modern-stdio")
	servers := map[string]config.Server{
		"http":  {URL: url, LogLevel: "info"},
		"stdio": {Command: node, Args: args, ProtocolVersion: "2026-07-28", LogLevel: "info"},
	}
	for name, srv := range servers {
		t.Run(name, func(t *testing.T) {
			h := &mrtrHost{}
			rt, err := mcprt.Start(testCtx(t), mcprt.Options{
				Config: &config.File{MCPServers: map[string]config.Server{"peer": srv}}, AgentDir: t.TempDir(), Client: h.hooks(),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			mcp, _ := rt.Tool(mcprt.MCPToolName)
			call := func(tool string) mcprt.Result {
				t.Helper()
				return mcp.Execute(testCtx(t), json.RawMessage(`{"server":"peer","tool":"`+tool+`","args":{}}`))
			}

			// Capabilities go with every request, in their 2026-07-28 form
			// (roots without listChanged), and so does the log level.
			res := call("caps")
			for _, want := range []string{`"elicitation":{"form":{},"url":{}}`, `"sampling":{}`, `"roots":{}`, `"io.modelcontextprotocol/logLevel":"info"`, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`} {
				if !strings.Contains(res.Text, want) {
					t.Errorf("the request's envelope lacks %s: %s", want, res.Text)
				}
			}

			res = call("mrtr_elicit")
			if res.IsError || !strings.Contains(res.Text, `hello Ada Lovelace; state "state-1 \"quoted\" é"`) {
				t.Errorf("mrtr_elicit: %s", res.Text)
			}
			if res.Details["askedUser"] != true {
				t.Errorf("the call does not say it asked the user: %v", res.Details)
			}
			if len(h.forms) != 1 || h.forms[0].Server != "peer" || h.forms[0].Message != "What is your name?" {
				t.Errorf("the host was asked %+v", h.forms)
			}

			res = call("mrtr_url")
			if res.IsError || !strings.Contains(res.Text, "url answer accept; state url-1") {
				t.Errorf("mrtr_url: %s", res.Text)
			}
			if len(h.urls) != 1 || h.urls[0].Host != "bank.example.com" || h.urls[0].URL != "https://bank.example.com/consent?id=7" || h.urls[0].ElicitationID != "" {
				t.Errorf("the URL reached the host as %+v", h.urls)
			}

			res = call("mrtr_all")
			want := `{"name":"Ada Lovelace","sample":"Paris","model":"host-model","roots":["file:///work/project"],"state":"absent"}`
			if res.IsError || !strings.Contains(res.Text, want) {
				t.Errorf("mrtr_all: %s\nwant %s", res.Text, want)
			}
			if len(h.samples) != 1 || h.samples[0].SystemPrompt != "be brief" || h.samples[0].MaxTokens != 20 || !strings.Contains(h.samples[0].Messages[0].Text, "capital of France") {
				t.Errorf("the host's model was asked %+v", h.samples)
			}

			// prompts/get and resources/read ask the same way.
			p, err := rt.GetPrompt(testCtx(t), "peer", "mrtr_prompt", nil)
			if err != nil || !strings.Contains(p.Text, "Greet Ada Lovelace") {
				t.Errorf("mrtr_prompt: %+v %v", p, err)
			}
			if rr, err := rt.ReadResource(testCtx(t), "peer", "mrtr://greeting"); err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "greeting for Ada Lovelace" {
				t.Errorf("mrtr://greeting: %+v %v", rr, err)
			}

			// Two rounds: the second retry carries only the second round's
			// responses and state.
			res = call("mrtr_twice")
			if res.IsError || !strings.Contains(res.Text, "done round-2:Ada Lovelace sure=true stale=false") {
				t.Errorf("mrtr_twice: %s", res.Text)
			}

			// requestState alone: retried at once, without inputResponses.
			res = call("mrtr_state")
			if res.IsError || !strings.Contains(res.Text, "resumed with come-back responses=undefined") {
				t.Errorf("mrtr_state: %s", res.Text)
			}

			// More input requests than the client answers at once: the call
			// fails clearly, nothing reaches the host, and the next call works.
			asked := len(h.forms) + len(h.samples) + len(h.urls)
			res = call("mrtr_flood")
			if !res.IsError || !strings.Contains(res.Text, "too many pending requests") {
				t.Errorf("mrtr_flood: %s", res.Text)
			}
			if n := len(h.forms) + len(h.samples) + len(h.urls); n != asked {
				t.Errorf("the flood reached the host (%d questions)", n-asked)
			}
			if res := call("echo"); res.IsError {
				t.Errorf("after the flood: %s", res.Text)
			}

			// Input requests the client cannot answer fail the call, naming
			// the key and why; the host is not asked. (The raw_ tools are
			// answered by the peer's HTTP front, past the SDK's own checks.)
			asked = len(h.forms) + len(h.samples) + len(h.urls)
			bad := map[string]string{
				"mrtr_bad_sampling": `input request "s" (sampling/createMessage) was not answered: params.maxTokens: a positive integer is required`,
			}
			if name == "http" {
				bad["raw_bad_method"] = `input request "x" has method "tools/list", which an input request cannot have`
				bad["raw_empty"] = "input_required result is malformed: it carries neither inputRequests nor requestState"
			}
			for tool, want := range bad {
				if res := call(tool); !res.IsError || !strings.Contains(res.Text, want) {
					t.Errorf("%s: %s\nwant %s", tool, res.Text, want)
				}
			}
			if n := len(h.forms) + len(h.samples) + len(h.urls); n != asked {
				t.Errorf("a malformed input request reached the host")
			}

			if name == "http" {
				// A response stream that ends before its response loses the
				// request: it is sent again, as a new request with a new id
				// (2026-07-28 has no resumption).
				res := call("cut_once")
				var ids []string
				if _, after, ok := strings.Cut(res.Text, "ids "); ok {
					_ = json.Unmarshal([]byte(strings.Fields(after)[0]), &ids)
				}
				if res.IsError || len(ids) != 2 || ids[0] == ids[1] {
					t.Errorf("cut_once (want two requests with different ids): %s", res.Text)
				}
			}

			// A declined question reaches the server as declined.
			h.mu.Lock()
			h.decline = true
			h.mu.Unlock()
			res = call("mrtr_elicit")
			if res.IsError || !strings.Contains(res.Text, "the user chose decline") {
				t.Errorf("declined: %s", res.Text)
			}

			// A call given up while its input request waits for the host:
			// the question is withdrawn from the host and nothing is retried.
			h.mu.Lock()
			h.block, h.decline = true, false
			asked = len(h.forms)
			h.mu.Unlock()
			ctx, cancel := context.WithCancel(testCtx(t))
			done := make(chan mcprt.Result, 1)
			go func() {
				done <- mcp.Execute(ctx, json.RawMessage(`{"server":"peer","tool":"mrtr_elicit","args":{}}`))
			}()
			poll(testCtx(t), t, "the host is asked", func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return len(h.forms) == asked+1
			})
			cancel()
			if res := <-done; !res.IsError {
				t.Errorf("a cancelled call succeeded: %s", res.Text)
			}
			poll(testCtx(t), t, "the question is withdrawn from the host", func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return h.withdrawn == 1
			})
			if res := call("echo"); res.IsError {
				t.Errorf("after the cancelled call: %s", res.Text)
			}
		})
	}
}
