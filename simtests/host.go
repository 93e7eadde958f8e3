package simtests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// Host is the agent host of a simulation: it receives the runtime's
// deliveries and notices (mcprt.Host), and it runs host operations (tool
// calls, listings, connects, status, Close), each on its own goroutine
// because they block.
type Host struct {
	w          *World
	active     []*hostOp // started, not yet collected, in start order
	byID       map[string]*hostOp
	known      map[string]bool // servers whose catalog the runtime surely has
	closed     bool            // Runtime.Close has returned
	closeBegun bool            // a Runtime.Close operation has started (see Close)
	ps         *protoState     // the protocol-extension side (proto_host.go)
	// The events side (events_host.go): subscriptions by id, in order.
	subs     map[string]*hostSub
	subOrder []string
}

// hostOp is one host operation.
type hostOp struct {
	id, what string
	kind     string // call, list, mcp, connect, status, close; session, prequest, sclose, dispose
	server   string // the server concerned ("" when unknown or none)
	session  string // prequest: the session's id
	evName   string // esub: the event's name
	evArgs   string // esub: its arguments as given ("" for none)
	check    bool   // elist: the accounting checkpoint
	fresh    bool   // connect: replacing the live connection
	// lookup is set for a call that may list servers to find its tool;
	// unknown is how many servers it may list. Cancelling such a call
	// while it lists two or more is not replayable: the proxy tool posts
	// the aborts in map order.
	lookup  bool
	unknown int

	cancel context.CancelFunc
	ch     chan outcome
	done   bool
	res    outcome
	start  time.Duration

	// failure-memory expectation (see checker.hostStarted)
	expectBackoff bool
	dialsAtStart  int
	// quiescentStart: a status query started with nothing in flight, so
	// every lease it reports must be one of an open stream or observer
	// (expectLeases), and its late frames those the port reported
	// (expectLate).
	quiescentStart bool
	expectLeases   map[string]int
	expectLate     map[string]int
}

// outcome is what a host operation returned.
type outcome struct {
	ok       bool
	code     string // error code when !ok
	text     string
	server   string   // the server the result names, if any
	extra    string   // details worth tracing (rpcCode, retryAfterSeconds)
	rows     []string // status rows
	statuses []messages.ServerStatus
	session  *mcprt.Session // a protocol session opened
	snaps    []eventstream.Snapshot
}

func (o outcome) String() string {
	text := strings.ReplaceAll(o.text, "\n", " | ")
	if o.ok {
		return "ok " + strconv.Quote(text)
	}
	return "error " + o.code + o.extra + " " + strconv.Quote(text)
}

func newHost(w *World) *Host {
	return &Host{w: w, byID: map[string]*hostOp{}, known: map[string]bool{}}
}

// Deliver implements mcprt.Host.
func (h *Host) Deliver(_ context.Context, m messages.HostMessage) {
	if !h.deliverEvents(m) {
		h.w.Tracef("host deliver %s %q", m.Kind, m.Text)
	}
	if h.w.shared != nil {
		h.w.shared.route(m)
	}
	if h.closeBegun {
		h.w.violate("host delivery after Runtime.Close began")
	}
}

// Notify implements mcprt.Host.
func (h *Host) Notify(_ context.Context, n messages.Notice) {
	h.w.Tracef("host notice %s %q", n.Server, n.Text)
	if h.closeBegun {
		h.w.violate("host notice after Runtime.Close began")
	}
}

// Op returns the operation with the given id, or nil.
func (h *Host) Op(id string) *hostOp { return h.byID[id] }

// Active returns how many operations have not finished.
func (h *Host) Active() int { return len(h.active) }

// owner returns the simulated server offering tool, or "".
func (h *Host) owner(tool string) string {
	for _, name := range h.w.order {
		if h.w.servers[name].hasTool(tool) {
			return name
		}
	}
	return ""
}

// Call starts a call of tool through the mcp proxy tool. args is a JSON
// object; the operation's id is added to it as "call", so the server's
// answer names the call it answers.
func (h *Host) Call(id, tool, args string) error { return h.call(id, "", tool, args) }

// CallOn starts a call of tool naming its server (as a shared session's
// mcp call does): only that server may be listed to find the tool.
func (h *Host) CallOn(id, server, tool, args string) error { return h.call(id, server, tool, args) }

// call starts a call of tool, naming server unless it is "".
func (h *Host) call(id, server, tool, args string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
		return fmt.Errorf("call %s: args must be a JSON object", id)
	}
	m["call"], _ = json.Marshal(id)
	full, _ := json.Marshal(m)
	in := map[string]json.RawMessage{"tool": json.RawMessage(strconv.Quote(tool)), "args": full}
	op := &hostOp{id: id, kind: "call", what: "call " + tool + " " + string(full), server: server}
	switch {
	case server != "":
		in["server"] = json.RawMessage(strconv.Quote(server))
		op.what = "call " + server + " " + tool + " " + string(full)
		if !h.known[server] {
			op.lookup, op.unknown = true, 1
		}
	default:
		op.server = h.owner(tool)
		if op.server == "" || !h.known[op.server] {
			op.lookup = true
			for _, name := range h.w.order {
				if !h.known[name] {
					op.unknown++
				}
			}
		}
	}
	input, _ := json.Marshal(in)
	return h.start(op, h.mcp(input))
}

// List starts a listing of a server's tools through the mcp tool.
func (h *Host) List(id, server string) error {
	input, _ := json.Marshal(map[string]string{"server": server})
	return h.start(&hostOp{id: id, kind: "list", what: "list " + server, server: server}, h.mcp(input))
}

// MCP starts a call of the mcp tool with raw input. Input naming a tool
// is a lookup (it may list servers to find the tool first).
func (h *Host) MCP(id, input string) error {
	op := &hostOp{id: id, kind: "mcp", what: "mcp " + input}
	var probe struct {
		Tool string `json:"tool"`
	}
	if json.Unmarshal([]byte(input), &probe) == nil && probe.Tool != "" {
		op.lookup, op.unknown = true, len(h.w.order)
	}
	return h.start(op, h.mcp(json.RawMessage(input)))
}

// mcp returns a runner calling the proxy tool with input.
func (h *Host) mcp(input json.RawMessage) func(context.Context) outcome {
	tool, _ := h.w.rt.Tool(mcprt.MCPToolName)
	return func(ctx context.Context) outcome {
		r := tool.Execute(ctx, input)
		o := outcome{ok: !r.IsError, code: r.ErrorCode(), text: r.Text}
		o.server, _ = r.Details["server"].(string)
		for _, k := range []string{"rpcCode", "retryAfterSeconds"} {
			if v, ok := r.Details[k]; ok {
				o.extra += fmt.Sprintf(" %s=%v", k, v)
			}
		}
		return o
	}
}

// Connect starts an explicit connect (Runtime.Connect).
func (h *Host) Connect(id, server string, fresh bool) error {
	what := "Runtime.Connect " + server
	if fresh {
		what += " fresh"
	}
	rt := h.w.rt
	return h.start(&hostOp{id: id, kind: "connect", what: what, server: server, fresh: fresh}, func(ctx context.Context) outcome {
		info, err := rt.Connect(ctx, server, fresh)
		if err != nil {
			return errOutcome(err)
		}
		return outcome{ok: true, text: "connected to " + info.Name, server: server}
	})
}

// Status starts a Runtime.Status query.
func (h *Host) Status(id string) error {
	rt := h.w.rt
	return h.start(&hostOp{id: id, kind: "status", what: "Runtime.Status"}, func(context.Context) outcome {
		st := rt.ServerStatuses()
		var rows []string
		for _, s := range st {
			rows = append(rows, statusRow(s))
		}
		return outcome{ok: true, text: fmt.Sprintf("%d servers", len(rows)), rows: rows, statuses: st}
	})
}

// Close starts Runtime.Close.
func (h *Host) Close(id string) error {
	if h.w.shared != nil {
		h.w.shared.shutdown() // the member stops before its runtime closes
	}
	rt := h.w.rt
	err := h.start(&hostOp{id: id, kind: "close", what: "Runtime.Close"}, func(context.Context) outcome {
		if err := rt.Close(); err != nil {
			return errOutcome(err)
		}
		return outcome{ok: true, text: "closed"}
	})
	// start waited until the operation's goroutine blocked: inside Close,
	// past the point where the events companion stops waking the host.
	// Nothing may reach the host from here on.
	h.closeBegun = h.closeBegun || err == nil
	return err
}

func errOutcome(err error) outcome {
	o := outcome{code: "error", text: err.Error()}
	if e, ok := err.(*messages.Error); ok {
		o.code, o.server = e.Code(), e.Server
		if p := e.Protocol(); p != nil {
			o.extra = fmt.Sprintf(" rpcCode=%d", p.Code)
			if len(p.Data) > 0 {
				o.extra += " data=" + string(p.Data)
			}
		}
	}
	return o
}

// statusRow renders one server's status for the trace.
func statusRow(s messages.ServerStatus) string {
	row := fmt.Sprintf("%s: %s gen=%d leases=%d", s.Name, s.State, s.Generation, s.Leases)
	if s.ToolCount >= 0 {
		row += fmt.Sprintf(" tools=%d", s.ToolCount)
	}
	if s.LastError != nil {
		row += " last=" + s.LastError.Code()
	}
	if s.Restarts > 0 {
		row += fmt.Sprintf(" restarts=%d", s.Restarts)
	}
	if s.LateFrames > 0 {
		row += fmt.Sprintf(" late=%d", s.LateFrames)
	}
	return row
}

// start runs op on a new goroutine and waits until it has posted its
// first message (or finished).
func (h *Host) start(op *hostOp, run func(context.Context) outcome) error {
	if h.byID[op.id] != nil {
		return fmt.Errorf("host operation %q exists already", op.id)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op.cancel, op.ch, op.start = cancel, make(chan outcome, 1), h.w.Now()
	h.w.Tracef("host %s %s", op.id, op.what)
	h.w.inv.hostStarted(op) // before op counts as active
	h.byID[op.id] = op
	h.active = append(h.active, op)
	seq := len(h.byID)
	go func() {
		h.w.Disp.hostGoroutine(seq)
		op.ch <- run(ctx)
	}()
	h.w.quiet()
	return nil
}

// Cancel cancels a host operation's context (the host gives up on it).
func (h *Host) Cancel(id string) error {
	op := h.byID[id]
	if op == nil {
		return fmt.Errorf("no host operation %q", id)
	}
	if !op.cancellable() {
		return fmt.Errorf("cancel %s: it may be listing several servers, and the runtime aborts those in map order (not replayable)", id)
	}
	h.w.Tracef("host %s cancel", id)
	if op.kind == "esub" && slices.Contains(h.active, op) {
		h.w.inv.evAbandoned(op.server, op.evName, op.evArgs)
	}
	op.cancel()
	h.w.quiet()
	return nil
}

// cancellable reports whether cancelling op is replayable (see lookup).
func (op *hostOp) cancellable() bool { return !op.lookup || op.unknown < 2 }

// collect records every operation that has finished, in start order.
func (h *Host) collect() {
	h.collectProto()
	var closing *hostOp
	kept := h.active[:0]
	for _, op := range h.active {
		select {
		case op.res = <-op.ch:
			op.done = true
			op.cancel()
			h.finished(op)
			if op.kind == "close" {
				closing = op
			}
		default:
			kept = append(kept, op)
		}
	}
	for i := len(kept); i < len(h.active); i++ {
		h.active[i] = nil
	}
	h.active = kept
	if closing != nil {
		h.closed = true
		h.w.closedAt = h.w.Now()
		h.w.inv.afterClose(closing)
	}
}

// finished traces an operation's outcome and checks it.
func (h *Host) finished(op *hostOp) {
	h.w.Tracef("host %s = %s", op.id, op.res)
	for _, row := range op.res.rows {
		h.w.Tracef("  %s", row)
	}
	switch {
	case op.kind == "list" && op.res.ok:
		h.known[op.server] = true
	case op.kind == "session" && op.res.ok:
		h.sessionOpened(op)
	case op.kind == "esub" && op.res.ok:
		h.evSubscribed(op)
	case op.kind == "elist" && op.check:
		h.w.inv.evAccount(op.res.snaps)
		if h.w.shared != nil {
			h.w.shared.account(op.res.snaps)
		}
	case op.kind == "call" && op.res.server != "" && (op.res.ok || op.res.code == "tool_error"):
		// The server answered, so the call got past the tool lookup: the
		// runtime's catalog has the server (and keeps it).
		h.known[op.res.server] = true
	}
	h.w.inv.hostFinished(op)
	if h.w.shared != nil {
		h.w.shared.opDone(op)
	}
}

// Await runs the simulation until operation id has finished.
func (h *Host) Await(id string) error {
	op := h.byID[id]
	if op == nil {
		return fmt.Errorf("no host operation %q", id)
	}
	return h.w.RunUntil(func() bool { return op.done })
}
