package tools

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// scripted returns the test-server flags serving script s.
func scripted(t *testing.T, s testserver.Script) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := testserver.WriteScript(path, s); err != nil {
		t.Fatal(err)
	}
	return "--script " + path
}

// rawTools makes tool metadata with the given names.
func rawTools(names ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range names {
		b, _ := json.Marshal(map[string]any{"name": n, "description": "Tool " + n, "inputSchema": map[string]any{"type": "object"}})
		out = append(out, b)
	}
	return out
}

// withOptions rebuilds the rig's proxy tool with opts.
func (r *rig) withOptions(opts Options) *rig {
	r.mcp = NewMCP(r.sys, opts).Tool()
	return r
}

// Resolution accepts every spelling the runtime produces and the
// separators models substitute, judges ambiguity over every configured
// server (also those never listed), names only candidates that resolve,
// and sends the host's own tools back to the host. Real servers, each in
// its own process, serving the names as scripted.
func TestResolutionSpellings(t *testing.T) {
	t.Parallel()
	flags := map[string]string{
		"chrome-devtools":  scripted(t, testserver.Script{Tools: rawTools("take_screenshot", "dotted.name")}),
		"context7":         scripted(t, testserver.Script{Tools: rawTools("resolve-library-id")}),
		"upstash-context7": scripted(t, testserver.Script{Tools: rawTools("resolve-library-id", "get-library-docs")}),
		"demo":             scripted(t, testserver.Script{Tools: rawTools("read_file")}),
		"other":            scripted(t, testserver.Script{Tools: rawTools("read_file")}),
	}
	r := newRig(t, []string{"chrome-devtools", "context7", "upstash-context7", "demo", "other"}, flags).withOptions(Options{HostTools: []string{"read", "bash"}})

	// Ambiguity is judged over every configured server: only context7 is
	// listed, yet upstash-context7 (never listed) offers the same tool.
	if res := r.exec(`{"server":"context7"}`); res.IsError {
		t.Fatal(res.Text)
	}
	res := r.exec(`{"tool":"resolve_library_id","args":{}}`)
	wantCode(t, res, "ambiguous_tool")
	if !strings.Contains(res.Text, "context7_resolve-library-id, upstash-context7_resolve-library-id") {
		t.Fatalf("ambiguity: %q", res.Text)
	}
	for _, name := range []string{"context7_resolve-library-id", "upstash-context7_resolve-library-id", "upstash_context7_resolve_library_id", "context7.resolve.library.id"} {
		res := r.exec(`{"tool":"` + name + `","args":{"q":1}}`)
		if res.IsError || res.Text != `resolve-library-id called with {"q":1}` {
			t.Fatalf("%s: %q", name, res.Text)
		}
	}
	res = r.exec(`{"tool":"read_file"}`)
	wantCode(t, res, "ambiguous_tool")
	if !strings.Contains(res.Text, "demo_read_file, other_read_file") || strings.Contains(res.Text, "demo/read_file") {
		t.Fatalf("ambiguity: %q", res.Text)
	}

	for name, want := range map[string]string{
		"chrome_devtools_take_screenshot":      "take_screenshot",
		"chrome-devtools_take_screenshot":      "take_screenshot",
		"chrome-devtools/take_screenshot":      "take_screenshot",
		"Chrome.Devtools.Take-Screenshot":      "take_screenshot",
		"mcp__chrome-devtools_take_screenshot": "take_screenshot",
		"take-screenshot":                      "take_screenshot",
		"chrome-devtools_dotted_name":          "dotted.name",
		"chrome_devtools_dotted_name":          "dotted.name",
		"dotted_name":                          "dotted.name",
		"dotted-name":                          "dotted.name",
		"dotted.name":                          "dotted.name",
		"demo_read_file":                       "read_file",
		"other-read-file":                      "read_file",
		"get_library_docs":                     "get-library-docs",
	} {
		res := r.exec(`{"tool":"` + name + `"}`)
		if res.IsError || res.Text != want+" called with {}" {
			t.Errorf("%s: %q", name, res.Text)
		}
	}

	res = r.exec(`{"tool":"bash","args":{"command":"ls"}}`)
	wantCode(t, res, "tool_not_found")
	if !strings.Contains(res.Text, `"bash" is one of the host's own tools`) || !strings.Contains(res.Text, "call it directly") {
		t.Fatalf("host tool: %q", res.Text)
	}
	res = r.exec(`{"search":"bash"}`)
	if !strings.HasPrefix(res.Text, "The host's own tools (call them directly, not through mcp):\n- bash [host tool]\n") {
		t.Fatalf("search of a host tool: %q", res.Text)
	}
	res = r.exec(`{"search":"read"}`)
	if !strings.Contains(res.Text, "- read [host tool]") || !strings.Contains(res.Text, "demo_read_file (demo)") {
		t.Fatalf("search: %q", res.Text)
	}
}

// The name a direct tool was registered under (with a collision suffix)
// resolves through the proxy too.
func TestResolutionOfRegisteredDirectNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("l", 70)
	r := newRig(t, []string{"a"}, map[string]string{"a": scripted(t, testserver.Script{Tools: rawTools(long+"1", long+"2")})})
	m := NewMCP(r.sys, Options{DirectEnv: "a"})
	r.mcp = m.Tool()
	if res := r.exec(`{"server":"a"}`); res.IsError {
		t.Fatal(res.Text)
	}
	// Both names cut at 64 collide, so both get a hash suffix.
	s := m.Surface(nil)
	if len(s.Direct) != 2 || s.Direct[0].Name == s.Direct[1].Name || len(s.Direct[0].Name) != 64 {
		t.Fatalf("direct tools: %+v", s)
	}
	for i, d := range s.Direct {
		res := r.exec(`{"tool":"` + d.Name + `"}`)
		if want := fmt.Sprintf("%s%d called with {}", long, i+1); res.IsError || res.Text != want {
			t.Fatalf("%s: %q", d.Name, res.Text)
		}
	}
}

// {"server": "s", "tool": "t"} calls s's t even when another server has a
// tool named t too; a tool s lacks is tool_not_found naming who has it.
func TestToolOfANamedServer(t *testing.T) {
	t.Parallel()
	flags := map[string]string{
		"demo":  scripted(t, testserver.Script{Tools: rawTools("read_file", "only_demo")}),
		"other": scripted(t, testserver.Script{Tools: rawTools("read_file")}),
	}
	r := newRig(t, []string{"demo", "other"}, flags)
	wantCode(t, r.exec(`{"tool":"read_file","args":{}}`), "ambiguous_tool")
	for _, server := range []string{"demo", "other"} {
		res := r.exec(`{"server":"` + server + `","tool":"read_file","args":{}}`)
		if res.IsError || res.Details["server"] != server {
			t.Errorf("read_file of %s: %s %v", server, res.Text, res.Details)
		}
	}
	if res := r.exec(`{"server":"demo","tool":"demo_read_file","args":{}}`); res.IsError || res.Details["server"] != "demo" {
		t.Errorf("the prefixed spelling with its server: %s", res.Text)
	}
	res := r.exec(`{"server":"other","tool":"only_demo","args":{}}`)
	wantCode(t, res, "tool_not_found")
	if !strings.Contains(res.Text, `server "demo" does`) {
		t.Errorf("a tool of another server: %s", res.Text)
	}
	wantCode(t, r.exec(`{"server":"nosuch","tool":"read_file"}`), "server_not_found")
}
