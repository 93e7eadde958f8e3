package e2e

import (
	"encoding/json"
	"os"
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

// Resources in full, through the mcp tool and the Go API, against a real
// server: two resources of one name get distinct read_ tools that each read
// their own URI; any URI reads (listed or not); templates expand per RFC
// 6570 level 4; userinfo URIs are refused and never shown; every item
// carries a source marker; audio and binary go to files; a read shows at
// most 100 items.
func TestResourcesInFull(t *testing.T) {
	ctx := testCtx(t)
	many := `{"contents":[`
	for i := 0; i < 101; i++ {
		if i > 0 {
			many += ","
		}
		many += `{"uri":"mem://many","text":"item"}`
	}
	many += `]}`
	srv := scriptServer(t, testserver.Script{
		Resources: []json.RawMessage{
			json.RawMessage(`{"uri":"mem://a","name":"guide"}`),
			json.RawMessage(`{"uri":"mem://b","name":"guide"}`),
			json.RawMessage(`{"uri":"https://user:hunter2@example.com/x","name":"secret"}`),
		},
		ResourceTemplates: []json.RawMessage{
			json.RawMessage(`{"uriTemplate":"mem://docs/{topic}{?lang}","name":"docs"}`),
			json.RawMessage(`{"uriTemplate":"mem://files{/path*}","name":"files"}`),
		},
		Reads: map[string]json.RawMessage{
			"mem://sound": json.RawMessage(`{"contents":[{"uri":"mem://sound","mimeType":"audio/wav","blob":"UklGRg=="}]}`),
			"mem://many":  json.RawMessage(many),
		},
	})
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"srv": srv}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	exec := func(args string) mcprt.Result { return mcp.Execute(ctx, []byte(args)) }

	list := exec(`{"server":"srv"}`)
	if !strings.Contains(list.Text, "- read_guide - Read the resource mem://a") || !strings.Contains(list.Text, "- read_guide_") ||
		strings.Contains(list.Text, "hunter2") || !strings.Contains(list.Text, "Note: 1 resources with user information in their URI were left out") {
		t.Fatalf("list:\n%s", list.Text)
	}
	second := ""
	for _, l := range strings.Split(list.Text, "\n") {
		if strings.HasPrefix(l, "- read_guide_") {
			second = strings.Fields(l)[1]
		}
	}
	wantOK(t, exec(`{"tool":"read_guide"}`), "[resource srv: mem://a]\nread mem://a")
	wantOK(t, exec(`{"tool":"`+second+`"}`), "[resource srv: mem://b]\nread mem://b")
	wantOK(t, exec(`{"read":"mem://unlisted/x","server":"srv"}`), "[resource srv: mem://unlisted/x]\nread mem://unlisted/x")
	wantOK(t, exec(`{"read":"docs","args":{"topic":"a b","lang":"en"}}`), "[resource srv: mem://docs/a%20b?lang=en]\nread mem://docs/a%20b?lang=en")
	wantOK(t, exec(`{"read":"mem://files{/path*}","server":"srv","args":{"path":["x","y"]}}`), "[resource srv: mem://files/x/y]\nread mem://files/x/y")
	res := exec(`{"read":"https://user:hunter2@example.com/x","server":"srv"}`)
	wantError(t, res, "invalid_args", "srv")
	if strings.Contains(res.Text, "hunter2") {
		t.Fatalf("a credential reached the model: %s", res.Text)
	}
	res = exec(`{"read":"mem://sound","server":"srv"}`)
	if res.IsError || !strings.Contains(res.Text, "[resource srv: mem://sound]\n[resource mem://sound saved to ") {
		t.Fatalf("audio: %q", res.Text)
	}
	path := strings.TrimSuffix(strings.Fields(strings.SplitN(res.Text, " saved to ", 2)[1])[0], ":")
	if b, err := os.ReadFile(path); err != nil || string(b) != "RIFF" {
		t.Fatalf("audio file %s: %q %v", path, b, err)
	}
	res = exec(`{"read":"mem://many","server":"srv"}`)
	if res.IsError || strings.Count(res.Text, "[resource srv: mem://many]") != 100 || !strings.Contains(res.Text, "[1 more items left out: a read shows at most 100]") {
		t.Fatalf("101 items: %d markers", strings.Count(res.Text, "[resource srv: mem://many]"))
	}

	if res := rt.RenderTemplate(ctx, "srv", "docs", map[string]any{"topic": "go"}); res.IsError || res.Text != "[resource srv: mem://docs/go]\nread mem://docs/go" {
		t.Fatalf("ReadTemplate: %q", res.Text)
	}
	if res := rt.RenderResource(ctx, "srv", "mem://z"); res.IsError || res.Text != "[resource srv: mem://z]\nread mem://z" {
		t.Fatalf("ReadResource: %q", res.Text)
	}
	if res := rt.RenderTemplate(ctx, "srv", "docs", map[string]any{"topic": strings.Repeat("x", 300<<10)}); !res.IsError || !strings.Contains(res.Text, "256 KiB") {
		t.Fatalf("300 KiB of template arguments: %q", res.Text[:min(200, len(res.Text))])
	}
}
