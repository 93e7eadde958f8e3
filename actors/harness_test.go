package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
	"github.com/mcprt/mcprt/transports"
)

// The tests of this package run the actors against real MCP servers in
// separate processes (the test binary re-executed as internal/testonly/testserver).
// Lifecycle time (idle timeouts, health checks, backoff, failure memory,
// deadlines, restart delays) runs on a manual clock that only the test
// advances; the transports keep the wall clock for their process grace
// periods, which well-behaved servers never reach. Nothing sleeps: tests wait
// on what the connection port delivers (recorded by recDialer) or on timers
// being armed (recorded by testClock).

// Shared helpers (internal/testonly/testkit), under this package's names.
type (
	signal    = testkit.Signal
	testClock = testkit.Clock
	recDialer = testkit.RecDialer
)

var (
	testCtx      = testkit.Ctx
	until        = testkit.Until
	poll         = testkit.Poll
	procGone     = testkit.ProcGone
	newTestClock = testkit.NewClock
	newRecDialer = testkit.NewRecDialer
)

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	os.Exit(m.Run())
}

// rig is a running actor system over real transports.
type rig struct {
	t      *testing.T
	ctx    context.Context
	clk    *testClock
	real   *transports.Dialer
	dialer *recDialer
	sys    *System
}

// newRig starts the actors for servers; edit may change the Config.
func newRig(t *testing.T, servers []ServerConfig, edit ...func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, ctx: testCtx(t), clk: newTestClock(), real: &transports.Dialer{Clock: clock.Real{}}}
	r.dialer = newRecDialer(r.real)
	cfg := Config{Servers: servers, Clock: r.clk, Rand: clock.NewSeededRand(1), Dialer: r.dialer, ClientName: "mcprt-test", ClientVersion: "0"}
	for _, f := range edit {
		f(&cfg)
	}
	sys, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.sys = sys
	t.Cleanup(func() { r.close() })
	return r
}

// close shuts the system down and waits for every transport goroutine,
// failing the test (rather than hanging) if that does not happen.
func (r *rig) close() {
	r.dialer.SetHold(false)
	r.dialer.SetHoldClosed(false)
	done := make(chan error, 1)
	go func() {
		err := r.sys.Close()
		r.real.Wait()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			r.t.Errorf("Close: %v", err)
		}
	case <-ctx.Done():
		r.t.Errorf("Close did not return")
	}
}

// stdio configures the test server over stdio with flags and extra
// environment; its call deadline is a day, so advancing the clock past an
// idle timeout never ends a call by accident.
func stdio(t *testing.T, name, flags string, env ...string) ServerConfig {
	return ServerConfig{
		Name:        name,
		Endpoint:    messages.Endpoint{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio "+flags, env...)},
		CallTimeout: 24 * time.Hour,
	}
}

func withPolicy(c ServerConfig, p supervisor.Policy) ServerConfig {
	c.Policy = p
	return c
}

// callParams builds tools/call params; progress adds a progress token, which
// makes the hang tool announce with a notification that it is running.
func callParams(tool, args, progress string) json.RawMessage {
	if args == "" {
		args = "{}"
	}
	meta := ""
	if progress != "" {
		meta = fmt.Sprintf(`,"_meta":{"progressToken":%q}`, progress)
	}
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":%s%s}`, tool, args, meta))
}

// call makes a model's tool call and waits for it.
func (r *rig) call(ctx context.Context, server, tool, args string) messages.Reply {
	return r.sys.Request(ctx, server, "tools/call", callParams(tool, args, ""), messages.DeadlineCall, messages.OriginModel)
}

// start makes a tool call on its own goroutine and returns its reply channel.
func (r *rig) start(ctx context.Context, server, tool, args, progress string) <-chan messages.Reply {
	ch := make(chan messages.Reply, 1)
	go func() {
		ch <- r.sys.Request(ctx, server, "tools/call", callParams(tool, args, progress), messages.DeadlineCall, messages.OriginModel)
	}()
	return ch
}

// waitProgress waits until server sent a progress notification for token.
func (r *rig) waitProgress(server, token string) {
	r.t.Helper()
	r.dialer.Wait(r.ctx, r.t, "progress "+token, func() bool {
		for _, n := range r.dialer.Notes() {
			if n.Server == server && n.Method == "notifications/progress" && strings.Contains(string(n.Params), `"`+token+`"`) {
				return true
			}
		}
		return false
	})
}

// recv waits for a reply.
func (r *rig) recv(ch <-chan messages.Reply, what string) messages.Reply {
	r.t.Helper()
	select {
	case rep := <-ch:
		return rep
	case <-r.ctx.Done():
		r.t.Fatalf("no reply to %s", what)
	}
	return messages.Reply{}
}

// status returns server's status; the query is ordered after every message
// this goroutine sent before, and after every port outcome already recorded.
func (r *rig) status(server string) messages.ServerStatus {
	r.t.Helper()
	for _, s := range r.sys.Status(r.ctx) {
		if s.Name == server {
			return s
		}
	}
	r.t.Fatalf("no status for %s", server)
	return messages.ServerStatus{}
}

// text returns the first text content of a successful tools/call reply.
func text(t *testing.T, rep messages.Reply) string {
	t.Helper()
	if rep.Err != nil {
		t.Fatalf("call failed: %v (%s)", rep.Err, rep.Err.Code())
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(rep.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("malformed result %s", rep.Result)
	}
	return res.Content[0].Text
}

// wantKind fails unless rep failed with kind.
func wantKind(t *testing.T, rep messages.Reply, kind messages.ErrorKind) {
	t.Helper()
	if rep.Err == nil || rep.Err.Kind != kind {
		t.Fatalf("want %s, got %+v (result %s)", kind.Code(), rep.Err, rep.Result)
	}
}

// wantState fails unless server is in state.
func (r *rig) wantState(server string, state messages.ServerState) messages.ServerStatus {
	r.t.Helper()
	st := r.status(server)
	if st.State != state {
		r.t.Fatalf("%s: state %s, want %s (last error %v)", server, st.State, state, st.LastError)
	}
	return st
}
