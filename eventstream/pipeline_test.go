package eventstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// pipe is the pure part of the events path as an actor would run it:
// subscriptions feeding the events and status batchers, on explicit time.
// Subscription timers are not simulated here (recovery_test.go does that).
type pipe struct {
	t      *testing.T
	now    time.Time
	events *Batcher[*EventItem]
	status *Batcher[Snapshot]
	// flush deadlines and tokens of the two batchers (zero: not armed)
	evAt, stAt       time.Time
	evToken, stToken uint64
	wakeups          []messages.HostMessage
	notices          []messages.Notice
}

func newPipe(t *testing.T) *pipe {
	return &pipe{t: t, now: t0, events: NewEventBatcher(BatchLimits{}), status: NewStatusBatcher(BatchLimits{})}
}

func (p *pipe) sub(id string) *Subscription {
	s, err := NewSubscription(Spec{ID: id, Server: "demo", Name: "fs.changed"}, Limits{})
	if err != nil {
		p.t.Fatal(err)
	}
	p.exec(s.Start())
	return s
}

func (p *pipe) armed(effects []Effect, at *time.Time, token *uint64) {
	for _, e := range effects {
		switch e := e.(type) {
		case Arm:
			*at, *token = p.now.Add(e.After), e.Token
		case Disarm:
			*at = time.Time{}
		}
	}
}

// exec runs a subscription's effects the way the actor does.
func (p *pipe) exec(effects []Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case Deliver:
			enc, err := PrepareEvent(e.Item)
			if err != nil {
				p.t.Fatal(err)
			}
			p.armed(p.events.Add(enc), &p.evAt, &p.evToken)
		case Wake:
			enc, err := PrepareStatus(e.Status)
			if err != nil {
				p.t.Fatal(err)
			}
			p.armed(p.status.Add(enc), &p.stAt, &p.stToken)
		case Notify:
			p.notices = append(p.notices, e.Notice)
		}
	}
}

func (p *pipe) frame(s *Subscription, method, params string) {
	p.exec(s.Frame(p.now, s.streams, Decode(method, json.RawMessage(params))))
}

func (p *pipe) event(s *Subscription, id string) {
	p.frame(s, MethodEvent, fmt.Sprintf(`{"eventId":%q,"name":"fs.changed","timestamp":"t","cursor":"c-%s","data":{}}`, id, id))
}

// wait advances time, flushing the batchers when their windows end.
func (p *pipe) wait(d time.Duration) {
	p.now = p.now.Add(d)
	if !p.evAt.IsZero() && !p.evAt.After(p.now) {
		p.evAt = time.Time{}
		if m, ok := p.events.Fire(p.evToken); ok {
			p.wakeups = append(p.wakeups, m)
		}
	}
	if !p.stAt.IsZero() && !p.stAt.After(p.now) {
		p.stAt = time.Time{}
		if m, ok := p.status.Fire(p.stToken); ok {
			p.wakeups = append(p.wakeups, m)
		}
	}
}

// shutdown cancels every subscription and clears both batchers.
func (p *pipe) shutdown(subs ...*Subscription) {
	for _, s := range subs {
		p.exec(s.Cancel())
	}
	p.armed(p.events.Clear(), &p.evAt, &p.evToken)
	p.armed(p.status.Clear(), &p.stAt, &p.stToken)
}

// kinds renders the wakeups so far: "mcp-events:2 mcp-events-status:1".
func (p *pipe) kinds() string {
	var parts []string
	for _, m := range p.wakeups {
		if !m.TriggerTurn || m.DeliverAs != "followUp" {
			p.t.Fatalf("wakeup without a turn: %+v", m)
		}
		n := 0
		switch d := m.Details.(type) {
		case EventsDetails:
			n = len(d.Events)
		case StatusDetails:
			n = len(d.Subscriptions)
		}
		parts = append(parts, fmt.Sprintf("%s:%d", m.Kind, n))
	}
	return strings.Join(parts, " ")
}

func TestPipelineEventWakesOnceAfterTheWindow(t *testing.T) {
	p := newPipe(t)
	s := p.sub("sub-1")
	p.frame(s, MethodActive, `{"cursor":"c0"}`)
	p.frame(s, MethodHeartbeat, `{"cursor":"c1"}`)
	p.wait(time.Second)
	if got := p.kinds(); got != "" {
		t.Fatalf("heartbeat woke: %s", got)
	}
	p.event(s, "e1")
	p.wait(300 * time.Millisecond)
	p.event(s, "e2")
	p.event(s, "e1") // duplicate
	p.wait(199 * time.Millisecond)
	if got := p.kinds(); got != "" {
		t.Fatalf("woke before 500 ms: %s", got)
	}
	p.wait(time.Millisecond)
	if got := p.kinds(); got != "mcp-events:2" {
		t.Fatalf("wakeups %s", got)
	}
	p.event(s, "e3") // the window 500 ms from here is a new one
	p.shutdown(s)
	p.wait(time.Second)
	if got := p.kinds(); got != "mcp-events:2" || len(p.notices) != 0 {
		t.Fatalf("shutdown woke: %s, notices %v", got, p.notices)
	}
}

func TestPipelineStatusWakeups(t *testing.T) {
	p := newPipe(t)
	ended, failed, lost, errs, unsub := p.sub("a"), p.sub("b"), p.sub("c"), p.sub("d"), p.sub("e")
	for _, s := range []*Subscription{ended, failed, lost, errs, unsub} {
		p.frame(s, MethodActive, `{"cursor":null}`)
	}
	p.exec(unsub.Cancel())
	p.exec(ended.StreamEnded(1, messages.End{Reason: messages.EndEnded}))
	p.exec(failed.StreamEnded(1, messages.End{Reason: messages.EndError, Error: "Forbidden",
		ProtocolError: &messages.ProtocolError{Code: -32012, Message: "Forbidden"}}))
	p.exec(lost.StreamEnded(1, messages.End{Reason: messages.EndDisconnected, Error: "connection lost"}))
	p.frame(errs, MethodError, `{"error":{"message":"poll failed"}}`)
	p.frame(errs, MethodError, `{"error":{"message":"poll failed"}}`)
	p.wait(500 * time.Millisecond)
	if got := p.kinds(); got != "mcp-events-status:4" {
		t.Fatalf("wakeups %s", got)
	}
	var statuses []string
	for _, s := range p.wakeups[0].Details.(StatusDetails).Subscriptions {
		statuses = append(statuses, s.ID+"="+string(s.Status))
	}
	if got := strings.Join(statuses, " "); got != "a=ended b=failed c=reconnecting d=active" {
		t.Fatalf("statuses %s", got)
	}
	var notices []string
	for _, n := range p.notices {
		notices = append(notices, n.Server+": "+n.Text)
	}
	if got := strings.Join(notices, " | "); got != "demo: Forbidden | demo: connection lost | demo: poll failed" {
		t.Fatalf("notices %s", got)
	}
}
