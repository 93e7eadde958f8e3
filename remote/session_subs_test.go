package remote

import (
	"encoding/json"
	"strings"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
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
