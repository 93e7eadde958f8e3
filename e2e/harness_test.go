package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
	"github.com/mcprt/mcprt/transports"
)

// The tests of the embedding API run the whole runtime against real MCP
// servers in separate processes (the test binary re-executed as
// internal/testonly/testserver), with a manual clock for everything the runtime
// times. Nothing sleeps: tests wait for what the connection port delivers
// (recDialer), for timers being armed (testClock), or poll state that
// nothing announces with a deadline.

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
	sharedChildIfRequested() // shared_test.go
	// Saved full results go to a directory of this run, not the user's.
	results, err := os.MkdirTemp("", "mcprt-results-")
	if err != nil {
		panic(err)
	}
	os.Setenv(mcprt.EnvResultDir, results)
	code := m.Run()
	os.RemoveAll(results)
	os.Exit(code)
}

// rig is a running mcprt.Runtime over real transports, with a manual clock.
type rig struct {
	t      *testing.T
	ctx    context.Context
	clk    *testClock
	dialer *recDialer // nil when the runtime uses its own dialer
	real   *transports.Dialer
	rt     *mcprt.Runtime
	mcp    mcprt.Tool
}

// newRig starts a mcprt.Runtime over servers. With decorate set, the connection
// port is a recDialer over a real dialer (whose grace periods run on the
// wall clock); otherwise the runtime builds its production dialer.
func newRig(t *testing.T, servers map[string]config.Server, decorate bool) *rig {
	t.Helper()
	return startRig(t, &config.File{MCPServers: servers}, decorate)
}

// newRigFile starts a mcprt.Runtime over a whole in-memory configuration, with a
// recDialer.
func newRigFile(t *testing.T, f *config.File) *rig {
	t.Helper()
	return startRig(t, f, true)
}

func startRig(t *testing.T, f *config.File, decorate bool) *rig {
	t.Helper()
	return startRigWith(t, f, decorate, mcprt.Options{})
}

// startRigWith is startRig with more options (their Config, and the Clock,
// Rand and Dialer of their Sim, are the rig's).
func startRigWith(t *testing.T, f *config.File, decorate bool, opts mcprt.Options) *rig {
	t.Helper()
	r := &rig{t: t, ctx: testCtx(t), clk: newTestClock()}
	sim := simseam.Get(opts.Sim)
	opts.Config, sim.Clock, sim.Rand = f, r.clk, clock.NewSeededRand(7)
	if decorate {
		r.real = &transports.Dialer{Clock: clock.Real{}}
		r.dialer = newRecDialer(r.real)
		sim.Dialer = r.dialer
	}
	opts.Sim = &sim
	rt, err := mcprt.Start(r.ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if issues := rt.ConfigIssues(); len(issues) > 0 {
		t.Fatalf("configuration issues: %v", issues)
	}
	r.rt = rt
	tool, ok := rt.Tool(mcprt.MCPToolName)
	if !ok {
		t.Fatal("no mcp tool")
	}
	r.mcp = tool
	t.Cleanup(r.close)
	return r
}

func (r *rig) close() {
	if r.rt == nil {
		return
	}
	if r.dialer != nil {
		r.dialer.ReleaseClosed()
	}
	done := make(chan error, 1)
	go func() {
		err := r.rt.Close()
		if r.real != nil {
			r.real.Wait()
		}
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

// exec runs the mcp tool as a model would.
func (r *rig) exec(ctx context.Context, args string) mcprt.Result {
	return r.mcp.Execute(ctx, json.RawMessage(args))
}

// start runs the mcp tool on its own goroutine.
func (r *rig) start(ctx context.Context, args string) <-chan mcprt.Result {
	ch := make(chan mcprt.Result, 1)
	go func() { ch <- r.exec(ctx, args) }()
	return ch
}

func (r *rig) recv(ch <-chan mcprt.Result, what string) mcprt.Result {
	r.t.Helper()
	select {
	case res := <-ch:
		return res
	case <-r.ctx.Done():
		r.t.Fatalf("no result for %s", what)
	}
	return mcprt.Result{}
}

func (r *rig) status(server string) messages.ServerStatus {
	r.t.Helper()
	for _, s := range r.rt.ServerStatuses() {
		if s.Name == server {
			return s
		}
	}
	r.t.Fatalf("no status for %s", server)
	return messages.ServerStatus{}
}

// selfServer configures the test server over stdio.
func selfServer(t *testing.T, flags string, env ...string) config.Server {
	return config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio "+flags, env...)}
}

// wantOK fails unless res succeeded with text want.
func wantOK(t *testing.T, res mcprt.Result, want string) {
	t.Helper()
	if res.IsError || res.Text != want {
		t.Fatalf("want %q, got %q (error %v, details %v)", want, res.Text, res.IsError, res.Details)
	}
}

// wantError fails unless res is an error with code whose text is one line
// that names server (when server is not empty).
func wantError(t *testing.T, res mcprt.Result, code, server string) {
	t.Helper()
	if !res.IsError || res.ErrorCode() != code {
		t.Fatalf("want error %s, got %q (code %q)", code, res.Text, res.ErrorCode())
	}
	if strings.ContainsAny(res.Text, "\r\n") {
		t.Fatalf("error is not one line: %q", res.Text)
	}
	if server != "" && (!strings.Contains(res.Text, fmt.Sprintf("server %q", server)) || res.Details["server"] != server) {
		t.Fatalf("error does not name server %q: %q %v", server, res.Text, res.Details)
	}
}

// pidWrapper runs the test server through /bin/sh, which writes its own pid
// to pidFile and then execs the server (keeping the pid), so a test knows
// the pid of its direct child.
func pidWrapper(t *testing.T, pidFile, flags string, env ...string) config.Server {
	return config.Server{
		Command: "/bin/sh",
		Args:    []string{"-c", `echo $$ > "$MCPRT_PIDFILE.tmp" && mv "$MCPRT_PIDFILE.tmp" "$MCPRT_PIDFILE" && exec "$0"`, testenv.Self(t)},
		Env:     testenv.TestServerEnv("--stdio "+flags, append(env, "MCPRT_PIDFILE="+pidFile)...),
	}
}

// readPid waits for a pid file written by pidWrapper.
func readPid(ctx context.Context, t *testing.T, path string) int {
	t.Helper()
	pid := 0
	poll(ctx, t, "pid file "+path, func() bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		_, err = fmt.Sscanf(string(data), "%d", &pid)
		return err == nil && pid > 0
	})
	return pid
}
