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

// callerHost records the caller tag of every question and progress report.
type callerHost struct {
	mu       sync.Mutex
	asked    []any
	progress []any
	// pair, when set, holds every elicitation until two have arrived (at
	// this host or at the others sharing it), so two calls' questions are
	// open at once.
	pair *pairGate
}

// pairGate holds whoever waits at it until two have arrived.
type pairGate struct {
	mu   sync.Mutex
	n    int
	both chan struct{}
}

func newPairGate() *pairGate { return &pairGate{both: make(chan struct{})} }

// wait arrives at the gate and waits until two have arrived, or ctx ends.
func (g *pairGate) wait(ctx context.Context) error {
	g.mu.Lock()
	if g.n++; g.n == 2 {
		close(g.both)
	}
	g.mu.Unlock()
	select {
	case <-g.both:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *callerHost) hooks() mcprt.ClientHooks {
	return mcprt.ClientHooks{
		Elicit: func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
			h.mu.Lock()
			h.asked = append(h.asked, mcprt.CallerOf(ctx))
			h.mu.Unlock()
			if h.pair != nil {
				if err := h.pair.wait(ctx); err != nil {
					return mcprt.ElicitAnswer{}, err
				}
			}
			return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
		},
		Progress: func(p mcprt.Progress) {
			h.mu.Lock()
			h.progress = append(h.progress, p.Caller)
			h.mu.Unlock()
		},
	}
}

// A call's caller tag (WithCaller) comes back with the server's messages
// that belong to the call: on Streamable HTTP a question read from the
// call's own response stream carries it, even with two calls' questions
// open at once; on stdio the protocol cannot tie a question to a call, so
// none does. Progress of the call carries it on both.
func TestCallerTagComesBackWithTheCallsMessages(t *testing.T) {
	for name, srv := range everythingServers(t) {
		t.Run(name, func(t *testing.T) {
			h := &callerHost{pair: newPairGate()}
			rt, err := mcprt.Start(testCtx(t), mcprt.Options{
				Config: &config.File{MCPServers: map[string]config.Server{"every": srv}}, AgentDir: t.TempDir(), Client: h.hooks(),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			mcp, _ := rt.Tool(mcprt.MCPToolName)
			call := func(who, tool, args string) mcprt.Result {
				return mcp.Execute(mcprt.WithCaller(testCtx(t), who), json.RawMessage(`{"tool":"`+tool+`","args":`+args+`}`))
			}
			var wg sync.WaitGroup
			for _, who := range []string{"alice", "bob"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if res := call(who, "trigger-elicitation-request", `{}`); res.IsError {
						t.Errorf("%s's call: %s", who, res.Text)
					}
				}()
			}
			wg.Wait()
			h.mu.Lock()
			asked := append([]any(nil), h.asked...)
			h.mu.Unlock()
			if len(asked) != 2 {
				t.Fatalf("the host was asked %d times, want 2", len(asked))
			}
			if name == "http" {
				if !(asked[0] == "alice" && asked[1] == "bob") && !(asked[0] == "bob" && asked[1] == "alice") {
					t.Errorf("the questions came with callers %v, want alice and bob", asked)
				}
			} else if asked[0] != nil || asked[1] != nil {
				t.Errorf("on stdio no question can be tied to a call, yet they came with %v", asked)
			}

			if res := call("carol", "trigger-long-running-operation", `{"duration":0.3,"steps":3}`); res.IsError {
				t.Fatalf("long-running operation: %s", res.Text)
			}
			h.mu.Lock()
			progress := append([]any(nil), h.progress...)
			h.mu.Unlock()
			if len(progress) == 0 {
				t.Fatal("no progress reached the host")
			}
			for _, c := range progress {
				if c != "carol" {
					t.Errorf("progress of carol's call came with caller %v", c)
				}
			}
		})
	}
}

// The input requests of a 2026-07-28 call belong to it on every
// transport, stdio included.
func TestCallerTagOnInputRequests(t *testing.T) {
	node, args := testenv.TSPeerStdio(t, "modern-stdio")
	h := &callerHost{}
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{
		Config:   &config.File{MCPServers: map[string]config.Server{"peer": {Command: node, Args: args, ProtocolVersion: "2026-07-28"}}},
		AgentDir: t.TempDir(), Client: h.hooks(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	res := mcp.Execute(mcprt.WithCaller(testCtx(t), "dave"), json.RawMessage(`{"server":"peer","tool":"mrtr_elicit","args":{}}`))
	if !strings.Contains(res.Text, "decline") && res.IsError {
		t.Logf("mrtr_elicit: %s", res.Text)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.asked) != 1 || h.asked[0] != "dave" {
		t.Errorf("the input request came with callers %v, want [dave]", h.asked)
	}
}
