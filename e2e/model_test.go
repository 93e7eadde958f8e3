package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// scriptServer is the test server serving script s.
func scriptServer(t *testing.T, s testserver.Script) config.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := testserver.WriteScript(path, s); err != nil {
		t.Fatal(err)
	}
	return selfServer(t, "--script "+path)
}

// Prompt arguments as seed 002 takes them: positional words fill the
// declared arguments in order, NAME=VALUE sets one by name.
func TestPromptPositionalArguments(t *testing.T) {
	ctx := testCtx(t)
	srv := scriptServer(t, testserver.Script{Prompts: []json.RawMessage{
		json.RawMessage(`{"name":"create_plan","arguments":[{"name":"goal","required":true},{"name":"status"}]}`)}})
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"board": srv}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Connect(ctx, "board", false); err != nil {
		t.Fatal(err)
	}
	res, err := rt.GetPromptWords(ctx, "board", "create_plan", []string{"harden retry policy", "status=paused"})
	if err != nil || !strings.Contains(res.Text, `prompt create_plan with {"goal":"harden retry policy","status":"paused"}`) {
		t.Fatalf("%v %q", err, res.Text)
	}
	if _, err := rt.GetPromptWords(ctx, "board", "create_plan", []string{"a", "b", "c"}); err == nil || !strings.Contains(err.Error(), "no argument left") {
		t.Fatalf("too many words: %v", err)
	}
}
