//go:build unix

package e2e

import (
	"sync"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/remote"
)

// TestSharedQuestionsFollowTheirCall: two sessions call the same
// Streamable HTTP server at once, each call's question open while the
// other's is; the server asks on each call's own response stream, so each
// question reaches the session whose call it belongs to (the rule by
// calls in flight would send both to the older call's session), with the
// tag that session gave its call. A call's progress reaches only its
// session, tagged too.
func TestSharedQuestionsFollowTheirCall(t *testing.T) {
	t.Parallel()
	url := testenv.StartEverything(t, "streamableHttp") + "/mcp"
	m := startMemberWith(t, nil, map[string]any{"every": map[string]any{"url": url}}, nil)
	ctx := testCtx(t)
	pair := newPairGate() // each question is held open until the other call's is
	sessions := map[string]*callerHost{"a": {pair: pair}, "b": {pair: pair}}
	attached := map[string]*remote.Session{}
	for name, rec := range sessions {
		s, err := remote.Attach(ctx, m.addr, remote.AttachOptions{Client: rec.hooks(), TokenFile: m.tokenFile(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		attached[name] = s
	}
	var wg sync.WaitGroup
	for name, s := range attached {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := mcpCall(mcprt.WithCaller(ctx, name+"-call"), t, s, `{"server":"every","tool":"trigger-elicitation-request","args":{}}`)
			if res.IsError {
				t.Errorf("%s's call: %s", name, res.Text)
			}
		}()
	}
	wg.Wait()
	for name, rec := range sessions {
		rec.mu.Lock()
		if len(rec.asked) != 1 || rec.asked[0] != name+"-call" {
			t.Errorf("session %s was asked with callers %v, want [%s-call]", name, rec.asked, name)
		}
		rec.mu.Unlock()
	}

	res := mcpCall(mcprt.WithCaller(ctx, "a-progress"), t, attached["a"], `{"server":"every","tool":"trigger-long-running-operation","args":{"duration":0.3,"steps":3}}`)
	if res.IsError {
		t.Fatalf("long-running operation: %s", res.Text)
	}
	a, b := sessions["a"], sessions["b"]
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	if len(a.progress) == 0 || len(b.progress) != 0 {
		t.Fatalf("progress reached a %d times and b %d times; want a only", len(a.progress), len(b.progress))
	}
	for _, c := range a.progress {
		if c != "a-progress" {
			t.Errorf("a's progress came with caller %v", c)
		}
	}
}
