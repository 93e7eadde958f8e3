package main

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/remote"
)

// startServe runs `runtime --config CFG serve` over the test server and
// returns the address it prints. Token files go to a directory of the
// test ($MCPRT_SHARED_DIR, set for the commands the test runs too).
func startServe(t *testing.T, flags ...string) string {
	t.Helper()
	return startServeOf(t, "ts", flags...)
}

// startServeOf is startServe with the test server named server.
func startServeOf(t *testing.T, server string, flags ...string) string {
	t.Helper()
	return startServeConfig(t, map[string]any{server: map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio")}}, flags...)
}

// startServeConfig is startServe with these servers.
func startServeConfig(t *testing.T, servers map[string]any, flags ...string) string {
	t.Helper()
	t.Setenv(remote.EnvTokenDir, filepath.Join(t.TempDir(), "tokens"))
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(testkit.Ctx(t), binary(t), append([]string{"--config", cfg, "serve"}, flags...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MCPRT_AGENT_DIR="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "runtime serve: listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return strings.Fields(rest)[0]
		}
	}
	t.Fatal("runtime serve ended without saying where it listens")
	return ""
}

// The sidecar attaches to a shared runtime with --attach: its tools and
// typed methods run there (typed subscriptions: TestSessionAttachedSubscribe).
func TestSessionAttached(t *testing.T) {
	addr := startServe(t)
	s := startSidecar(t, "--attach", addr)
	s.out = sessionSchema(t, "output")
	hello := s.await("the hello", func(string, map[string]any) bool { return true })
	if h, ok := hello["hello"].(map[string]any); !ok || !strings.Contains(string(mustJSON(h["tools"])), `"mcp"`) {
		t.Fatalf("hello %v", hello)
	}
	s.send(`{"id":1,"tool":"mcp","args":{"tool":"echo","args":{"message":"attached-hi"}}}`)
	if r, _ := s.await("the echo", hasID("1"))["result"].(map[string]any); r == nil || !strings.Contains(r["text"].(string), "echo: attached-hi") {
		t.Errorf("echo through the attached sidecar: %v", r)
	}
	s.send(`{"id":2,"method":"callTool","params":{"server":"ts","tool":"add","arguments":{"a":2,"b":5}}}`)
	if got := s.await("the typed call", hasID("2")); !strings.Contains(string(mustJSON(got["result"])), "7") {
		t.Errorf("typed call through the attached sidecar: %v", got)
	}
	s.send(`{"id":3,"method":"servers"}`)
	if got := s.await("the servers", hasID("3")); string(mustJSON(got["result"])) != `["ts"]` {
		t.Errorf("servers: %v", got)
	}
	// The CLI attaches the same way, with no other flag.
	if o := runCLI(t, nil, "--attach", addr, "call", "echo", `{"message":"cli"}`); o.code != 0 || !strings.Contains(o.stdout, "echo: cli") {
		t.Errorf("runtime --attach call: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := runCLI(t, nil, "--attach", addr, "--config", "x.json", "status"); o.code != 2 {
		t.Errorf("--attach with --config: exit %d, want 2", o.code)
	}
}

// Two `runtime serve` members with one --cluster-token form a cluster
// through --peer: a CLI attached to the second reaches the first's
// server by name. The cluster token file is created mode 0600.
func TestServeCluster(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	a := startServeOf(t, "ts", "--cluster-token", ct)
	if fi, err := os.Stat(ct); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cluster token file: %v; want mode 0600", err)
	}
	b := startServeOf(t, "other", "--cluster-token", ct, "--peer", a)
	var o outcome
	testkit.Poll(testkit.Ctx(t), t, "a's server through b (b to have a in its membership)", func() bool {
		o = runCLI(t, nil, "--attach", b, "tool", "mcp", `{"server":"ts","tool":"echo","args":{"message":"via b"}}`)
		return o.code == 0
	})
	if o.code != 0 || !strings.Contains(o.stdout, "echo: via b") {
		t.Errorf("a's server through b: %d %q %q", o.code, o.stdout, o.stderr)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// serve with mutual TLS: the CLI attaches with --tls-ca, --tls-cert and
// --tls-key, and without them is refused with a hint; a --listen beyond
// loopback without TLS is refused unless --plaintext says so.
func TestServeMutualTLS(t *testing.T) {
	ca := testkit.NewCA(t, "ca")
	cert, key := ca.Issue(t, "member", x509.ExtKeyUsageServerAuth)
	ccert, ckey := ca.Issue(t, "session", x509.ExtKeyUsageClientAuth)
	addr := startServe(t, "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca.File)
	if o := runCLI(t, nil, "--attach", addr, "--tls-ca", ca.File, "--tls-cert", ccert, "--tls-key", ckey, "call", "echo", `{"message":"tls"}`); o.code != 0 || !strings.Contains(o.stdout, "echo: tls") {
		t.Errorf("runtime --attach with TLS: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := runCLI(t, nil, "--attach", addr, "call", "echo", `{"message":"x"}`); o.code != 1 || !strings.Contains(o.stderr, "mutual TLS") {
		t.Errorf("runtime --attach without TLS: %d %q", o.code, o.stderr)
	}
	if o := runCLI(t, nil, "--attach", addr, "--tls-ca", ca.File, "call", "echo", `{}`); o.code != 2 {
		t.Errorf("--tls-ca alone: exit %d, want 2 (%q)", o.code, o.stderr)
	}
	if o := runCLI(t, nil, "--attach", addr, "--attach-listen", "192.0.2.1:0", "call", "echo", `{}`); o.code != 2 || !strings.Contains(o.stderr, "needs TLS") {
		t.Errorf("--attach-listen beyond loopback without TLS: %d %q", o.code, o.stderr)
	}
	if o := runCLI(t, nil, "--tls-ca", ca.File, "status"); o.code != 2 {
		t.Errorf("--tls-ca without --attach: exit %d, want 2", o.code)
	}
	if o := runCLI(t, nil, "--config", "x.json", "serve", "--listen", "0.0.0.0:0"); o.code != 2 || !strings.Contains(o.stderr, "--plaintext") {
		t.Errorf("serve on 0.0.0.0 without TLS: %d %q", o.code, o.stderr)
	}
}
