package remote

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/sessions"
)

// A subscribe whose caller gave up, answered after all (the cancel
// crossed the reply: the member had made the session an owner): the
// session lets the subscription go, so the member's runtime ends it with
// its last owner. (The simulator found the member-side half, seed 38 of
// its shared campaign; this is the session's half, with the race built by
// hand: the late reply is handed to the session as its receiver would.)
func TestLateSubscribeReplyIsLetGo(t *testing.T) {
	ev := config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}
	r := newRig(t, map[string]config.Server{"ev": ev}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	tool, _ := s.Tool(mcprt.EventsToolName)
	res := tool.Execute(ctx, json.RawMessage(`{"action":"subscribe","server":"ev","name":"`+testserver.EventTest+`"}`))
	sub := subscribed(res)
	if res.IsError || sub == "" {
		t.Fatalf("subscribe: %s", res.Text)
	}
	memberList := func() string {
		mt, _ := r.rt.Tool(mcprt.EventsToolName)
		return mt.Execute(ctx, json.RawMessage(`{"action":"list"}`)).Text
	}
	if !strings.Contains(memberList(), sub) {
		t.Fatalf("the member's runtime does not list %s", sub)
	}
	late, _ := json.Marshal(res)
	s.mu.Lock()
	s.abandoned[9999] = true // a subscribe with id 9999 was cancelled by its caller
	s.mu.Unlock()
	s.answer(&replyMsg{ID: 9999, Result: late})
	testkit.Poll(ctx, t, "the runtime's subscription ended with its only owner's share", func() bool {
		return !strings.Contains(memberList(), sub)
	})
	if list := tool.Execute(ctx, json.RawMessage(`{"action":"list"}`)).Text; strings.Contains(list, sub) {
		t.Errorf("the session still lists %s: %s", sub, list)
	}
}

// A subscribe answered by reuse with a subscription whose last owner is
// ending it runs again (sessions/closing.go), through the session actor
// (rerunMsg, its held request) on the real runtime. The race is built by
// hand: the rules are told B's subscribe is in flight, A's unsubscribe
// ends the subscription on the runtime, then B's outcome naming it is
// handed to B's actor as its goroutine would post it.
func TestSubscribeAnsweredWithAnEndingSubscriptionRunsAgain(t *testing.T) {
	ev := config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}
	r := newRig(t, map[string]config.Server{"ev": ev}, ServeOptions{})
	a := r.attach(t, AttachOptions{})
	r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	tool, _ := a.Tool(mcprt.EventsToolName)
	args := json.RawMessage(`{"action":"subscribe","server":"ev","name":"` + testserver.EventTest + `"}`)
	res := tool.Execute(ctx, args)
	x := subscribed(res)
	if res.IsError || x == "" {
		t.Fatalf("subscribe: %s", res.Text)
	}
	rt := r.srv.router
	b := rt.all()[1]
	rt.do(func(m *sessions.Member) []sessions.Effect {
		m.Request(b.Id, sessions.Request{ID: 9999, Server: "ev", Counts: true, Action: "subscribe"})
		return nil
	})
	if res := tool.Execute(ctx, json.RawMessage(`{"action":"unsubscribe","subscription_id":"`+x+`"}`)); res.IsError {
		t.Fatalf("unsubscribe: %s", res.Text)
	}
	memberList := func() string {
		mt, _ := r.rt.Tool(mcprt.EventsToolName)
		return mt.Execute(ctx, json.RawMessage(`{"action":"list"}`)).Text
	}
	if strings.Contains(memberList(), x) {
		t.Fatalf("%s still live after its last owner's unsubscribe", x)
	}
	late, _ := json.Marshal(res)
	r.srv.n.sys.Root.Send(b, callDone{id: 9999, sub: x, req: &requestMsg{ID: 9999, Op: opTool, Name: mcprt.EventsToolName, Args: args},
		reply: &replyMsg{ID: 9999, Result: late}})
	testkit.Poll(ctx, t, "B's subscribe ran again and its outcome was taken", func() bool {
		done := false
		rt.do(func(m *sessions.Member) []sessions.Effect { done = !m.Has(b.Id, 9999); return nil })
		return done
	})
	list := memberList()
	var owned []string
	for _, f := range strings.FieldsFunc(list, func(c rune) bool { return c == '"' }) {
		if strings.HasPrefix(f, "sub-") && !slices.Contains(owned, f) {
			owned = append(owned, f)
		}
	}
	if len(owned) != 1 || owned[0] == x {
		t.Fatalf("the runtime's subscriptions %v, want one fresh one (not %s): %s", owned, x, list)
	}
	var owners []string
	rt.do(func(m *sessions.Member) []sessions.Effect { owners = m.Owners(owned[0]); return nil })
	if !slices.Equal(owners, []string{b.Id}) {
		t.Errorf("owners of %s: %v, want B (%s)", owned[0], owners, b.Id)
	}
}
