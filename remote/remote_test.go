package remote

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	// Token files a test does not place (a cluster token's default place)
	// go to a directory of the run, never the user's.
	dir, err := os.MkdirTemp("", "mcprt-remote-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv(EnvTokenDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// rig is a member in this process: a runtime over servers, served.
type rig struct {
	rt  *mcprt.Runtime
	srv *Server
}

func newRig(t testing.TB, servers map[string]config.Server, opts ServeOptions) *rig {
	t.Helper()
	return startRig(t, servers, opts, false)
}

// startRig starts a member; asking has its runtime ask the sessions
// (Server.ClientHooks).
func startRig(t testing.TB, servers map[string]config.Server, opts ServeOptions, asking bool) *rig {
	t.Helper()
	if opts.TokenFile == "" {
		opts.TokenFile = filepath.Join(t.TempDir(), "member.token")
	}
	if opts.ClusterTokenFile == "" {
		opts.ClusterTokenFile = filepath.Join(t.TempDir(), "cluster.token")
	}
	srv := NewServer(opts)
	o := mcprt.Options{Config: &config.File{MCPServers: servers}, Host: srv.Host()}
	if asking {
		o.Client = srv.ClientHooks()
	}
	rt, err := mcprt.Start(testkit.Ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(rt); err != nil {
		rt.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Close()
		_ = rt.Close()
	})
	return &rig{rt: rt, srv: srv}
}

func (r *rig) attach(t *testing.T, opts AttachOptions) *Session {
	t.Helper()
	opts.TokenFile = r.srv.TokenFile()
	s, err := Attach(testkit.Ctx(t), r.srv.Addr(), opts)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testServer(t testing.TB, extraEnv map[string]string) config.Server {
	env := testenv.TestServerEnv("--stdio")
	for k, v := range extraEnv {
		env[k] = v
	}
	return config.Server{Command: testenv.Self(t), Env: env}
}

func leases(r *rig, server string) int {
	for _, st := range r.rt.ServerStatuses() {
		if st.Name == server {
			return st.Leases
		}
	}
	return -1
}

// A member refuses every stream and call without its token, before
// protoactor reads anything; the token file is 0600.
func TestMemberRefusesPeersWithoutToken(t *testing.T) {
	r := newRig(t, nil, ServeOptions{})
	fi, err := os.Stat(r.srv.TokenFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	ctx := testkit.Ctx(t)
	for _, opts := range [][]grpc.DialOption{
		{grpc.WithTransportCredentials(insecure.NewCredentials())},
		{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(tokenCreds("wrong"))},
	} {
		conn, err := grpc.DialContext(ctx, r.srv.Addr(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		c := remote.NewRemotingClient(conn)
		if _, err := c.ListProcesses(ctx, &remote.ListProcessesRequest{}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("unary call without the token: %v, want Unauthenticated", err)
		}
		stream, err := c.Receive(ctx)
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), refusal) {
			t.Errorf("stream without the token: %v, want Unauthenticated", err)
		}
		conn.Close()
	}
	bad := filepath.Join(t.TempDir(), "bad.token")
	if err := os.WriteFile(bad, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(ctx, r.srv.Addr(), AttachOptions{TokenFile: bad}); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("attach with a wrong token: %v", err)
	}
	if err := os.Chmod(r.srv.TokenFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(ctx, r.srv.Addr(), AttachOptions{TokenFile: r.srv.TokenFile()}); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("attach with a token file others may read: %v", err)
	}
	if n := r.srv.Sessions(); n != 0 {
		t.Errorf("%d sessions after refused attaches", n)
	}
}

// A session that stops saying it is alive is ended after the session
// timeout (on the member's clock): its call in flight is answered once,
// its lease returns, and later calls fail at once.
func TestSilentSessionEnds(t *testing.T) {
	clk := testkit.NewClock()
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{Clock: clk})
	// The session's heartbeats are on a clock that never moves: it is silent.
	s := r.attach(t, AttachOptions{Clock: testkit.NewClock()})
	ctx := testkit.Ctx(t)
	done := make(chan mcprt.Result, 1)
	go func() {
		tool, _ := s.Tool(mcprt.MCPToolName)
		done <- tool.Execute(ctx, json.RawMessage(`{"tool":"hang","args":{}}`))
	}()
	testkit.Poll(ctx, t, "the hang call in flight", func() bool { return leases(r, "ts") == 1 })
	clk.Advance(DefaultSessionTimeout)
	res := <-done
	if !res.IsError || res.ErrorCode() != messages.KindDisconnected.Code() || !strings.Contains(res.Text, "no heartbeat") {
		t.Fatalf("call of an expired session: %q (%v)", res.Text, res.Details)
	}
	testkit.Poll(ctx, t, "the lease returned", func() bool { return leases(r, "ts") == 0 })
	testkit.Poll(ctx, t, "the session gone", func() bool { return r.srv.Sessions() == 0 })
	if _, err := s.CallTool(ctx, "ts", "echo", nil); !errors.Is(err, mcprt.ErrDisconnected) {
		t.Errorf("call after the session ended: %v", err)
	}
}

// Sessions name tools and servers, never commands: whatever a session
// sends, nothing the configuration does not name is started.
func TestSessionsCannotStartCommands(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	cmd := "touch " + marker
	for _, req := range []struct{ op, name, args string }{
		{"exec", "", `{"command":"` + cmd + `"}`},
		{opTool, mcprt.MCPToolName, `{"server":"evil","command":"/bin/sh","args":["-c","` + cmd + `"]}`},
		{opTool, mcprt.MCPToolName, `{"connect":"/bin/sh -c '` + cmd + `'"}`},
		{opConnect, "", `{"server":"sh -c '` + cmd + `'"}`},
		{opCallTool, "", `{"server":"/bin/touch","tool":"x","arguments":{}}`},
		{opTool, "/bin/sh", `{}`},
	} {
		b, err := s.request(ctx, req.op, req.name, json.RawMessage(req.args))
		var res mcprt.Result
		if err == nil {
			_ = json.Unmarshal(b, &res)
		}
		if err == nil && !res.IsError {
			t.Errorf("%s %s %s was answered without error: %s", req.op, req.name, req.args, b)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a session started a command the configuration does not name")
	}
	if got := r.rt.Servers(); len(got) != 1 || got[0] != "ts" {
		t.Errorf("servers %v after the session's attempts", got)
	}
}

// tap records every wire message a session receives.
type tap struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Secrets of the serving configuration never cross to sessions: every
// byte a session receives, for every operation, is free of them.
func TestSecretsStayOnTheMember(t *testing.T) {
	const S = "SENTINEL-sh4red"
	httpURL, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0")
	servers := map[string]config.Server{
		"ts":      testServer(t, map[string]string{"API_KEY": S}),
		"failing": {Command: "/bin/sh", Args: []string{"-c", `echo "bad key $API_KEY" >&2; exit 1`}, Env: map[string]string{"API_KEY": S}},
		"web":     {URL: httpURL + "?token=" + S, Headers: map[string]string{"X-Token": S}},
		// Configuration issues about fields holding the secret.
		"badURL":    {URL: "ftp://" + S + ".example/?token=" + S},
		"badHeader": {URL: httpURL, Headers: map[string]string{"X-Token": S + "\nx"}},
	}
	r := newRig(t, servers, ServeOptions{})
	var rec tap
	wireTapForTest = func(b []byte) {
		rec.mu.Lock()
		rec.buf.Write(b)
		rec.mu.Unlock()
	}
	t.Cleanup(func() { wireTapForTest = nil })
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	tool, _ := s.Tool(mcprt.MCPToolName)
	for _, args := range []string{`{}`, `{"server":"ts"}`, `{"server":"failing"}`, `{"server":"web"}`, `{"tool":"echo","args":{"message":"visible"}}`,
		`{"connect":"web"}`, `{"connect":"failing"}`, `{"tool":"stderr","args":{"text":"x"}}`, `{"search":"echo"}`} {
		tool.Execute(ctx, json.RawMessage(args))
	}
	_, _ = s.CallTool(ctx, "ts", "echo", map[string]any{"message": "visible"})
	_, _ = s.CallTool(ctx, "failing", "x", nil)
	_, _ = s.CallTool(ctx, "web", "echo", map[string]any{"message": "w"})
	_, _ = s.Connect(ctx, "failing", true)
	s.Status()
	s.ServerStatuses()
	s.Tools()
	s.RenderResource(ctx, "web", "note://x")
	s.RenderTemplate(ctx, "web", "note://{id}", map[string]any{"id": "x"})
	_, _ = s.GetPromptWords(ctx, "web", "p", []string{"a=b"})
	if issues := s.ConfigIssues(); len(issues) < 2 {
		t.Errorf("the configuration's issues: %+v", issues)
	}
	rec.mu.Lock()
	seen := rec.buf.String()
	rec.mu.Unlock()
	if !strings.Contains(seen, "echo: visible") || !strings.Contains(seen, "bad key") {
		t.Fatalf("the tap saw no traffic: %s", seen)
	}
	if strings.Contains(seen, S) {
		i := strings.Index(seen, S)
		t.Fatalf("a secret crossed to the session: …%s…", seen[max(0, i-200):min(len(seen), i+50)])
	}
}

// A member that stops (Close) fails its sessions' calls in flight once,
// with disconnected, and the sessions' later calls at once.
func TestMemberStopFailsCallsOnce(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	done := make(chan mcprt.Result, 2)
	tool, _ := s.Tool(mcprt.MCPToolName)
	go func() { done <- tool.Execute(ctx, json.RawMessage(`{"tool":"hang","args":{}}`)) }()
	testkit.Poll(ctx, t, "the hang call in flight", func() bool { return leases(r, "ts") == 1 })
	if err := r.srv.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.IsError || res.ErrorCode() != messages.KindDisconnected.Code() {
		t.Fatalf("call in flight when the member stopped: %q (%v)", res.Text, res.Details)
	}
	if _, err := os.Stat(r.srv.TokenFile()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("token file left behind: %v", err)
	}
	testkit.Poll(ctx, t, "later calls fail at once", func() bool {
		_, err := s.CallTool(ctx, "ts", "echo", nil)
		return errors.Is(err, mcprt.ErrDisconnected)
	})
	select {
	case extra := <-done:
		t.Fatalf("a second answer: %+v", extra)
	default:
	}
}
