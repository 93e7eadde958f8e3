package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// startupWait bounds how long a peer may take to start listening.
const startupWait = 60 * time.Second

// Proc is a peer process started by a test.
type Proc struct {
	// Cmd is the started command. Its Wait belongs to Proc (a second Wait
	// blocks forever in os/exec): wait for the exit with Exited.
	Cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	output strings.Builder // guarded by mu
}

// Exited is closed once the process has exited and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Output returns what the process wrote so far (stdout and stderr).
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// start runs cmd in its own process group and waits until a line of its
// output satisfies ready; it returns that line. A cleanup kills the group.
func start(t testing.TB, cmd *exec.Cmd, ready func(line string) bool) (*Proc, string) {
	t.Helper()
	ownGroup(cmd)
	// A process that left the group could keep the output pipe open after
	// the peer is killed; Wait then gives up on the pipe after this guard
	// instead of hanging the test's cleanup.
	cmd.WaitDelay = 10 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan struct{})
	p := &Proc{Cmd: cmd, exited: exited}
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		killGroup(cmd.Process)
		<-exited
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.output.WriteString(line + "\n")
			p.mu.Unlock()
			if !sent && ready(line) {
				found <- line
				sent = true
			}
		}
		io.Copy(io.Discard, pr)
	}()
	timeout := make(chan struct{})
	timer := clock.Real{}.AfterFunc(startupWait, func() { close(timeout) })
	defer timer.Stop()
	select {
	case line := <-found:
		return p, line
	case <-exited:
		t.Fatalf("%s exited before it was ready; output:\n%s", cmd.Path, p.Output())
	case <-timeout:
		t.Fatalf("%s was not ready within %s; output:\n%s", cmd.Path, startupWait, p.Output())
	}
	return nil, ""
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartEverything starts server-everything in mode ("sse" or
// "streamableHttp") on a free port and returns its base URL
// (http://127.0.0.1:PORT). It listens on every interface; tests address it
// only through 127.0.0.1.
func StartEverything(t testing.TB, mode string) string {
	t.Helper()
	port := FreePort(t)
	StartEverythingAt(t, mode, port)
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// StartEverythingAt starts server-everything in mode on port and returns
// its process (a test restarts a server on the same port by killing it
// and starting another).
func StartEverythingAt(t testing.TB, mode string, port int) *Proc {
	t.Helper()
	js := EverythingJS(t)
	cmd := exec.Command(Node(t), js, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	p, _ := start(t, cmd, func(line string) bool { return strings.Contains(line, fmt.Sprintf("port %d", port)) })
	return p
}

// TestServerEnv returns the environment that turns the running test binary
// into the test server with args (plus extra KEY=VALUE pairs), as a map for
// a stdio server's configured env.
func TestServerEnv(args string, extra ...string) map[string]string {
	env := map[string]string{
		testserver.EnvArgs: args,
		"GORACE":           strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0"),
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// Self returns the running test binary, which becomes the test server when
// TestServerEnv's variables are set and its TestMain calls
// testserver.MainIfRequested.
func Self(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// StartTestServer starts the test server in a network mode (args contains
// --http, --sse or --socket) and returns what it listens on (a URL or a
// socket path).
func StartTestServer(t testing.TB, args string, extra ...string) (string, *Proc) {
	t.Helper()
	return StartSelf(t, TestServerEnv(args, extra...))
}

// StartSelf runs the test binary itself with env added to the
// environment, for a test's init to turn it into a server: it waits for
// the line "LISTEN <url>" and returns the url. A cleanup kills it.
func StartSelf(t testing.TB, env map[string]string) (string, *Proc) {
	t.Helper()
	return StartSelfUnder(t, nil, env)
}

// StartSelfUnder is StartSelf run by a wrapper command (prefix, for
// example "ip netns exec NAME"), which must exec the binary in its place.
func StartSelfUnder(t testing.TB, prefix []string, env map[string]string) (string, *Proc) {
	t.Helper()
	argv := append(append([]string(nil), prefix...), Self(t))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p, line := start(t, cmd, func(line string) bool { return strings.HasPrefix(line, "LISTEN ") })
	return strings.TrimPrefix(line, "LISTEN "), p
}
