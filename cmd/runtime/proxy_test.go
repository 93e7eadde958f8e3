package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// The proxy tool's modes as commands: connect lists and caches the catalog;
// status, search, describe and instructions then answer from the cache in
// new processes, in text and with --json.
func TestProxyCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	srv := map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --instructions Call-echo-first.")}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": srv}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPRT_AGENT_DIR=" + filepath.Join(dir, "agent")}
	if o := runCLI(t, env, "connect", "t", "--config", cfg); o.code != 0 || !strings.HasPrefix(o.stdout, "t (") || !strings.Contains(o.stdout, "- echo - ") {
		t.Fatalf("connect: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent", "mcp-cache.json")); err != nil {
		t.Fatalf("connect left no cache: %v", err)
	}
	if o := runCLI(t, env, "status", "--config", cfg); o.code != 0 || !strings.Contains(o.stdout, "○ t (") || !strings.Contains(o.stdout, "tools, cached)") {
		t.Fatalf("status: %q %q", o.stdout, o.stderr)
	}
	o := runCLI(t, env, "search", "echo", "--config", cfg, "--json")
	var res struct {
		Text    string         `json:"text"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil || o.code != 0 || res.Details["count"] == nil || !strings.Contains(res.Text, "- echo (t)") {
		t.Fatalf("search --json: %v %q %q", err, o.stdout, o.stderr)
	}
	if o := runCLI(t, env, "describe", "t_echo", "--config", cfg); o.code != 0 || !strings.HasPrefix(o.stdout, "echo\nServer: t\n") || !strings.Contains(o.stdout, "message (string, required)") {
		t.Fatalf("describe: %q %q", o.stdout, o.stderr)
	}
	if o := runCLI(t, env, "describe", "ehco", "--config", cfg); o.code != 1 || !strings.Contains(o.stderr, "did you mean echo") {
		t.Fatalf("describe miss: %d %q", o.code, o.stderr)
	}
	if o := runCLI(t, env, "instructions", "t", "--config", cfg); o.code != 0 || strings.TrimSpace(o.stdout) != "Call-echo-first." {
		t.Fatalf("instructions: %q %q", o.stdout, o.stderr)
	}
	if o := runCLI(t, env, "search", "--config", cfg, "--regex", "^ec"); o.code != 0 || !strings.Contains(o.stdout, "- echo (t)") {
		t.Fatalf("search --regex: %q %q", o.stdout, o.stderr)
	}
	// These commands answer from the cache without starting the runtime;
	// they print what the runtime's own mcp tool prints (runtime tool mcp
	// always starts one), in text and with --json.
	for _, c := range []struct {
		cmd []string
		mcp string
	}{
		{[]string{"status"}, `{}`},
		{[]string{"list"}, `{"server":"t"}`},
		{[]string{"search", "echo", "--limit", "2"}, `{"search":"echo","limit":2}`},
		{[]string{"describe", "t_echo"}, `{"describe":"t_echo"}`},
		{[]string{"describe", "ehco"}, `{"describe":"ehco"}`},
		{[]string{"instructions", "t"}, `{"instructions":"t"}`},
	} {
		for _, flags := range [][]string{{"--config", cfg}, {"--config", cfg, "--json"}} {
			fast := runCLI(t, env, append(c.cmd, flags...)...)
			full := runCLI(t, env, append([]string{"tool", "mcp", c.mcp}, flags...)...)
			if fast != full || fast.stdout+fast.stderr == "" {
				t.Errorf("%v %v:\n%+v\nruntime tool mcp %s:\n%+v", c.cmd, flags, fast, c.mcp, full)
			}
		}
	}
}

// Runtimes in separate processes that list different servers at the same
// time share the metadata cache: every one's entry survives.
func TestRuntimesShareTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	servers := map[string]any{}
	names := []string{"s1", "s2", "s3", "s4"}
	for _, n := range names {
		servers[n] = map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio")}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPRT_AGENT_DIR=" + filepath.Join(dir, "agent")}
	binary(t)
	outs := make([]outcome, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runCLI(t, env, "connect", n, "--config", cfg)
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o.code != 0 {
			t.Fatalf("connect %s: %+v", names[i], o)
		}
	}
	o := runCLI(t, env, "status", "--config", cfg)
	if n := strings.Count(o.stdout, " tools, cached)"); n != len(names) {
		t.Fatalf("%d of %d servers cached:\n%s%s", n, len(names), o.stdout, o.stderr)
	}
}
