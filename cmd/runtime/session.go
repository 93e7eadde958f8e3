package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

func sessionCmd(g *globals) *cobra.Command {
	var askHost bool
	cmd := &cobra.Command{
		Use:   "session",
		Short: "run as a sidecar: JSON lines on stdin and stdout for a host in any language (docs/sidecar.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.runSession(cmd.Context(), cmd.InOrStdin(), askHost)
		},
	}
	cmd.Flags().BoolVar(&askHost, "ask-host", false, "servers' questions (elicitation, sampling) go to the host as ask lines it answers")
	return cmd
}

// session is one running sidecar.
type session struct {
	rt sidecarRuntime
	// local is the embedded runtime; nil when the sidecar is attached to a
	// shared runtime (--attach).
	local *mcprt.Runtime
	out   *sessionOut
	ctx   context.Context
	asker *hostAsker // --ask-host, else nil

	calls sync.WaitGroup
	mu    sync.Mutex
	// inFlight maps a compacted id to its call's cancel function; guarded
	// by mu.
	inFlight map[string]context.CancelFunc
	// subs are the host's typed subscriptions by id; guarded by mu.
	subs map[string]typedSubscription
}

// runSession serves the sidecar protocol until stdin ends (or the process
// is interrupted), then waits for the calls in flight, closes the runtime
// (reaping every server) and flushes stdout.
func (g *globals) runSession(ctx context.Context, stdin io.Reader, askHost bool) error {
	out := newSessionOut(g.stdout)
	if askHost {
		g.asker = newHostAsker(out)
	}
	rt, local, err := g.sidecarRuntime(ctx, sessionHost{out: out})
	if err != nil {
		out.close()
		return err
	}
	s := &session{rt: rt, local: local, out: out, ctx: ctx, asker: g.asker, inFlight: map[string]context.CancelFunc{}, subs: map[string]typedSubscription{}}
	s.hello()
	if rs, ok := rt.(*remote.Session); ok {
		// What a runtime of its own notifies as it starts (before the
		// hello), after the hello.
		g.announceIssues(ctx, rs, sessionHost{out: out})
	}
	stopWatching := s.watch()
	s.read(stdin)
	s.calls.Wait()
	stopWatching()
	closeErr := rt.Close()
	out.close()
	if closeErr != nil {
		fmt.Fprintln(g.stderr, "runtime: warning: "+oneLine(closeErr.Error()))
	}
	if ctx.Err() != nil {
		return &exitError{code: 130}
	}
	return nil
}

// watch forwards status and tool-set changes, each only when it differs
// from the last one sent, until the returned stop is called (it waits for
// both forwarders).
func (s *session) watch() (stop func()) {
	var wg sync.WaitGroup
	status, stopStatus := s.rt.WatchStatus()
	changed, stopTools := s.rt.WatchTools()
	first := <-status
	lastStatus := string(encodeLine(map[string]any{"status": first}))
	lastTools := string(encodeLine(map[string]any{"toolsChanged": toolDefs(s.rt.Tools())}))
	wg.Add(2)
	go func() {
		defer wg.Done()
		for snap := range status {
			if line := encodeLine(map[string]any{"status": snap}); string(line) != lastStatus {
				lastStatus = string(line)
				s.out.sendLine(line)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range changed {
			if line := encodeLine(map[string]any{"toolsChanged": toolDefs(s.rt.Tools())}); string(line) != lastTools {
				lastTools = string(line)
				s.out.sendLine(line)
			}
		}
	}()
	return func() {
		stopStatus()
		stopTools()
		wg.Wait()
	}
}

// read handles input lines until stdin ends or the context is cancelled.
func (s *session) read(stdin io.Reader) {
	// The reader goroutine hands lines over (nil for a line over the
	// limit); it may outlive the session only blocked in a read of stdin,
	// at process exit.
	lines := make(chan []byte)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(stdin, 64<<10)
		for {
			line, tooLong, err := readLine(r, maxSessionLine)
			if tooLong || len(line) > 0 {
				if tooLong {
					line = nil
				}
				select {
				case lines <- line:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return
			}
			if line == nil {
				s.out.send(protocolError(nil, "line_too_long", "an input line is over the 4 MiB limit; it was skipped"))
				continue
			}
			s.handle(line)
		case <-s.ctx.Done():
			s.cancelAll()
			return
		}
	}
}

// handle answers one input line, starting a call when it is one.
func (s *session) handle(line []byte) {
	var req sessionRequest
	if err := json.Unmarshal(line, &req); err != nil {
		if id, msg, ok := mistyped(line, err); ok {
			s.out.send(protocolError(id, "invalid_request", msg))
			return
		}
		s.out.send(protocolError(nil, "parse_error", "the line is not a JSON object: "+err.Error()))
		return
	}
	if req.Answer != nil {
		s.handleAnswer(req)
		return
	}
	id := req.ID
	if len(id) == 0 || string(id) == "null" {
		s.out.send(protocolError(nil, "invalid_request", `a request needs an "id" (any JSON value but null)`))
		return
	}
	key := compactID(id)
	switch {
	case req.Cancel:
		if !s.cancel(key) {
			s.out.send(protocolError(id, "unknown_id", "no request with this id is in flight"))
		}
	case req.Tool != "" && req.Method != "":
		s.out.send(protocolError(id, "invalid_request", `a request has either "tool" or "method", not both`))
	case req.Tool != "":
		t, ok := s.rt.Tool(req.Tool)
		if !ok {
			s.out.send(protocolError(id, "unknown_tool", "no tool named "+quote(req.Tool)))
			return
		}
		args := req.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		s.start(id, key, func(ctx context.Context) any {
			return answer{id: id, body: map[string]any{"result": t.Execute(ctx, args)}}
		})
	case req.Method != "":
		m, ok := sessionMethods[req.Method]
		if !ok {
			s.out.send(protocolError(id, "unknown_method", "no method named "+quote(req.Method)))
			return
		}
		s.start(id, key, func(ctx context.Context) any {
			res, err := m(ctx, s, req.Params)
			if err != nil {
				return errorLine(id, err)
			}
			return answer{id: id, body: map[string]any{"result": res}}
		})
	default:
		s.out.send(protocolError(id, "invalid_request", `a request needs "tool", "method" or "cancel"`))
	}
}

// start runs one request on its own goroutine, unless its id is already
// in flight or too many are.
func (s *session) start(id json.RawMessage, key string, run func(context.Context) any) {
	s.mu.Lock()
	if _, busy := s.inFlight[key]; busy {
		s.mu.Unlock()
		s.out.send(protocolError(id, "duplicate_id", "a request with this id is still in flight"))
		return
	}
	if len(s.inFlight) >= maxInFlight {
		s.mu.Unlock()
		s.out.send(protocolError(id, "too_many_requests", "64 requests are in flight; wait for an answer"))
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.inFlight[key] = cancel
	s.calls.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.calls.Done()
		line := run(ctx)
		// The id is free again before its answer goes out, so a host may
		// reuse it as soon as it reads the answer.
		s.mu.Lock()
		delete(s.inFlight, key)
		s.mu.Unlock()
		cancel()
		s.out.send(line)
	}()
}

// cancel cancels the request with this id; false when none is in flight.
func (s *session) cancel(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.inFlight[key]
	if ok {
		c()
	}
	return ok
}

func (s *session) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.inFlight {
		c()
	}
}

// readLine reads one line of at most max bytes (without its newline). A
// longer line is consumed whole and reported with tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		return trimCR(line), false, err
	}
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// compactID is the key an id is known by in flight: its compact JSON, so
// that 1 and 1 with spaces around are one id.
func compactID(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// answer is a line about one request: its id, byte for byte as the host
// wrote it, then the body's members.
type answer struct {
	id   json.RawMessage
	body map[string]any
}

// protocolError is an error line about the request itself; id nil leaves
// the id out (a line that could not be read).
func protocolError(id json.RawMessage, code, msg string) any {
	body := map[string]any{"error": map[string]any{"code": code, "message": msg}}
	if id == nil {
		return body
	}
	return answer{id: id, body: body}
}

// errorLine is the answer of a method that failed, with the error's stable
// code when it has one.
func errorLine(id json.RawMessage, err error) any {
	code := "internal"
	var me *messages.Error
	if errors.As(err, &me) {
		code = me.Kind.Code()
	}
	return protocolError(id, code, err.Error())
}

// toolDefs are the tools as the hello and toolsChanged lines show them.
func toolDefs(ts []mcprt.Tool) []map[string]any {
	out := make([]map[string]any, 0, len(ts))
	for _, t := range ts {
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.InputSchema})
	}
	return out
}

// sessionHost turns the runtime's host calls into output lines.
type sessionHost struct{ out *sessionOut }

func (h sessionHost) Deliver(_ context.Context, m messages.HostMessage) {
	h.out.offer(map[string]any{"deliver": map[string]any{
		"kind": m.Kind, "text": m.Text, "details": m.Details, "triggerTurn": m.TriggerTurn, "deliverAs": m.DeliverAs,
	}})
}

func (h sessionHost) Notify(_ context.Context, n messages.Notice) {
	line := map[string]any{"level": noticeLevel(n.Level), "text": n.Text}
	if n.Server != "" {
		line["server"] = n.Server
	}
	h.out.offer(map[string]any{"notice": line})
}

func noticeLevel(l messages.NoticeLevel) string {
	switch l {
	case messages.NoticeWarning:
		return "warning"
	case messages.NoticeError:
		return "error"
	}
	return "info"
}
