package transports

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// childOf returns the pid of the stdio server of c: the parent of the
// process its grandchild tool starts (which it also returns).
func childOf(t *testing.T, c *tconn) (child, grandchild int) {
	t.Helper()
	gc, err := strconv.Atoi(toolText(t, callTool(t, c, "grandchild", nil)))
	if err != nil {
		t.Fatal(err)
	}
	state, ppid := procState(gc)
	if state == "" || state == "Z" || ppid <= 1 {
		t.Fatalf("grandchild %d: state %q, parent %d", gc, state, ppid)
	}
	return ppid, gc
}

// Not parallel: it uses t.Setenv to put a variable in the host's
// environment that the child must not inherit.
func TestStdioCommandArgsEnvCwd(t *testing.T) {
	t.Setenv("MCPRT_HOST_ONLY", "1")
	t.Setenv("LANG", "C.UTF-8") // inherited by design
	cwd := t.TempDir()
	ep := stdioEP(t, "", "MCPRT_CONFIGURED=configured value", "LANG=en_US.UTF-8")
	ep.Args = []string{"first arg", "--second", ""}
	ep.Cwd = cwd
	c, info := dial(t, ep)
	if info.Transport != messages.TransportStdio || info.Name != "testserver" || info.Version != testserver.Version {
		t.Errorf("info = %+v", info)
	}

	child, _ := childOf(t, c)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", child))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{testenv.Self(t)}, ep.Args...)
	if got := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"); !slices.Equal(got, want) {
		t.Errorf("child's argv = %q, want %q", got, want)
	}

	for name, want := range map[string]string{
		"MCPRT_CONFIGURED": "configured value",
		"MCPRT_HOST_ONLY":  "<unset>",
		"LANG":             "en_US.UTF-8", // configured env wins over inherited
		"PATH":             hostEnv("PATH"),
		"HOME":             hostEnv("HOME"),
	} {
		if got := toolText(t, callTool(t, c, "env", map[string]any{"name": name})); got != want {
			t.Errorf("child's %s = %q, want %q", name, got, want)
		}
	}

	allowed := map[string]bool{"MCPRT_CONFIGURED": true, "GORACE": true, "LANG": true}
	for _, k := range inheritedEnv {
		allowed[k] = true
	}
	names := strings.Split(toolText(t, callTool(t, c, "environ", nil)), "\n")
	for _, name := range names {
		if !allowed[name] {
			t.Errorf("child's environment has %s, which is neither inherited by design nor configured", name)
		}
	}
	for _, name := range []string{"MCPRT_CONFIGURED", "PATH"} {
		if !slices.Contains(names, name) {
			t.Errorf("child's environment lacks %s: %q", name, names)
		}
	}

	got := toolText(t, callTool(t, c, "cwd", nil))
	if a, b := evalPath(t, got), evalPath(t, cwd); a != b {
		t.Errorf("child's cwd = %q, want %q", got, cwd)
	}
}

func hostEnv(name string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return "<unset>"
}

func evalPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stderrMirror records what Dialer.Stderr receives.
type stderrMirror struct {
	mu    sync.Mutex
	lines []string
}

func (m *stderrMirror) add(server, line string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = append(m.lines, server+": "+line)
}

func (m *stderrMirror) get() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.lines)
}

// TestStdioStderrDebugOnly: a server's stderr reaches the Dialer.Stderr
// mirror only with Debug; its last lines travel with a failure in
// ServerStderr (for the person and the host) with or without Debug, never
// in the message (which the model may read); what is kept is bounded.
func TestStdioStderrDebugOnly(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{false, true} {
		t.Run(fmt.Sprintf("debug=%v", debug), func(t *testing.T) {
			t.Parallel()
			mirror := &stderrMirror{}
			d := newDialer(t)
			d.Stderr = mirror.add
			ep := stdioEP(t, "")
			ep.Debug = debug
			c, _ := dialWith(t, d, ep)

			// 3 × 40 KiB lines: more than the 64 KiB kept.
			long := strings.Repeat("e", 40<<10)
			for i := range 3 {
				toolText(t, callTool(t, c, "stderr", map[string]any{"text": fmt.Sprintf("%s-%d", long, i)}))
			}
			toolText(t, callTool(t, c, "stderr", map[string]any{"text": "STDERR-MARK before the crash"}))
			if n := len(c.Conn.(*conn).proc.stderr.Tail(1 << 30)); n > stderrKeep {
				t.Errorf("kept %d bytes of stderr, more than %d", n, stderrKeep)
			}

			res := callTool(t, c, "crash", nil)
			wantErr(t, "crash", res.Err, messages.KindDisconnected, "exited with status 3")
			closed := c.waitClosed()
			wantErr(t, "ConnClosed", closed.Err, messages.KindDisconnected, "exited with status 3")
			for what, e := range map[string]*messages.Error{"OpResult": res.Err, "ConnClosed": closed.Err} {
				if strings.Contains(e.Message, "STDERR-MARK") {
					t.Errorf("%s error %q mentions stderr", what, e.Message)
				}
				if n := len(e.ServerStderr); n == 0 || n > stderrLines || e.ServerStderr[n-1] != "STDERR-MARK before the crash" {
					t.Errorf("%s ServerStderr = %.200q; want at most %d lines ending with the mark", what, e.ServerStderr, stderrLines)
				}
				for _, l := range e.ServerStderr {
					if len(l) > stderrLineMax+len("…") {
						t.Errorf("%s ServerStderr line of %d bytes", what, len(l))
					}
				}
			}

			lines := mirror.get()
			if !debug {
				if len(lines) != 0 {
					t.Errorf("Dialer.Stderr called %d times without debug", len(lines))
				}
				return
			}
			if len(lines) != 4 || lines[3] != "srv: STDERR-MARK before the crash" || lines[2] != "srv: "+long+"-2" {
				t.Errorf("Dialer.Stderr got %d lines, last %.80q", len(lines), lines[len(lines)-1:])
			}
		})
	}
}

// TestStdioHandshakeExitStderr: a child that exits before answering fails
// the dial with its exit status; its stderr comes in ServerStderr, with or
// without Debug, never in the message, with every configured value and
// every environment value it was given masked (issue 18 item 3).
func TestStdioHandshakeExitStderr(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{false, true} {
		ep := messages.Endpoint{Command: "/bin/sh", Env: map[string]string{"MY_TOKEN": "tok-sentinel-123"}, Debug: debug,
			Args: []string{"-c", `echo "first line" >&2; echo "oops-on-stderr token=$MY_TOKEN path=$PATH" >&2; exit 7`}}
		e := dialErr(t, ep)
		wantErr(t, "early exit", e, messages.KindInitFailed, "exited with status 7")
		if strings.Contains(e.Message, "oops-on-stderr") {
			t.Errorf("debug=%v: error %q mentions stderr", debug, e.Message)
		}
		want := []string{"first line", "oops-on-stderr token=<redacted> path=<redacted>"}
		if !slices.Equal(e.ServerStderr, want) {
			t.Errorf("debug=%v: ServerStderr = %q, want %q", debug, e.ServerStderr, want)
		}
	}
}

// TestStdioCloseKillsGroup: Close terminates the child and its process
// group and reaps the child before ConnClosed.
func TestStdioCloseKillsGroup(t *testing.T) {
	t.Parallel()
	c, _ := dial(t, stdioEP(t, ""))
	child, gc := childOf(t, c)
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v, want nil after Close", cc.Err)
	}
	if state, _ := procState(child); state != "" {
		t.Errorf("child %d not reaped after ConnClosed: state %q", child, state)
	}
	waitNotRunning(t, c.ctx, gc, "grandchild")
}

// TestStdioCloseEscalates: a server that ignores the end of stdin and
// SIGTERM (and whose group does too) is killed with SIGKILL.
func TestStdioCloseEscalates(t *testing.T) {
	t.Parallel()
	ep := stdioEP(t, "")
	ep.Command, ep.Args = "/bin/sh", []string{"-c", `trap "" TERM; "$0"; sleep 300`, testenv.Self(t)}
	c, _ := dial(t, ep)
	_, gc := childOf(t, c)
	_, server := procState(gc)    // the test server
	_, shell := procState(server) // the shell, the group leader
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v, want nil after Close", cc.Err)
	}
	if state, _ := procState(shell); state != "" {
		t.Errorf("shell %d not reaped after ConnClosed: state %q", shell, state)
	}
	waitNotRunning(t, c.ctx, gc, "grandchild")
}

// TestNotificationBeforeResult: a notification the server sends while
// handling a call reaches the sink before the call's OpResult on the line
// transports (stdio and sockets). Legacy SSE carries both on one stream
// too, but mcp-go's SSE server may itself queue the notification behind
// the response, so the order is not the client's to keep there.
func TestNotificationBeforeResult(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) messages.Endpoint{
		"stdio":  func(t *testing.T) messages.Endpoint { return stdioEP(t, "") },
		"socket": func(t *testing.T) messages.Endpoint { return socketEP(t, "") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t, open(t))
			for range 5 {
				id := c.send("tools/call", toolParams("notify", nil))
				if toolText(t, c.result(id)) != "ok" {
					t.Fatal("notify did not answer ok")
				}
				_, resAt := c.rec.await(t, c.ctx, "result", isOpResult(id))
				notes := 0
				for _, m := range c.rec.all()[:resAt] {
					if isNote("notifications/tools/list_changed")(m) {
						notes++
					}
				}
				if want := int(id); notes != want {
					t.Fatalf("after call %d, %d list_changed notifications precede its result; want %d", id, notes, want)
				}
			}
		})
	}
}

// TestStdioNotify: Conn.Notify reaches the server.
func TestStdioNotify(t *testing.T) {
	t.Parallel()
	env, _, noteLog := logFiles(t)
	c, _ := dial(t, stdioEP(t, "", env...))
	c.Notify("notifications/mcprt-test", []byte(`{"x":1}`))
	waitFileLine(t, c.ctx, noteLog, "notifications/mcprt-test")
	if !hasLine(noteLog, "notifications/initialized") {
		t.Errorf("the handshake did not send notifications/initialized")
	}
}
