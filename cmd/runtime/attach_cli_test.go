package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// The commands that work on servers work the same through --attach:
// prompts, prompt, resources, read and events run on the shared runtime,
// and the member's configuration issues are warned of as a runtime of the
// CLI's own would warn of its own. Commands about this machine's
// configuration or tokens say they do not attach.
func TestCommandsAttached(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	err := testserver.WriteScript(script, testserver.Script{
		Prompts:           []json.RawMessage{json.RawMessage(`{"name":"greet","arguments":[{"name":"who","required":true},{"name":"tone"}]}`)},
		Resources:         []json.RawMessage{json.RawMessage(`{"uri":"note://a","name":"a","description":"the note"}`)},
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"note://{id}","name":"note"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := startServeConfig(t, map[string]any{
		"sc":   map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --script " + script)},
		"demo": map[string]any{"command": binary(t), "args": []string{"demo-server", "--root", t.TempDir()}},
		"bad":  map[string]any{"url": "ftp://example.com/mcp"},
		"ask":  map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --client-requests")},
	})
	run := func(args ...string) outcome {
		t.Helper()
		return runCLI(t, nil, append([]string{"--attach", addr}, args...)...)
	}
	if o := run("connect", "sc"); o.code != 0 {
		t.Fatalf("connect: %d %q %q", o.code, o.stdout, o.stderr)
	}
	o := run("prompts")
	if o.code != 0 || !strings.Contains(o.stdout, "sc greet(who, tone?)") {
		t.Errorf("prompts: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stderr, `runtime: warning: bad: `) || !strings.Contains(o.stderr, `mcp.json: server "bad": field url: must be an absolute http or https URL`) {
		t.Errorf("the member's configuration issue is not warned of: %q", o.stderr)
	}
	if o := run("prompt", "sc", "greet", "Ada", "tone=warm"); o.code != 0 || !strings.Contains(o.stdout, `prompt greet with {"tone":"warm","who":"Ada"}`) {
		t.Errorf("prompt: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := run("prompt", "sc", "greet", "a", "b", "c"); o.code != 2 {
		t.Errorf("prompt with too many words: %d %q %q, want exit 2", o.code, o.stdout, o.stderr)
	}
	if o := run("resources", "sc"); o.code != 0 || !strings.Contains(o.stdout, "sc  note://a  Read the resource note://a: the note") || !strings.Contains(o.stdout, "sc  note://{id}  (template) note") {
		t.Errorf("resources: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := run("read", "--server", "sc", "note://a"); o.code != 0 || !strings.Contains(o.stdout, "read note://a") {
		t.Errorf("read: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := run("read", "--server", "sc", "note", "id=b"); o.code != 0 || !strings.Contains(o.stdout, "read note://b") {
		t.Errorf("read a template: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := run("events", "catalog", "demo"); o.code != 0 || !strings.Contains(o.stdout, `"name":"clock.tick"`) {
		t.Errorf("events catalog: %d %q %q", o.code, o.stdout, o.stderr)
	}
	o = run("--json", "events", "subscribe", "demo", "clock.tick", `{"seconds":1}`, "--for", "4s")
	if o.code != 0 || !strings.HasPrefix(o.stdout, `{"type":"subscribed"`) || !strings.Contains(o.stdout, `{"type":"wakeup","kind":"mcp-events"`) ||
		!strings.Contains(o.stdout, `clock.tick`) {
		t.Errorf("events subscribe: %d %q %q", o.code, o.stdout, o.stderr)
	}
	// A server's roots/list during an attached call is answered with
	// this process's --root.
	root := t.TempDir()
	if o := run("--root", root, "call", "ask_roots", "{}"); o.code != 0 || !strings.Contains(o.stdout, "file://"+root) {
		t.Errorf("roots through --attach --root: %d %q %q", o.code, o.stdout, o.stderr)
	}
	// Completion offers the member's servers, and the tools its catalog
	// knows (demo's, listed by the events commands above).
	if o := run("__complete", "list", ""); o.code != 0 || !strings.Contains(o.stdout, "sc\n") || !strings.Contains(o.stdout, "demo\n") {
		t.Errorf("completing a server: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := run("__complete", "call", ""); o.code != 0 || !strings.Contains("\n"+o.stdout, "\ndemo_") {
		t.Errorf("completing a tool: %d %q %q", o.code, o.stdout, o.stderr)
	}
	// The sidecar attached: the hello first, then the member's issue as
	// a warning notice.
	sc := startSidecar(t, "--attach", addr)
	sc.out = sessionSchema(t, "output")
	if first := sc.await("the hello", func(string, map[string]any) bool { return true }); first["hello"] == nil {
		t.Fatalf("first line %v, want the hello", first)
	}
	n, _ := sc.await("the issue's notice", func(_ string, v map[string]any) bool { return v["notice"] != nil })["notice"].(map[string]any)
	if n["level"] != "warning" || n["server"] != "bad" || !strings.Contains(n["text"].(string), "must be an absolute http or https URL") {
		t.Errorf("notice %v", n)
	}
	for _, args := range [][]string{{"config", "show"}, {"auth", "status"}, {"disable", "sc"}, {"demo"}} {
		if o := run(args...); o.code != 2 || !strings.Contains(o.stderr, "--attach") {
			t.Errorf("%v attached: %d %q", args, o.code, o.stderr)
		}
	}
}
