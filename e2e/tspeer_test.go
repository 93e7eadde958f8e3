package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// legacyPeers are the 2025-11-25 test peer (official TypeScript SDK v1)
// over Streamable HTTP and stdio.
func legacyPeers(t *testing.T) map[string]config.Server {
	url, _ := testenv.StartTSPeer(t, "legacy-http")
	node, args := testenv.TSPeerStdio(t, "legacy-stdio")
	return map[string]config.Server{"http": {URL: url}, "stdio": {Command: node, Args: args}}
}

func startPeerRuntime(t *testing.T, srv config.Server, hooks mcprt.ClientHooks, logger *slog.Logger) (*mcprt.Runtime, func(tool, args string) mcprt.Result) {
	t.Helper()
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{
		Config: &config.File{MCPServers: map[string]config.Server{"peer": srv}}, AgentDir: t.TempDir(), Client: hooks, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	return rt, func(tool, args string) mcprt.Result {
		return mcp.Execute(testCtx(t), json.RawMessage(`{"server":"peer","tool":"`+tool+`","args":`+args+`}`))
	}
}

// A server that withdraws its own pending question (notifications/cancelled
// for its elicitation request) withdraws it from the host: the hook's
// context ends, and the server's call goes on without an answer.
func TestServerCancellationWithTSPeer(t *testing.T) {
	for name, srv := range legacyPeers(t) {
		t.Run(name, func(t *testing.T) {
			var asked, withdrawn atomic.Int32
			_, call := startPeerRuntime(t, srv, mcprt.ClientHooks{
				Elicit: func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
					asked.Add(1)
					<-ctx.Done() // a person who has not answered yet
					withdrawn.Add(1)
					return mcprt.ElicitAnswer{}, ctx.Err()
				},
			}, nil)
			done := make(chan mcprt.Result, 1)
			go func() { done <- call("withdraw", `{}`) }()
			poll(testCtx(t), t, "the host is asked", func() bool { return asked.Load() == 1 })
			if res := call("withdraw_now", `{}`); res.IsError || !strings.Contains(res.Text, "withdrawn") {
				t.Fatalf("withdraw_now: %s", res.Text)
			}
			poll(testCtx(t), t, "the question is withdrawn from the host", func() bool { return withdrawn.Load() == 1 })
			res := <-done
			if res.IsError || !strings.Contains(res.Text, "withdrawn: ") {
				t.Errorf("the withdrawing call: %s", res.Text)
			}
		})
	}
}

// A flood of server requests beyond the bound: 16 wait for the host, the
// rest are answered -32603 "too many pending requests" at once, and other
// calls are unaffected meanwhile.
func TestServerRequestFloodWithTSPeer(t *testing.T) {
	for name, srv := range legacyPeers(t) {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Int32
			release := make(chan struct{})
			_, call := startPeerRuntime(t, srv, mcprt.ClientHooks{
				Elicit: func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
					asked.Add(1)
					select {
					case <-release:
					case <-ctx.Done():
						return mcprt.ElicitAnswer{}, ctx.Err()
					}
					return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept, Content: map[string]any{"answer": "x"}}, nil
				},
			}, nil)
			done := make(chan mcprt.Result, 1)
			go func() { done <- call("flood", `{"n":20}`) }()
			poll(testCtx(t), t, "16 questions wait for the host", func() bool { return asked.Load() == 16 })
			if res := call("echo", `{"text":"still here"}`); res.IsError || !strings.Contains(res.Text, "echo: still here") {
				t.Errorf("a call during the flood: %s", res.Text)
			}
			close(release)
			res := <-done
			if res.IsError || !strings.Contains(res.Text, `{"accepted":16,"tooMany":4,"other":[]}`) {
				t.Errorf("flood: %s", res.Text)
			}
			if n := asked.Load(); n != 16 {
				t.Errorf("the host was asked %d questions, want 16", n)
			}
		})
	}
}

// Streams cut at chosen points (SEP-1699): the server closes a POST
// response stream mid-way, and its standalone GET stream; the client
// resumes each with Last-Event-ID after the server's retry (the server
// counts the replays) and never sends a request again (the tool ran once).
// A log message and a server request sent while the GET stream was down
// arrive on the resumed stream; the request is answered.
func TestCutStreamsWithTSPeer(t *testing.T) {
	url, _ := testenv.StartTSPeer(t, "legacy-http")
	var mu sync.Mutex
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	logged := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), s)
	}
	var asked atomic.Value
	asked.Store("")
	_, call := startPeerRuntime(t, config.Server{URL: url, LogLevel: "info"}, mcprt.ClientHooks{
		Elicit: func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
			asked.Store(q.Message)
			return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept, Content: map[string]any{"answer": "yes"}}, nil
		},
	}, logger)
	stats := func() string { return call("stats", `{}`).Text }

	res := call("post_cut", `{}`)
	if res.IsError || !strings.Contains(res.Text, "post_cut done, run 1") {
		t.Errorf("post_cut: %s", res.Text)
	}
	poll(testCtx(t), t, "the message sent after the cut", func() bool { return logged("post_cut after the cut") })
	if s := stats(); !strings.Contains(s, `"post_cut":1`) || !strings.Contains(s, `"POST"`) {
		t.Errorf("the POST stream was not resumed once with Last-Event-ID (or the request was sent again): %s", s)
	}

	if res := call("get_push", `{"text":"before the GET cut"}`); res.IsError {
		t.Fatalf("get_push: %s", res.Text)
	}
	poll(testCtx(t), t, "a message on the GET stream", func() bool { return logged("before the GET cut") })
	if res := call("get_cut", `{}`); res.IsError || !strings.Contains(res.Text, "cut") {
		t.Fatalf("get_cut: %s", res.Text)
	}
	poll(testCtx(t), t, "the message sent while the GET stream was down", func() bool { return logged("pushed while the GET stream was down") })
	poll(testCtx(t), t, "the question sent while the GET stream was down", func() bool {
		return asked.Load().(string) == "asked while the GET stream was down"
	})
	poll(testCtx(t), t, "the server has the answer", func() bool { return strings.Contains(stats(), `"get_cut_answer:accept":1`) })
	s := stats()
	t.Logf("server stats: %s", s)
	if !strings.Contains(s, `"GET"`) || !strings.Contains(s, `"get_cut":1`) {
		t.Errorf("the GET stream was not resumed with Last-Event-ID: %s", s)
	}
}
