package transports

// The harness: every test dials real peers (the test server re-executed from
// this binary, or server-everything under node) through a Dialer of its own,
// records everything the Sink receives, and waits with context deadlines.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	goleak.VerifyTestMain(m)
}

// testTimeout bounds one test's waits. Nothing should come near it; it is
// generous because -race and parallel tests with 17 MiB frames share two
// cores.
const testTimeout = 90 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	return ctxFor(t, testTimeout)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// recorder is a Sink that never blocks: it appends every message to a log
// that tests search and wait on.
type recorder struct {
	mu      sync.Mutex
	msgs    []any         // guarded by mu
	changed chan struct{} // closed and replaced on every append; guarded by mu
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) sink(msg any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msg)
	close(r.changed)
	r.changed = make(chan struct{})
}

// await returns the first recorded message matching pred and its index,
// waiting for it until ctx ends.
func (r *recorder) await(t *testing.T, ctx context.Context, what string, pred func(any) bool) (any, int) {
	t.Helper()
	for {
		r.mu.Lock()
		for i, m := range r.msgs {
			if pred(m) {
				r.mu.Unlock()
				return m, i
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; recorded: %s", what, r.dump())
		}
	}
}

// all returns the messages recorded so far.
func (r *recorder) all() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.msgs...)
}

func (r *recorder) dump() string {
	var b strings.Builder
	for _, m := range r.all() {
		switch x := m.(type) {
		case messages.OpResult:
			fmt.Fprintf(&b, "\n  OpResult{ID:%d Err:%v Result:%.200s}", x.ID, x.Err, x.Result)
		case messages.ConnNotification:
			fmt.Fprintf(&b, "\n  ConnNotification{%s %.200s}", x.Method, x.Params)
		default:
			fmt.Fprintf(&b, "\n  %#v", m)
		}
	}
	return b.String()
}

func isDialResult(m any) bool { _, ok := m.(messages.DialResult); return ok }
func isConnClosed(m any) bool { _, ok := m.(messages.ConnClosed); return ok }

func isOpResult(id messages.OpID) func(any) bool {
	return func(m any) bool { r, ok := m.(messages.OpResult); return ok && r.ID == id }
}

func isNote(method string) func(any) bool {
	return func(m any) bool { n, ok := m.(messages.ConnNotification); return ok && n.Method == method }
}

// newDialer returns a Dialer whose goroutines must all have ended when the
// test's cleanups run.
func newDialer(t *testing.T) *Dialer {
	t.Helper()
	d := &Dialer{}
	t.Cleanup(func() {
		if !d.WaitFor(30 * time.Second) {
			t.Error("the dialer's goroutines did not end within 30 s of the test's end")
		}
	})
	return d
}

// tconn is a connection under test with its dialer and recorder.
type tconn struct {
	messages.Conn
	t      *testing.T
	ctx    context.Context
	d      *Dialer
	rec    *recorder
	nextID atomic.Uint64
	closed atomic.Bool
}

// idPrefix starts every JSON-RPC id the tests' connections send, so a
// canned server can answer the handshake (id idPrefix-h1) without parsing.
const idPrefix = "tp"

func dialRequest(ep messages.Endpoint) messages.DialRequest {
	return messages.DialRequest{Server: "srv", Gen: 7, Endpoint: ep, IDPrefix: idPrefix,
		ClientName: "mcprt-transports-test", ClientVersion: "0.0.1"}
}

// startDial dials ep and returns the recorder and the Dialing.
func startDial(t *testing.T, d *Dialer, ep messages.Endpoint) (*recorder, messages.Dialing) {
	t.Helper()
	rec := newRecorder()
	return rec, d.Dial(dialRequest(ep), rec.sink)
}

// dial opens a connection that must succeed, on a fresh dialer. A cleanup
// closes it (unless the test did) and waits for ConnClosed.
func dial(t *testing.T, ep messages.Endpoint) (*tconn, messages.ServerInfo) {
	t.Helper()
	return dialWith(t, newDialer(t), ep)
}

func dialWith(t *testing.T, d *Dialer, ep messages.Endpoint) (*tconn, messages.ServerInfo) {
	t.Helper()
	ctx := testCtx(t)
	rec, _ := startDial(t, d, ep)
	m, _ := rec.await(t, ctx, "DialResult", isDialResult)
	res := m.(messages.DialResult)
	if res.Err != nil {
		t.Fatalf("dial %v: %v", ep, res.Err)
	}
	if res.Server != "srv" || res.Gen != 7 || res.Conn == nil {
		t.Fatalf("DialResult = %+v", res)
	}
	c := &tconn{Conn: res.Conn, t: t, ctx: ctx, d: d, rec: rec}
	t.Cleanup(func() {
		if c.closed.CompareAndSwap(false, true) {
			c.Conn.Close()
		}
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c.rec.await(t, cctx, "ConnClosed at cleanup", isConnClosed)
	})
	return c, res.Info
}

// dialErr dials ep, which must fail, and returns the error.
func dialErr(t *testing.T, ep messages.Endpoint) *messages.Error {
	t.Helper()
	d := newDialer(t)
	rec, _ := startDial(t, d, ep)
	m, _ := rec.await(t, testCtx(t), "DialResult", isDialResult)
	res := m.(messages.DialResult)
	if res.Err == nil {
		res.Conn.Close()
		rec.await(t, testCtx(t), "ConnClosed", isConnClosed)
		t.Fatalf("dial %v succeeded (%+v); want an error", ep, res.Info)
	}
	if res.Conn != nil {
		t.Errorf("failed DialResult carries a Conn")
	}
	if res.Server != "srv" || res.Err.Server != "srv" {
		t.Errorf("DialResult server %q, error server %q; want srv", res.Server, res.Err.Server)
	}
	return res.Err
}

// send starts a request and returns its id.
func (c *tconn) send(method string, params json.RawMessage) messages.OpID {
	id := messages.OpID(c.nextID.Add(1))
	c.Send(messages.Op{ID: id, Method: method, Params: params})
	return id
}

// result waits for the OpResult of id.
func (c *tconn) result(id messages.OpID) messages.OpResult {
	c.t.Helper()
	m, _ := c.rec.await(c.t, c.ctx, fmt.Sprintf("OpResult %d", id), isOpResult(id))
	r := m.(messages.OpResult)
	if r.Server != "srv" || r.Gen != 7 {
		c.t.Errorf("OpResult labelled %q gen %d", r.Server, r.Gen)
	}
	return r
}

// close closes the connection and returns its ConnClosed.
func (c *tconn) close() messages.ConnClosed {
	c.t.Helper()
	if c.closed.CompareAndSwap(false, true) {
		c.Conn.Close()
	}
	return c.waitClosed()
}

// waitClosed waits for ConnClosed and checks that nothing follows it.
func (c *tconn) waitClosed() messages.ConnClosed {
	c.t.Helper()
	m, i := c.rec.await(c.t, c.ctx, "ConnClosed", isConnClosed)
	cc := m.(messages.ConnClosed)
	if cc.Server != "srv" || cc.Gen != 7 {
		c.t.Errorf("ConnClosed labelled %q gen %d", cc.Server, cc.Gen)
	}
	if !c.d.WaitFor(30 * time.Second) {
		c.t.Fatal("dialer goroutines still running 30 s after ConnClosed")
	}
	if all := c.rec.all(); len(all) != i+1 {
		c.t.Errorf("messages after ConnClosed: %s", c.rec.dump())
	}
	return cc
}

// call sends a request and waits for its result.
func call(t *testing.T, c *tconn, method string, params json.RawMessage) messages.OpResult {
	t.Helper()
	return c.result(c.send(method, params))
}

// toolParams builds tools/call params.
func toolParams(name string, args map[string]any) json.RawMessage {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		panic(err)
	}
	return b
}

func callTool(t *testing.T, c *tconn, name string, args map[string]any) messages.OpResult {
	t.Helper()
	return call(t, c, "tools/call", toolParams(name, args))
}

// toolText returns the text of a successful tools/call result.
func toolText(t *testing.T, r messages.OpResult) string {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("op %d failed: %v", r.ID, r.Err)
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("op %d: result %.200s: %v", r.ID, r.Result, err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("op %d: unexpected result %.300s", r.ID, r.Result)
	}
	return res.Content[0].Text
}

// echo checks that the echo tool answers on c.
func echo(t *testing.T, c *tconn, msg string) {
	t.Helper()
	if got := toolText(t, callTool(t, c, "echo", map[string]any{"message": msg})); got != "echo: "+msg {
		t.Fatalf("echo = %q, want %q", got, "echo: "+msg)
	}
}

// wantErr checks an error's kind and that its message contains every part.
func wantErr(t *testing.T, what string, e *messages.Error, kind messages.ErrorKind, parts ...string) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: no error; want %s", what, kind)
	}
	if e.Kind != kind {
		t.Errorf("%s: kind %s (%v); want %s", what, e.Kind, e, kind)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Errorf("%s: %q does not mention %q", what, e.Message, p)
		}
	}
}

// Endpoints.

// stdioEP runs the test server as a stdio child with args and extra env.
func stdioEP(t *testing.T, args string, extra ...string) messages.Endpoint {
	return messages.Endpoint{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio "+args, extra...)}
}

// netEP starts the test server in a network mode and returns an endpoint
// for it (url for --http and --sse, socket for --socket).
func httpEP(t *testing.T, args string, extra ...string) messages.Endpoint {
	url, _ := testenv.StartTestServer(t, args, extra...)
	return messages.Endpoint{URL: url}
}

// socketEP starts the test server on a Unix socket in a short temporary
// directory (socket paths are limited to 108 bytes).
func socketEP(t *testing.T, args string, extra ...string) messages.Endpoint {
	path := filepath.Join(shortTempDir(t), "s")
	where, _ := testenv.StartTestServer(t, "--socket "+path+" "+args, extra...)
	return messages.Endpoint{Socket: where}
}

func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcprt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// logFiles returns the env pairs that make the test server log cancellations
// and client notifications, and the two file paths.
func logFiles(t *testing.T) (env []string, cancelLog, noteLog string) {
	dir := t.TempDir()
	cancelLog, noteLog = filepath.Join(dir, "cancel.log"), filepath.Join(dir, "note.log")
	return []string{testserver.EnvCancelLog + "=" + cancelLog, testserver.EnvNoteLog + "=" + noteLog}, cancelLog, noteLog
}

// waitFileLine waits until the file at path has a line equal to line. Files
// written by another process cannot be waited on with a channel, so it
// rereads the file on a short ticker, bounded by ctx.
func waitFileLine(t *testing.T, ctx context.Context, path, line string) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if hasLine(path, line) {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			b, _ := os.ReadFile(path)
			t.Fatalf("%s never got the line %q; it holds %q", path, line, b)
		}
	}
}

func hasLine(path, line string) bool {
	b, _ := os.ReadFile(path)
	for _, l := range bytes.Split(b, []byte("\n")) {
		if string(l) == line {
			return true
		}
	}
	return false
}

// procState returns the state letter of /proc/<pid>/stat, or "" when the
// process does not exist.
func procState(pid int) (state string, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0
	}
	// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(fields[1])
	return fields[0], ppid
}

// notRunning reports whether pid has gone or is a zombie (a reparented
// zombie may linger where nobody reaps orphans, as in some containers).
func notRunning(pid int) bool {
	state, _ := procState(pid)
	return state == "" || state == "Z"
}

// waitNotRunning waits (re-reading /proc on a short ticker) until pid is
// not running; a process killed by a signal takes a moment to die.
func waitNotRunning(t *testing.T, ctx context.Context, pid int, what string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !notRunning(pid) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			state, _ := procState(pid)
			t.Fatalf("%s (pid %d) still running, state %q", what, pid, state)
		}
	}
}

// startTestServer starts the test server in a network mode and returns
// where it listens and its process.
func startTestServer(t *testing.T, args string, extra ...string) (string, *testenv.Proc) {
	t.Helper()
	return testenv.StartTestServer(t, args, extra...)
}

// killProc kills a peer's process group and waits until the peer is dead.
func killProc(t *testing.T, p *testenv.Proc) {
	t.Helper()
	pid := p.Cmd.Process.Pid
	if err := killGroup(pid); err != nil {
		t.Fatal(err)
	}
	waitNotRunning(t, testCtx(t), pid, "killed peer")
}

// waitChild waits until a child of this process runs with marker as its
// first argument and returns its pid.
func waitChild(t *testing.T, ctx context.Context, marker string) int {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, dir := range dirs {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			if _, ppid := procState(pid); ppid != os.Getpid() {
				continue
			}
			b, _ := os.ReadFile(dir + "/cmdline")
			if args := strings.Split(string(b), "\x00"); len(args) > 1 && args[1] == marker {
				return pid
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no child with argument %q appeared", marker)
		}
	}
}

// cannedInit is the answer to the handshake's initialize request.
const cannedInit = `{"jsonrpc":"2.0","id":"` + idPrefix + `-h1","result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"canned","version":"1"}}}`

// cannedServer is a stdio "server" written in sh: it reads the initialize
// request, prints before (lines), the initialize answer, then runs after.
func cannedServer(before, after string) messages.Endpoint {
	script := "read -r line; printf '%s\\n' " + before + " '" + cannedInit + "'; " + after
	return messages.Endpoint{Command: "/bin/sh", Args: []string{"-c", script}}
}

// waitFileSize waits (re-reading on a short ticker) until the file at path
// holds at least n bytes.
func waitFileSize(t *testing.T, ctx context.Context, path string, n int64) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, err := os.Stat(path); err == nil && st.Size() >= n {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s never reached %d bytes", path, n)
		}
	}
}

// waitFileLines waits until path holds at least n lines equal to line.
func waitFileLines(t *testing.T, ctx context.Context, path, line string, n int) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(path)
		got := 0
		for _, l := range bytes.Split(b, []byte("\n")) {
			if string(l) == line {
				got++
			}
		}
		if got >= n {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s has %d lines %q, want %d", path, got, line, n)
		}
	}
}
