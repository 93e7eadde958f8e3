package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

func TestMain(m *testing.M) {
	MainIfRequested()
	os.Exit(m.Run())
}

// testCtx bounds a test generously; nothing in it should take long.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func selfExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// serverEnv is the environment (beyond the inherited one) that turns the
// re-executed test binary into a server with args. Under -race it also stops
// the race runtime from pausing a second at every clean exit.
func serverEnv(args string, extra ...string) []string {
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return append([]string{EnvArgs + "=" + args, "GORACE=" + gorace}, extra...)
}

// watchBuffer records what is written to it and lets a test wait for a
// substring to appear. It forwards writes to next when next is set.
type watchBuffer struct {
	next io.Writer

	mu      sync.Mutex
	buf     bytes.Buffer             // guarded by mu
	waiters map[string]chan struct{} // guarded by mu
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	n := len(p)
	var err error
	if w.next != nil {
		n, err = w.next.Write(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p[:n])
	for s, ch := range w.waiters {
		if strings.Contains(w.buf.String(), s) {
			close(ch)
			delete(w.waiters, s)
		}
	}
	return n, err
}

// Close closes next when it is a Closer.
func (w *watchBuffer) Close() error {
	if c, ok := w.next.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// seen returns a channel closed once s has been written.
func (w *watchBuffer) seen(s string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(w.buf.String(), s) {
		close(ch)
		return ch
	}
	if w.waiters == nil {
		w.waiters = map[string]chan struct{}{}
	}
	if old, ok := w.waiters[s]; ok {
		return old
	}
	w.waiters[s] = ch
	return ch
}

func (w *watchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func waitFor(t *testing.T, ctx context.Context, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("timed out waiting for %s", what)
	}
}

// proc is a test server process with raw pipes.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *watchBuffer

	waitOnce sync.Once
	exited   chan struct{}
	waitErr  error // set before exited is closed

	linesOnce sync.Once
	lines     chan []byte
}

// startProc starts the test server with args and extra environment.
func startProc(t *testing.T, args string, env ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(selfExe(t)), stderr: &watchBuffer{}, exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), serverEnv(args, env...)...)
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.stdin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		select {
		case <-p.wait():
		case <-ctx.Done():
			t.Errorf("server %q did not exit after stdin closed; killing it", args)
			_ = p.cmd.Process.Kill()
			<-p.wait()
		}
	})
	return p
}

// wait returns a channel closed when the process has exited; waitErr then
// holds cmd.Wait's result.
func (p *proc) wait() <-chan struct{} {
	p.waitOnce.Do(func() {
		go func() {
			p.waitErr = p.cmd.Wait()
			close(p.exited)
		}()
	})
	return p.exited
}

// send writes one raw line.
func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("write %q: %v", line, err)
	}
}

// recv reads the next stdout line.
func (p *proc) recv(t *testing.T, ctx context.Context) string {
	t.Helper()
	p.linesOnce.Do(func() {
		p.lines = make(chan []byte)
		go func() {
			defer close(p.lines)
			sc := bufio.NewScanner(p.stdout)
			sc.Buffer(nil, mcpline.MaxLine)
			for sc.Scan() {
				select {
				case p.lines <- bytes.Clone(sc.Bytes()):
				case <-p.wait():
					return
				}
			}
		}()
	})
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatal("server closed stdout")
		}
		return string(line)
	case <-ctx.Done():
		t.Fatal("timed out waiting for a line from the server")
		return ""
	}
}

// rpcReply is a decoded JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeReply(t *testing.T, line string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("decode %q: %v", line, err)
	}
	return r
}

const legacyInitialize = `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func initRequest() mcp.InitializeRequest {
	return mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "testserver-test", Version: "0"},
	}}
}

func initialize(t *testing.T, ctx context.Context, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	res, err := c.Initialize(ctx, initRequest())
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

func call(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
}

// callText calls a tool that must succeed and returns its text.
func callText(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	res, err := call(ctx, c, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("call %s: isError=%v content=%v", name, res.IsError, res.Content)
	}
	return mcp.GetTextFromContent(res.Content[0])
}

// listenURL reads the LISTEN line of a network-mode server.
func listenURL(t *testing.T, ctx context.Context, p *proc) string {
	t.Helper()
	line := p.recv(t, ctx)
	where, ok := strings.CutPrefix(line, "LISTEN ")
	if !ok {
		t.Fatalf("first line = %q, want LISTEN ...", line)
	}
	return where
}
