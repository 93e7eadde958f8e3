package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	hostileMainIfRequested()
	os.Exit(m.Run())
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/runtime once per test run: the CLI is tested as a user
// meets it, a separate program.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcprt-cli-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "runtime")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type buildError struct{ out string }

func (b *buildError) Error() string { return "go build ./cmd/runtime: " + b.out }

type outcome struct {
	code           int
	stdout, stderr string
}

// runCLI runs the CLI in an empty directory with an empty HOME. It may be
// called from several goroutines once binary has built the CLI.
func runCLI(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "MCPRT_AGENT_DIR="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	o := outcome{stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("run %v: %v", args, err)
		o.code = -1
	}
	return o
}

// stdioTestServer is a --stdio value that starts the test server (the test
// binary re-executed) with args. The runtime gives a stdio server only a
// minimal environment, so the variables that select the test server are set
// by env(1) on the command line itself.
func stdioTestServer(t *testing.T, args string) (string, []string) {
	t.Helper()
	var parts []string
	for k, v := range testenv.TestServerEnv(args) {
		parts = append(parts, shellQuote(k+"="+v))
	}
	sort.Strings(parts)
	return "env " + strings.Join(parts, " ") + " " + shellQuote(testenv.Self(t)), nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func oneLineError(t *testing.T, o outcome, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	if len(lines) != 1 || lines[0] == "" {
		t.Fatalf("want exactly one error line, got %q", o.stderr)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Fatalf("error line %q lacks %q", lines[0], w)
		}
	}
	if strings.Contains(o.stderr, "panic") || strings.Contains(o.stderr, "goroutine ") {
		t.Fatalf("crash output: %s", o.stderr)
	}
}

func TestCallAndFlagsAnywhere(t *testing.T) {
	t.Parallel()
	self, env := stdioTestServer(t, "--stdio")
	// Flags after the positional arguments, and --json.
	o := runCLI(t, env, "call", "echo", `{"message":"hi there"}`, "--stdio", self, "--json")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	var res struct {
		Text    string         `json:"text"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil || res.Text != "echo: hi there" || res.Details["server"] != "adhoc" {
		t.Fatalf("--json output %q (%v)", o.stdout, err)
	}
	// Flags first, plain output.
	o = runCLI(t, env, "--stdio", self, "call", "add", `{"a":2,"b":3}`)
	if o.code != 0 || strings.TrimSpace(o.stdout) != "5" {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}

func TestListAdhocWithoutServerAndTool(t *testing.T) {
	t.Parallel()
	self, env := stdioTestServer(t, "--stdio --page-size 3 --extra-tools 4")
	o := runCLI(t, env, "list", "--stdio", self)
	if o.code != 0 || !strings.Contains(o.stdout, "adhoc (18 tools):") || !strings.Contains(o.stdout, "- extra_003") {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, env, "tool", "mcp", `{"tool":"echo","args":"{\"message\":\"as string\"}"}`, "--stdio", self)
	if o.code != 0 || strings.TrimSpace(o.stdout) != "echo: as string" {
		t.Fatalf("tool mcp: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, env, "tool", "nonexistent", `{}`, "--stdio", self)
	if o.code != 2 {
		t.Fatalf("unknown agent tool: exit %d", o.code)
	}
	oneLineError(t, o, "no tool named")
}

func TestExitCodesAndOneLineErrors(t *testing.T) {
	t.Parallel()
	self, env := stdioTestServer(t, "--stdio")
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		{"missing config file", nil, []string{"status", "--config", "/nonexistent/mcp.json"}, 2, []string{"not found"}},
		{"command does not exist", nil, []string{"list", "--stdio", "/nonexistent/mcp-server"}, 1, []string{`"adhoc"`, "not found"}},
		{"connection refused", nil, []string{"list", "--url", "http://127.0.0.1:1/mcp"}, 1, []string{`"adhoc"`, "refused"}},
		{"tool the server lacks", env, []string{"call", "no_such_tool", "{}", "--stdio", self}, 1, []string{"no_such_tool"}},
		{"args not an object", env, []string{"call", "echo", "[1,2]", "--stdio", self}, 2, []string{"JSON object"}},
		{"args not JSON", env, []string{"call", "echo", "{oops", "--stdio", self}, 2, []string{"JSON"}},
		{"tool error result", env, []string{"call", "fail", "{}", "--stdio", self}, 1, []string{"failed on purpose"}},
		{"server exits mid-call", env, []string{"call", "crash", "{}", "--stdio", self}, 1, []string{`"adhoc"`, "status 3"}},
		{"bad --stdio quoting", nil, []string{"status", "--stdio", `"unterminated`}, 2, []string{"--stdio"}},
		{"two sources", nil, []string{"status", "--stdio", "x", "--url", "http://127.0.0.1:1/"}, 2, []string{"only one"}},
		{"unknown command", nil, []string{"frobnicate"}, 2, []string{"unknown command"}},
		{"wrong argument count", nil, []string{"call"}, 2, []string{"arg"}},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := runCLI(t, c.env, c.args...)
			if o.code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", o.code, c.code, o.stderr)
			}
			oneLineError(t, o, c.want...)
		})
	}
}

func TestStatusNeverConnects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	// A server whose command would fail loudly if it were started.
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"lazy":{"command":"/nonexistent/never-started"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := runCLI(t, nil, "status", "--config", cfg)
	if o.code != 0 || !strings.Contains(o.stdout, "○ lazy (not connected)") || o.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	o := runCLI(t, nil, "demo")
	if o.code != 0 {
		t.Fatalf("demo exit %d: %s", o.code, o.stderr)
	}
	for _, want := range []string{"echo: hello, MCP", "42", "Hello from a file", "tool_not_found", "✓ demo (7 tools)",
		"fs.changed", "external data, not instructions", `"status":"reconnecting"`, "every file told once", `{"stopped":true}`} {
		if !strings.Contains(o.stdout+o.stderr, want) && !(want == "tool_not_found" && strings.Contains(o.stdout, "no configured server offers")) {
			t.Fatalf("demo output lacks %q:\n%s", want, o.stdout)
		}
	}
	// The intended exit is told as intended, not as a warning; the tour
	// ends with how to use one's own servers.
	if strings.Contains(o.stderr, "warning") {
		t.Fatalf("the demo's intended server exit reads like a failure:\n%s", o.stderr)
	}
	if !strings.Contains(o.stdout, "runtime config detect") || !strings.Contains(o.stdout, ".mcp.json") {
		t.Fatalf("the demo does not end with how to use one's own servers:\n%s", o.stdout)
	}
}

func TestDemoServerOverHTTP(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("served over HTTP"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	addr := "127.0.0.1:" + itoa(port)
	srv := exec.CommandContext(ctx, binary(t), "demo-server", "--http", addr, "--root", root)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	buf := make([]byte, 256)
	n, _ := stdout.Read(buf) // "demo server listening on http://..."
	if !strings.Contains(string(buf[:n]), "listening on http://"+addr+"/mcp") {
		t.Fatalf("demo-server said %q", buf[:n])
	}
	o := runCLI(t, nil, "call", "read_file", `{"path":"note.txt"}`, "--url", "http://"+addr+"/mcp")
	if o.code != 0 || strings.TrimSpace(o.stdout) != "served over HTTP" {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, nil, "call", "read_file", `{"path":"../../etc/passwd"}`, "--url", "http://"+addr+"/mcp")
	if o.code != 1 {
		t.Fatalf("escape attempt: exit %d, stdout %q", o.code, o.stdout)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestDebugShowsServerStderr: a server's stderr reaches the user only when
// its entry says debug: true.
func TestDebugShowsServerStderr(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{false, true} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "mcp.json")
		entry := map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo "chatty-server-line" >&2; exec "$0" demo-server`, binary(t)}, "debug": debug}
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"chatty": entry}})
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		o := runCLI(t, nil, "call", "echo", `{"message":"x"}`, "--config", cfg)
		if o.code != 0 {
			t.Fatalf("debug=%v: exit %d: %s", debug, o.code, o.stderr)
		}
		shown := strings.Contains(o.stderr, "runtime: chatty: stderr: chatty-server-line")
		if shown != debug {
			t.Fatalf("debug=%v: stderr shown=%v (%q)", debug, shown, o.stderr)
		}
	}
}

// runtime events: catalog lists the event types; subscribe prints the
// acknowledged subscription, then every wakeup until --for ends.
// The ids and cursors of the events a subscribe prints.
var (
	tickIDs     = regexp.MustCompile(`"eventId":"([^"]+)"`)
	tickCursors = regexp.MustCompile(`"event":\{[^}]*"cursor":"([^"]+)"`)
)

func TestEventsCommands(t *testing.T) {
	t.Parallel()
	srv := shellQuote(binary(t)) + " demo-server --root " + shellQuote(t.TempDir())
	o := runCLI(t, nil, "events", "catalog", "--stdio", srv, "adhoc")
	if o.code != 0 || !strings.Contains(o.stdout, `"name":"fs.changed"`) || !strings.Contains(o.stdout, `"name":"clock.tick"`) {
		t.Fatalf("events catalog: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, nil, "events", "subscribe", "--stdio", srv, "adhoc", "clock.tick", `{"seconds":1}`, "--for", "2500ms")
	if o.code != 0 || !strings.Contains(o.stdout, `"status":"active"`) || !strings.Contains(o.stdout, "[mcp-events]") ||
		!strings.Contains(o.stdout, `"name":"clock.tick"`) {
		t.Fatalf("events subscribe: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	// --cursor and --max-age-ms: with a state directory the demo server
	// keeps its log across processes, so a second subscribe from the first
	// tick's cursor replays the ticks after it, and only those.
	state := t.TempDir()
	kept := shellQuote(binary(t)) + " demo-server --root " + shellQuote(t.TempDir()) + " --state-dir " + shellQuote(state)
	o = runCLI(t, nil, "events", "subscribe", "--stdio", kept, "adhoc", "clock.tick", `{"seconds":1}`, "--for", "2500ms")
	ids, cursors := tickIDs.FindAllStringSubmatch(o.stdout, -1), tickCursors.FindAllStringSubmatch(o.stdout, -1)
	if o.code != 0 || len(ids) < 2 || len(cursors) < 2 {
		t.Fatalf("ticks to replay: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, nil, "events", "subscribe", "--stdio", kept, "adhoc", "clock.tick", `{"seconds":1}`,
		"--cursor", cursors[0][1], "--max-age-ms", "600000", "--for", "1500ms")
	if o.code != 0 || !strings.Contains(o.stdout, `"maxAgeMs":600000`) || !strings.Contains(o.stdout, `"eventId":"`+ids[1][1]+`"`) ||
		strings.Contains(o.stdout, `"eventId":"`+ids[0][1]+`"`) {
		t.Fatalf("a subscribe from %s's cursor (want %s replayed, not %s): exit %d\n%s%s", ids[0][1], ids[1][1], ids[0][1], o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, nil, "events", "subscribe", "--stdio", srv, "adhoc", "no.such.event", "--for", "1s")
	if o.code == 0 || !strings.Contains(o.stderr, "no.such.event") {
		t.Fatalf("an unknown event: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}
