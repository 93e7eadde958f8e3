//go:build unix

package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSharedMCPToolSeesPeers: member C runs no servers and names member
// A, which runs ts. A session on C sees ts is not listed yet, connects
// it (on A), finds its tool with the mcp tool's search (marked with ts),
// describes it and calls it by its name alone;
// a call by name alone in flight when A dies fails once naming A; then
// search no longer offers ts's tools and says why, and a call by name
// alone fails at once naming ts and A.
func TestSharedMCPToolSeesPeers(t *testing.T) {
	t.Parallel()
	ct := clusterTokenFile(t)
	a := startMemberWith(t, nil, nil, map[string]string{envCluster: ct}) // runs "ts"
	c := startMemberWith(t, nil, map[string]any{}, map[string]string{envServePeer: a.addr, envCluster: ct})
	ctx := testCtx(t)
	s := attach(t, c, nil)
	poll(ctx, t, "C to have A in its membership", func() bool { return slices.Contains(s.Servers(), "ts") })
	// ts is not listed yet: search says so, and connect (forwarded to A)
	// lists it.
	if res := mcpCall(ctx, t, s, `{"search":"echo"}`); !strings.Contains(res.Text, "Not listed yet (connect them to search their tools): ts") {
		t.Fatalf("search through C before ts was listed: %q", res.Text)
	}
	if res := mcpCall(ctx, t, s, `{"connect":"ts"}`); res.IsError || !strings.HasPrefix(res.Text, "ts (") {
		t.Fatalf("connect ts through C: %q", res.Text)
	}

	res := mcpCall(ctx, t, s, `{"search":"echo message"}`)
	var matches []struct{ Server, Tool string }
	b, _ := json.Marshal(res.Details["matches"])
	_ = json.Unmarshal(b, &matches)
	if res.IsError || len(matches) == 0 || matches[0].Server != "ts" || matches[0].Tool != "echo" || !strings.Contains(res.Text, "- echo (ts)") {
		t.Fatalf("search through C: %q %s, want A's echo first, marked ts", res.Text, b)
	}
	res = mcpCall(ctx, t, s, `{"describe":"echo"}`)
	if res.IsError || !strings.Contains(res.Text, "Server: ts") || !strings.Contains(res.Text, "Text to echo") {
		t.Fatalf("describe through C: %q", res.Text)
	}
	wantOK(t, mcpCall(ctx, t, s, `{"tool":"echo","args":{"message":"by name"}}`), "echo: by name")

	killDuringCall(ctx, t, s, a, `{"tool":"hang","args":{}}`)

	res = mcpCall(ctx, t, s, `{"search":"echo message"}`)
	if strings.Contains(res.Text, "- echo (ts)") || !strings.Contains(res.Text, "the tools of ts on the member at "+a.addr) {
		t.Fatalf("search through C after A died: %q, want ts's tools left out, saying so", res.Text)
	}
	res = mcpCall(ctx, t, s, `{"tool":"echo","args":{"message":"x"}}`)
	if !res.IsError || !strings.Contains(res.Text, "ts on the member at "+a.addr) {
		t.Fatalf("a call by name alone after A died: %q, want an error naming ts and A", res.Text)
	}
}
