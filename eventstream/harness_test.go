package eventstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// render writes effects as one line: "effect; effect".
func render(effects []Effect) string {
	parts := make([]string, len(effects))
	for i, e := range effects {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, "; ")
}

// harness drives one Subscription on explicit time: it keeps "now" and the
// subscription's single timer slot as the actor would.
type harness struct {
	t        *testing.T
	s        *Subscription
	now      time.Time
	armed    bool
	deadline time.Time
	token    uint64
	// log holds every effect rendered, one line per input, for whole-run
	// assertions (wake counts).
	log []string
	// delivered holds the items of Deliver effects, in order.
	delivered []*EventItem
}

func newHarness(t *testing.T, spec Spec, lim Limits) *harness {
	t.Helper()
	if spec.ID == "" {
		spec.ID = "sub-1"
	}
	if spec.Server == "" {
		spec.Server = "demo"
	}
	if spec.Name == "" {
		spec.Name = "fs.changed"
	}
	s, err := NewSubscription(spec, lim)
	if err != nil {
		t.Fatalf("NewSubscription: %v", err)
	}
	return &harness{t: t, s: s, now: t0}
}

// take records effects (the subscription reuses its slice) and follows the
// timer slot.
func (h *harness) take(effects []Effect) string {
	for _, e := range effects {
		switch e := e.(type) {
		case Arm:
			h.armed, h.deadline, h.token = true, h.now.Add(e.After), e.Token
		case Disarm:
			h.armed = false
		case Deliver:
			h.delivered = append(h.delivered, e.Item)
		}
	}
	line := render(effects)
	h.log = append(h.log, line)
	return line
}

// wait moves time forward by d, firing the timer whenever it falls due.
func (h *harness) wait(d time.Duration) string {
	end := h.now.Add(d)
	var lines []string
	for h.armed && !h.deadline.After(end) {
		h.now, h.armed = h.deadline, false
		if line := h.take(h.s.Fire(h.now, h.token)); line != "" {
			lines = append(lines, line)
		}
	}
	h.now = end
	return strings.Join(lines, " | ")
}

// step is one input of a scripted test and the effects it must produce.
type step struct {
	in   func(h *harness) string
	want string
}

func (h *harness) run(steps []step) {
	h.t.Helper()
	for i, st := range steps {
		if got := st.in(h); got != st.want {
			h.t.Fatalf("step %d:\n got  %q\n want %q", i+1, got, st.want)
		}
	}
}

// The inputs.

func start() func(*harness) string { return func(h *harness) string { return h.take(h.s.Start()) } }

func cancel() func(*harness) string { return func(h *harness) string { return h.take(h.s.Cancel()) } }

func wait(d time.Duration) func(*harness) string {
	return func(h *harness) string { return h.wait(d) }
}

func frame(stream uint64, method, params string) func(*harness) string {
	return func(h *harness) string {
		return h.take(h.s.Frame(h.now, stream, Decode(method, json.RawMessage(params))))
	}
}

func active(stream uint64, params string) func(*harness) string {
	return frame(stream, MethodActive, params)
}

func heartbeat(stream uint64, params string) func(*harness) string {
	return frame(stream, MethodHeartbeat, params)
}

// event sends a valid fs.changed event with id and cursor.
func event(stream uint64, id, cursor string) func(*harness) string {
	return frame(stream, MethodEvent, fmt.Sprintf(
		`{"eventId":%q,"name":"fs.changed","timestamp":"2026-01-01T00:00:00Z","cursor":%q,"data":{"path":"a"},"_meta":{"x":1}}`, id, cursor))
}

func ended(stream uint64, reason messages.EndReason, why string) func(*harness) string {
	return func(h *harness) string {
		return h.take(h.s.StreamEnded(stream, messages.End{Reason: reason, Error: why}))
	}
}

func rpcError(stream uint64, code int, msg string) func(*harness) string {
	return func(h *harness) string {
		return h.take(h.s.StreamEnded(stream, messages.End{Reason: messages.EndError, Error: msg,
			ProtocolError: &messages.ProtocolError{Code: code, Message: msg}}))
	}
}

// check asserts something about the subscription between steps.
func check(f func(h *harness)) func(*harness) string {
	return func(h *harness) string { f(h); return "" }
}

// wakes returns the Wake and Resolve/Reject effects of the whole run, in
// order, from the log.
func (h *harness) count(prefix string) int {
	n := 0
	for _, line := range h.log {
		for _, part := range strings.Split(line, "; ") {
			if strings.HasPrefix(part, prefix) {
				n++
			}
		}
	}
	return n
}

func i64(v int64) *int64 { return &v }

// reopened runs the common start of recovery scripts: subscribe, ack with
// cursor c0, lose the stream (one wake), reopen it after 1 s as #2.
func reopened() func(*harness) string {
	return func(h *harness) string {
		h.t.Helper()
		h.run([]step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{ended(1, messages.EndDisconnected, "connection lost"), lostWake + "; arm retry 1s"},
			{wait(time.Second), "open #2 cursor=c0 retry=1; arm activation 15s"},
		})
		return ""
	}
}
