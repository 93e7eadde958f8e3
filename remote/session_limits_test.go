package remote

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/sessions"
)

// eventsSub subscribes through the session's mcp_events tool to the test
// event with tag; it returns the result.
func eventsSub(ctx context.Context, s *Session, tag string) mcprt.Result {
	tool, _ := s.Tool(mcprt.EventsToolName)
	return tool.Execute(ctx, json.RawMessage(`{"action":"subscribe","server":"ev","name":"`+testserver.EventTest+`","arguments":{"tag":"`+tag+`"}}`))
}

func exhausted(t *testing.T, what string, err error, text ...string) {
	t.Helper()
	var e *messages.Error
	if !errors.As(err, &e) || e.Kind != messages.KindResourceExhausted {
		t.Fatalf("%s: %v, want resource_exhausted", what, err)
	}
	for _, s := range text {
		if !strings.Contains(e.Message, s) {
			t.Errorf("%s: %q does not say %q", what, e.Message, s)
		}
	}
}

// A session at its subscription limit (mcp_events shares and typed
// subscriptions together) is refused at once with resource_exhausted
// saying the limit and its count, while another session subscribes fine,
// sharing one of its subscriptions (a share counts for each owner); once
// it lets one go, it subscribes again.
func TestSessionSubscriptionLimit(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{SessionSubscriptions: 3})
	a, b := r.attach(t, AttachOptions{}), r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	var ids []string
	for _, tag := range []string{"one", "two"} {
		res := eventsSub(ctx, a, tag)
		if res.IsError || subscribed(res) == "" {
			t.Fatalf("a's subscribe %s: %s", tag, res.Text)
		}
		ids = append(ids, subscribed(res))
	}
	typed, err := a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "three"}, func(mcprt.Delivery) {})
	if err != nil {
		t.Fatal(err)
	}
	res := eventsSub(ctx, a, "four")
	if !res.IsError || res.ErrorCode() != messages.KindResourceExhausted.Code() ||
		!strings.Contains(res.Text, "holds 3 subscriptions") || !strings.Contains(res.Text, "limit of 3") {
		t.Fatalf("a's 4th subscribe: %q (%v), want resource_exhausted naming the limit and its count", res.Text, res.Details)
	}
	_, err = a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "four"}, func(mcprt.Delivery) {})
	exhausted(t, "a's typed subscribe at its limit", err, "holds 3 subscriptions", "limit of 3")

	// b is not affected, and shares a's first subscription.
	if res := eventsSub(ctx, b, "one"); res.IsError || subscribed(res) != ids[0] {
		t.Fatalf("b's subscribe of a's identity: %s (want %s, shared)", res.Text, ids[0])
	}
	if res := eventsSub(ctx, b, "four"); res.IsError {
		t.Fatalf("b's subscribe: %s", res.Text)
	}
	bt, err := b.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "three"}, func(mcprt.Delivery) {})
	if err != nil {
		t.Fatalf("b's typed subscribe: %v", err)
	}
	defer bt.Stop()
	if res := eventsSub(ctx, b, "five"); !res.IsError || res.ErrorCode() != messages.KindResourceExhausted.Code() {
		t.Fatalf("b's 4th subscribe: %q, want refused (its share of a's subscription counts for it)", res.Text)
	}

	// a lets one go (its share of the one b shares: the subscription
	// lives on for b), and may subscribe again; its typed one's Stop too.
	tool, _ := a.Tool(mcprt.EventsToolName)
	if res := tool.Execute(ctx, json.RawMessage(`{"action":"unsubscribe","subscription_id":"`+ids[0]+`"}`)); res.IsError {
		t.Fatal(res.Text)
	}
	if res := eventsSub(ctx, a, "four"); res.IsError {
		t.Fatalf("a's subscribe after an unsubscribe: %s", res.Text)
	}
	if _, err := a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "five"}, func(mcprt.Delivery) {}); err == nil {
		t.Fatal("a's typed subscribe at its limit again was taken")
	}
	typed.Stop()
	at, err := a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "five"}, func(mcprt.Delivery) {})
	if err != nil {
		t.Fatalf("a's typed subscribe after a Stop: %v", err)
	}
	at.Stop()
}

// A session with its calls in flight at its limit is refused at once
// (resource_exhausted, the count and the limit) while another session
// calls fine; once one of its calls ends, it calls again.
func TestSessionCallsLimit(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{SessionCalls: 2})
	a, b := r.attach(t, AttachOptions{}), r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	hangCtx, release := context.WithCancel(ctx)
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			_, err := a.CallTool(hangCtx, "ev", "hang", map[string]any{})
			done <- err
		}()
	}
	testkit.Poll(ctx, t, "a's two calls in flight", func() bool { return leases(r, "ev") == 2 })
	_, err := a.CallTool(ctx, "ev", "echo", map[string]any{"message": "x"})
	exhausted(t, "a's third call", err, "2 calls in flight", "limit of 2")
	_, err = a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "x"}, func(mcprt.Delivery) {})
	exhausted(t, "a's typed subscribe", err, "2 calls in flight")
	if res, err := b.CallTool(ctx, "ev", "echo", map[string]any{"message": "b"}); err != nil || len(res.Content) == 0 {
		t.Fatalf("b's call while a is at its limit: %v", err)
	}
	release()
	for i := 0; i < 2; i++ {
		<-done
	}
	testkit.Poll(ctx, t, "a calls again once its calls ended", func() bool {
		_, err := a.CallTool(ctx, "ev", "echo", map[string]any{"message": "again"})
		return err == nil
	})
}

// The limits' defaults and their configuration: 0 is the default, a
// negative one none.
func TestSessionLimitsConfigured(t *testing.T) {
	for _, tc := range []struct {
		subs, calls int
		want        sessions.Limits
	}{
		{0, 0, sessions.Limits{Subs: 25, Calls: 64}},
		{5, -1, sessions.Limits{Subs: 5}},
		{-1, 7, sessions.Limits{Calls: 7}},
	} {
		if got := NewServer(ServeOptions{SessionSubscriptions: tc.subs, SessionCalls: tc.calls}).router.limits; got != tc.want {
			t.Errorf("%d, %d: %+v, want %+v", tc.subs, tc.calls, got, tc.want)
		}
	}
}
