package supervisor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// core returns a lazy server's core with short, distinct deadlines.
func core(mode Mode) *Server {
	return NewServer(ServerConfig{
		Name: "s", Policy: Policy{Mode: mode, IdleTimeout: time.Minute},
		CallTimeout: 60 * time.Second, CatalogTimeout: 30 * time.Second, HealthTimeout: 5 * time.Second, StartupTimeout: 10 * time.Second,
		MaxPages: 3, NewListing: func() Listing { return &fakeListing{} },
	}, 0, 0, nil, Handover{})
}

func call(token messages.Token) *messages.Request {
	return &messages.Request{Token: token, Method: "tools/call", Deadline: messages.DeadlineCall, Origin: messages.OriginModel, Reply: func(messages.Reply) {}}
}

// connected drives s through the dial of generation gen.
func connected(t *testing.T, s *Server, now time.Time, gen uint64) []Effect {
	t.Helper()
	expect(t, "slot", s.SlotGranted(now, gen), "start-dial gen="+itoa(gen)+"; arm startup 10s #"+itoa(gen))
	return s.Dialed(now, gen, nil, true, Caps{})
}

func itoa(n uint64) string { return fmt.Sprint(n) }

func TestOpsCallWaitsBehindTheDial(t *testing.T) {
	s := core(Lazy)
	expect(t, "first call", s.Request(t0, call(1)), "dial gen=1")
	expect(t, "second call joins the dial", s.Request(t0, call(2)), "")
	expect(t, "dialed", connected(t, s, t0, 1),
		"disarm startup; release-slot gen=1; arm idle 1m0s #1; disarm idle; arm deadline 1m0s #1; send gen=1 1 tools/call; send gen=1 2 tools/call; publish-info gen=1")
	expect(t, "answer", s.OpResult(t0.Add(time.Second), messages.OpResult{Gen: 1, ID: 2, Result: json.RawMessage(`{}`)}), "reply ok gen=1")
	expect(t, "last answer re-arms idle", s.OpResult(t0.Add(time.Second), messages.OpResult{Gen: 1, ID: 1, Result: json.RawMessage(`{}`)}),
		"reply ok gen=1; arm idle 1m0s #3")
	if s.Leases() != 0 {
		t.Fatalf("leases %d", s.Leases())
	}
}

func TestOpsDeadlinesOneTimer(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	connected(t, s, t0, 1)
	// A later call does not re-arm the timer: the earliest deadline rules.
	expect(t, "second call", s.Request(t0.Add(10*time.Second), call(2)), "send gen=1 2 tools/call")
	expect(t, "stale firing", s.Fire(t0.Add(time.Minute), TimerDeadline, 0), "")
	expect(t, "first expires, timer re-armed for the second", s.Fire(t0.Add(time.Minute), TimerDeadline, 1),
		"cancel gen=1 1; reply request_timeout gen=1; arm deadline 10s #2")
	expect(t, "late answer of the expired call", s.OpResult(t0.Add(time.Minute), messages.OpResult{Gen: 1, ID: 1}), "")
	expect(t, "second expires", s.Fire(t0.Add(70*time.Second), TimerDeadline, 2), "cancel gen=1 2; reply request_timeout gen=1; arm idle 1m0s #3")
}

func TestOpsUserWaitStandsDeadlinesStill(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	connected(t, s, t0, 1)
	expect(t, "wait begins", s.UserWait(t0.Add(10*time.Second), 1), "")
	expect(t, "deadline fires while a person answers", s.Fire(t0.Add(time.Minute), TimerDeadline, 1), "")
	expect(t, "wait ends after 100 s: the deadline moves 100 s later", s.UserWait(t0.Add(110*time.Second), -1),
		"disarm deadline; arm deadline 50s #2")
	expect(t, "expires at 160 s", s.Fire(t0.Add(160*time.Second), TimerDeadline, 2), "cancel gen=1 1; reply request_timeout gen=1; arm idle 1m0s #3")
}

func TestOpsNotSentMovesToANewConnection(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	connected(t, s, t0, 1)
	// The connection had ended before the request could be written: the
	// lifecycle treats it as closed at once and the request moves.
	eff := s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, NotSent: true, Err: messages.Errorf(messages.KindDisconnected, "s", "gone")})
	expect(t, "not sent", eff, "close gen=1; disarm idle; disarm health; dial gen=2")
	expect(t, "moved", connected(t, s, t0, 2), "disarm startup; release-slot gen=2; arm idle 1m0s #3; disarm idle; send gen=2 2 tools/call; publish-info gen=2")
	expect(t, "old connection ends", s.ConnClosed(t0, 1, nil), "")
	expect(t, "answered on the new one", s.OpResult(t0, messages.OpResult{Gen: 2, ID: 2}), "reply ok gen=2; arm idle 1m0s #5")
}

func TestOpsResendsAreBounded(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	gen := uint64(1)
	connected(t, s, t0, gen)
	dead := messages.OpResult{NotSent: true, Err: messages.Errorf(messages.KindDisconnected, "s", "gone")}
	for i := 0; i < MaxResends; i++ {
		dead.Gen, dead.ID = gen, s.LastOp()
		s.OpResult(t0, dead)
		gen++
		connected(t, s, t0, gen)
	}
	dead.Gen, dead.ID = gen, s.LastOp()
	expect(t, "given up", s.OpResult(t0, dead), "close gen=4; disarm idle; disarm health; reply disconnected gen=4")
}

func TestOpsAbort(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	expect(t, "abort a waiter", s.Abort(t0, 1), "answer aborted")
	s.Request(t0, call(2))
	connected(t, s, t0, 1)
	expect(t, "abort an operation", s.Abort(t0, 2), "cancel gen=1 1; reply aborted gen=1; arm idle 1m0s #3")
	expect(t, "unknown token", s.Abort(t0, 9), "")
}

func TestOpsShutdownWaitsForConnections(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	connected(t, s, t0, 1)
	s.Sent(1, 1)
	expect(t, "shutdown", s.Shutdown(t0),
		"cancel gen=1 1; reply shutdown gen=1; arm idle 1m0s #3; disarm idle; disarm health; disarm reconnect; close gen=1")
	expect(t, "second shutdown", s.Shutdown(t0), "")
	expect(t, "call refused", s.Request(t0, call(2)), "answer shutdown")
	// The cancelled call's outcome is still on its way: the port answers
	// every send once, and Close must not return before it has.
	expect(t, "closed", s.ConnClosed(t0, 1, nil), "")
	expect(t, "the last outcome", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Err: messages.Errorf(messages.KindAborted, "s", "cancelled")}), "stopped")
}

func TestOpsSentAfterConnClosedPostedMoves(t *testing.T) {
	// Seed 66071: a call goes out on gen 1 after the port posted gen 1's
	// ConnClosed; the ConnClosed finds it unsettled, so never written: it
	// moves to a new connection instead of failing, and its NotSent
	// outcome, arriving later, changes nothing.
	s := core(Lazy)
	s.Request(t0, call(1))
	connected(t, s, t0, 1)
	s.Sent(1, 1)
	expect(t, "closed", s.ConnClosed(t0, 1, boom(messages.KindDisconnected)), "disarm idle; disarm health; dial gen=2")
	expect(t, "late NotSent", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, NotSent: true, Err: boom(messages.KindDisconnected)}), "")
	expect(t, "sent again", connected(t, s, t0, 2),
		"disarm startup; release-slot gen=2; arm idle 1m0s #3; disarm idle; send gen=2 2 tools/call; publish-info gen=2")
	expect(t, "answered once", s.OpResult(t0, messages.OpResult{Gen: 2, ID: 2, Result: json.RawMessage(`{}`)}), "reply ok gen=2; arm idle 1m0s #5")
}

func TestOpsCrashAnswersAllButTheHandledCommand(t *testing.T) {
	s := core(Lazy)
	handled := call(1)
	s.Request(t0, handled)
	s.Request(t0, call(2))
	connected(t, s, t0, 1)
	waiting := &messages.ListAll{Token: 3, Method: "tools/list", Field: "tools", Origin: messages.OriginModel, Reply: func(messages.ListReply) {}}
	s.Connect(t0, &messages.Connect{Token: 4, Fresh: true, Reply: func(messages.ConnectReply) {}})
	s.ListAll(t0, waiting)
	s.SlotGranted(t0, 2)
	expect(t, "crash", s.Crash(t0, handled),
		"answer internal_error; answer internal_error; cancel gen=1 1; cancel gen=1 2; reply internal_error gen=1; cancel-dial gen=2; release-slot gen=2; close gen=1")
}

// fakeListing records what a refresh hands it; tools/list fails with
// failTools (limit: a catalog limit).
type fakeListing struct {
	log       []string
	failTools error
	limit     bool
}

func (l *fakeListing) Add(method string, items []json.RawMessage) (bool, error) {
	l.log = append(l.log, fmt.Sprintf("add %s %d", method, len(items)))
	if method == "tools/list" && l.failTools != nil {
		return l.limit, l.failTools
	}
	return false, nil
}

func (l *fakeListing) Skip(method, message string) {
	l.log = append(l.log, "skip "+method+": "+message)
}

func TestDialStartupDeadline(t *testing.T) {
	s := core(Lazy)
	s.Request(t0, call(1))
	expect(t, "a slot for a generation no longer wanted goes back", s.SlotGranted(t0, 7), "release-slot gen=7")
	s.SlotGranted(t0, 1)
	expect(t, "installing a package holds the deadline", s.DialProgress(t0, 1, true), "disarm startup")
	expect(t, "the server starts: the deadline is armed afresh", s.DialProgress(t0.Add(time.Minute), 1, false), "disarm startup; arm startup 10s #1")
	expect(t, "progress of another dial", s.DialProgress(t0, 2, false), "")
	expect(t, "startup deadline", s.Fire(t0.Add(70*time.Second), TimerStartup, 1),
		"cancel-dial gen=1; disarm startup; release-slot gen=1; answer init_timeout")
	expect(t, "the abandoned dial connects after all: closed", s.Dialed(t0.Add(71*time.Second), 1, nil, true, Caps{}), "close gen=1")
	expect(t, "a stale startup firing", s.Fire(t0.Add(80*time.Second), TimerStartup, 1), "")
}

func TestOpsShutdownWaitsForAnAbandonedDial(t *testing.T) {
	// Seed 15389: a dial given up on at its startup deadline still owes its
	// DialResult (and maybe a child process to reap): Close waits for it.
	s := core(Lazy)
	s.Request(t0, call(1))
	s.SlotGranted(t0, 1)
	s.Dialing(1)
	s.Fire(t0.Add(10*time.Second), TimerStartup, 1)
	if got := render(s.Shutdown(t0.Add(11 * time.Second))); strings.Contains(got, "stopped") {
		t.Fatalf("stopped before the dial's outcome: %s", got)
	}
	expect(t, "the abandoned dial's outcome", s.Dialed(t0.Add(12*time.Second), 1, boom(messages.KindAborted), false, Caps{}), "stopped")
}
