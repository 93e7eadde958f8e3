package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

func named(names ...string) []config.Server {
	out := make([]config.Server, len(names))
	for i, n := range names {
		out[i] = config.Server{Name: n, Command: "unused"}
	}
	return out
}

// Status, list, search, describe and instructions answer from the disk
// cache without connecting; a call connects.
func TestModesAnswerFromTheCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), catalog.CacheFileName)
	entry := catalog.Entry{Tools: catalog.ParseTools([]json.RawMessage{
		json.RawMessage(tool("take_screenshot", "Take a screenshot of the page")),
		json.RawMessage(tool("navigate", "Navigate to a URL")),
	}), Prompts: []catalog.Prompt{{Name: "plan", Arguments: []catalog.PromptArgument{{Name: "goal", Required: true}}}}, Instructions: "Use navigate first."}
	if err := catalog.WriteCache(cache, "web", "key-web", entry, clock.Epoch); err != nil {
		t.Fatal(err)
	}
	web := &fakeServer{tools: []string{tool("take_screenshot", "Take a screenshot of the page"), tool("navigate", "Navigate to a URL")}}
	r := newFakeRig(t, map[string]*fakeServer{"web": web, "other": {tools: []string{}}}, named("web", "other"), config.Settings{}, cache)
	wantOK(t, r.exec(`{}`), "MCP: 0/2 servers connected, 2 tools\n○ web (2 tools, cached)\n○ other (not connected)")
	res := r.exec(`{"search":"screenshot"}`)
	if res.IsError || !strings.Contains(res.Text, "Found 1 tool matching \"screenshot\":\n- take_screenshot (web) - Take a screenshot of the page\n  Parameters:\n    message (string, required) - What to say") {
		t.Fatalf("search:\n%s", res.Text)
	}
	res = r.exec(`{"describe":"web_navigate"}`)
	if res.IsError || res.Text != "navigate\nServer: web\n\nNavigate to a URL\n\nParameters:\n  message (string, required) - What to say" {
		t.Fatalf("describe:\n%s", res.Text)
	}
	res = r.exec(`{"server":"web"}`)
	if want := "web (2 tools, not connected, cached):\n- take_screenshot - Take a screenshot of the page\n- navigate - Navigate to a URL\nPrompts:\n- plan(goal)\nInstructions: Use navigate first."; res.Text != want {
		t.Fatalf("list:\n%s\nwant:\n%s", res.Text, want)
	}
	wantOK(t, r.exec(`{"instructions":"web"}`), "Use navigate first.")
	if !strings.Contains(r.m.Tool().Description, "- web (2 tools): Use navigate first.") || !strings.Contains(r.m.Tool().Description, "- other (tools not listed yet)") {
		t.Fatalf("description:\n%s", r.m.Tool().Description)
	}
	if web.count("") != 0 || r.fs["other"].count("") != 0 {
		t.Fatal("a read-only mode connected a server")
	}
	// A call judges its name over every server: other, never listed, is
	// listed once (it might offer a navigate too).
	wantOK(t, r.exec(`{"tool":"navigate","args":{"message":"x"}}`), `navigate {"message":"x"}`)
	if web.count("") != 1 || r.fs["other"].count("") != 1 {
		t.Fatalf("the call made %d dials of web and %d of other", web.count(""), r.fs["other"].count(""))
	}
	r.sys.FlushCache()
	f, _ := catalog.ReadCache(cache)
	if c := f.Servers["web"]; len(c.Tools) != 2 || c.Instructions != "" || len(c.Prompts) != 0 {
		t.Fatalf("the live listing did not replace the cached entry: %+v", c)
	}
}

// A search pages with limit and offset and says how to get more; regex
// mode matches without ranking and has a length cap.
func TestSearchPagingAndRegex(t *testing.T) {
	var tools []string
	for i := 0; i < 30; i++ {
		tools = append(tools, tool(fmt.Sprintf("file_op_%02d", i), "Does something to a file"))
	}
	r := newFakeRig(t, map[string]*fakeServer{"fs": {tools: tools}}, named("fs"), config.Settings{}, "")
	wantOK(t, r.exec(`{"server":"fs"}`), r.exec(`{"server":"fs"}`).Text) // lists it
	res := r.exec(`{"search":"file","includeSchemas":false}`)
	lines := strings.Split(res.Text, "\n")
	if len(lines) != 14 || lines[0] != `Found 30 tools matching "file":` || lines[13] != "1-12 of 30 — offset: 12 for more" || res.Details["nextOffset"] != 12 {
		t.Fatalf("first page:\n%s", res.Text)
	}
	res = r.exec(`{"search":"file","offset":24,"limit":12,"includeSchemas":false}`)
	if strings.Contains(res.Text, "for more") || res.Details["hasMore"] != false || !strings.Contains(res.Text, "file_op_29") {
		t.Fatalf("last page:\n%s", res.Text)
	}
	res = r.exec(`{"search":"^file_op_0[12]$","regex":true}`)
	if res.Details["count"] != 2 {
		t.Fatalf("regex:\n%s", res.Text)
	}
	wantCode(t, r.exec(`{"search":"`+strings.Repeat("a", 257)+`","regex":true}`), "invalid_args")
	wantCode(t, r.exec(`{"search":"(","regex":true}`), "invalid_args")
	wantCode(t, r.exec(`{"search":""}`), "invalid_args")
	if res := r.exec(`{"search":"nothing-like-it"}`); res.IsError || res.Text != `No tools match "nothing-like-it".` {
		t.Fatalf("no match: %q", res.Text)
	}
	res = r.exec(`{"describe":"file_op_7"}`)
	wantCode(t, res, "tool_not_found")
	if sugg, _ := res.Details["suggestions"].([]string); len(sugg) != 5 || !strings.Contains(res.Text, "Did you mean:") {
		t.Fatalf("suggestions: %q", res.Text)
	}
}

// Resolution: exact, separators and case alike, server prefixes; every
// never-listed server is listed before a name is judged; ambiguity fails
// closed naming forms that resolve; args without tool says how.
func TestCallResolution(t *testing.T) {
	fs := map[string]*fakeServer{
		"git":     {tools: []string{tool("status", "Show status"), tool("log-view", "Show log")}},
		"git-hub": {tools: []string{tool("status", "Show status"), tool("pr", "Pull requests")}},
		"idle":    {tools: []string{tool("x", "x")}},
	}
	r := newFakeRig(t, fs, named("git", "git-hub", "idle"), config.Settings{}, "")
	wantOK(t, r.exec(`{"tool":"git-hub_pr"}`), `pr {}`)
	if fs["git"].count("") != 1 || fs["idle"].count("") != 1 {
		t.Fatal("the name was judged without listing every server")
	}
	wantOK(t, r.exec(`{"tool":"git_log_view","args":"{\"message\":\"a\"}"}`), `log-view {"message":"a"}`)
	res := r.exec(`{"tool":"status"}`)
	wantCode(t, res, "ambiguous_tool")
	if !strings.Contains(res.Text, "matches 2 tools; call one of them by a name that is its alone: git_status, git-hub_status") {
		t.Fatalf("ambiguity: %q", res.Text)
	}
	wantOK(t, r.exec(`{"tool":"git-hub_status"}`), `status {}`)
	wantOK(t, r.exec(`{"tool":"git__status"}`), `status {}`)
	res = r.exec(`{"args":{"a":1}}`)
	wantCode(t, res, "invalid_args")
	if !strings.Contains(res.Text, `{"tool": "name", "args": {...}}`) {
		t.Fatalf("args alone: %q", res.Text)
	}
	wantCode(t, r.exec(`{"tool":"pr","args":[1]}`), "invalid_args")
	wantCode(t, r.exec(`{"tool":"pr","arguments":{}}`), "invalid_args")
	wantCode(t, r.exec(`{"action":"auth-start","server":"git"}`), "invalid_args")
	wantCode(t, r.exec(`{"tool":"nonesuch"}`), "tool_not_found")
	wantCode(t, r.exec(`{"connect":"nobody"}`), "server_not_found")
}

// A tool error carries the expected parameters; a call is never retried.
func TestToolErrorsAndNoRetry(t *testing.T) {
	fails := 0
	fs := map[string]*fakeServer{"s": {tools: []string{tool("flaky", "Fails")}}}
	fs["s"].call = func(string, json.RawMessage) (json.RawMessage, *messages.Error) {
		fails++
		return json.RawMessage(`{"content":[{"type":"text","text":"bad input"}],"isError":true}`), nil
	}
	r := newFakeRig(t, fs, named("s"), config.Settings{}, "")
	res := r.exec(`{"tool":"flaky"}`)
	wantCode(t, res, "tool_error")
	if res.Text != "Error: bad input\nExpected parameters:\n  message (string, required) - What to say" || fs["s"].count("tools/call") != 1 {
		t.Fatalf("tool error: %q (%d calls)", res.Text, fs["s"].count("tools/call"))
	}
}

// includeTools/excludeTools apply to list, search, describe and calls;
// exposeResources adds read_ tools, which call resources/read.
func TestFiltersAndResourceTools(t *testing.T) {
	fs := map[string]*fakeServer{"docs": {
		tools:     []string{tool("get_page", "Get a page"), tool("get_secret", "Get a secret"), tool("put_page", "Put a page")},
		resources: []string{`{"uri":"mem://guide","name":"Guide","description":"The guide"}`, `{"uri":"mem://hidden","name":"hidden"}`},
		templates: []string{`{"uriTemplate":"mem://page/{id}","name":"page"}`},
		read: func(uri string) json.RawMessage {
			return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"guide text"}]}`)
		},
	}}
	cfg := named("docs")
	cfg[0].IncludeTools = []string{"get_*", "read_*"}
	cfg[0].ExcludeTools = []string{"docs_get_secret", "read_hidden"}
	r := newFakeRig(t, fs, cfg, config.Settings{}, "")
	res := r.exec(`{"server":"docs"}`)
	if want := "docs (2 tools):\n- get_page - Get a page\n- read_guide - Read the resource mem://guide: The guide\nResource templates:\n- mem://page/{id} - page"; res.Text != want {
		t.Fatalf("list:\n%s\nwant:\n%s", res.Text, want)
	}
	wantCode(t, r.exec(`{"tool":"get_secret"}`), "tool_not_found")
	wantCode(t, r.exec(`{"describe":"put_page"}`), "tool_not_found")
	if res := r.exec(`{"search":"secret"}`); res.Details["count"] != 0 {
		t.Fatalf("search found an excluded tool: %s", res.Text)
	}
	wantOK(t, r.exec(`{"tool":"read_guide"}`), "[resource docs: mem://guide]\nguide text")
	if res := r.exec(`{"describe":"read_guide"}`); !strings.Contains(res.Text, "Type: Resource (mem://guide)") {
		t.Fatalf("describe resource: %s", res.Text)
	}
}

// A tools catalog over the 1,000-entry limit fails that server only.
func TestCatalogLimitFailsOneServer(t *testing.T) {
	var many []string
	for i := 0; i < catalog.MaxEntries+1; i++ {
		many = append(many, fmt.Sprintf(`{"name":"t%d"}`, i))
	}
	fs := map[string]*fakeServer{"huge": {tools: many}, "fine": {tools: []string{tool("ok", "ok")}}}
	r := newFakeRig(t, fs, named("huge", "fine"), config.Settings{}, "")
	res := r.exec(`{"server":"huge"}`)
	if !res.IsError || !strings.Contains(res.Text, "tools catalog has 1001 entries, more than the limit of 1000") {
		t.Fatalf("huge: %q", res.Text)
	}
	wantOK(t, r.exec(`{"tool":"ok"}`), "ok {}")
}

// A listing that needs more than 100 pagination cursors fails that server
// only; 100 cursors are fine.
func TestCursorLimit(t *testing.T) {
	mk := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf(`{"name":"t%03d"}`, i))
		}
		return out
	}
	fs := map[string]*fakeServer{"ok": {tools: mk(101), pageSize: 1}, "over": {tools: mk(102), pageSize: 1}}
	r := newFakeRig(t, fs, named("ok", "over"), config.Settings{}, "")
	if res := r.exec(`{"server":"ok"}`); res.IsError || res.Details["count"] != 101 {
		t.Fatalf("100 cursors: %.200s", res.Text)
	}
	res := r.exec(`{"server":"over"}`)
	if !res.IsError || !strings.Contains(res.Text, "more than 100 pagination cursors") {
		t.Fatalf("101 cursors: %q", res.Text)
	}
}

// notifications/tools/list_changed lists the catalog again at once.
func TestListChangedRefreshesTheCatalog(t *testing.T) {
	fs := map[string]*fakeServer{"s": {tools: []string{tool("old", "Old")}}}
	r := newFakeRig(t, fs, named("s"), config.Settings{}, "")
	wantOK(t, r.exec(`{"tool":"old"}`), "old {}")
	fs["s"].mu.Lock()
	fs["s"].tools = []string{tool("new", "New")}
	fs["s"].mu.Unlock()
	fs["s"].notify("notifications/tools/list_changed")
	ok := false
	for i := 0; i < 1000 && !ok; i++ {
		ok = r.exec(`{"describe":"new"}`).IsError == false
	}
	if !ok || fs["s"].count("tools/list") != 2 {
		t.Fatalf("catalog not refreshed (%d listings)", fs["s"].count("tools/list"))
	}
	wantCode(t, r.exec(`{"describe":"old"}`), "tool_not_found")
}

// Output guard: long text is cut to a preview naming a private file with
// the full result; at most four supported images of up to 4 MiB pass;
// details are bounded.
func TestOutputGuard(t *testing.T) {
	long := strings.Repeat("line of text\n", 2000)
	img := `{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}`
	fs := map[string]*fakeServer{"s": {tools: []string{tool("long", "long"), tool("pics", "pics")}}}
	fs["s"].call = func(name string, _ json.RawMessage) (json.RawMessage, *messages.Error) {
		if name == "long" {
			b, _ := json.Marshal(long)
			return json.RawMessage(`{"content":[{"type":"text","text":` + string(b) + `}]}`), nil
		}
		huge := `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", (MaxImageBytes+3)/3*4) + `"}`      // 4 MiB + 2 bytes
		exact := `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", (MaxImageBytes+2)/3*4-2) + `=="}` // exactly 4 MiB
		return json.RawMessage(`{"content":[` + huge + "," + exact + "," + strings.Repeat(img+",", 5) + `{"type":"image","mimeType":"image/bmp","data":"AAAA"},{"type":"audio","mimeType":"audio/wav","data":"AAAA"}]}`), nil
	}
	r := newFakeRig(t, fs, named("s"), config.Settings{}, "")
	res := r.exec(`{"tool":"long"}`)
	path, _ := res.Details["fullResultPath"].(string)
	if res.IsError || !strings.Contains(res.Text, "[Output truncated: showing 12999 of 26000 bytes, 1000 of 2001 lines.]") || !strings.HasSuffix(res.Text, "[Full result (JSON): "+path+"]") {
		t.Fatalf("long text: ...%s", res.Text[max(0, len(res.Text)-300):])
	}
	st, err := os.Stat(path)
	dir, _ := os.Stat(filepath.Dir(path))
	if err != nil || st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Fatalf("full result file: %v %v %v", err, st, dir)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), strings.Repeat(`line of text\n`, 2000)) {
		t.Fatal("the full result file lacks the whole text")
	}
	if d, _ := res.Details["result"].(map[string]any); d["omitted"] != true {
		t.Fatalf("details not bounded: %v", res.Details["result"])
	}
	res = r.exec(`{"tool":"pics"}`)
	if len(res.Images) != 4 || !strings.Contains(res.Text, "[image omitted from the preview: image/png, 4194306 bytes]") || !strings.Contains(res.Text, "[image 1: image/png, 4194304 bytes]") || !strings.Contains(res.Text, "[image omitted from the preview: image/png, 8 bytes]") || !strings.Contains(res.Text, "[image omitted from the preview: image/bmp") ||
		!strings.Contains(res.Text, "[audio saved to ") || !strings.Contains(res.Text, "/data.wav: audio/wav, 3 bytes]") || res.Details["fullResultPath"] == nil {
		t.Fatalf("images: %d\n%s", len(res.Images), res.Text)
	}
}

// structuredContent is validated against the output schema the tool had
// when the call began; error results are exempt.
func TestStructuredContentValidation(t *testing.T) {
	schema := `,"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	fs := map[string]*fakeServer{"s": {tools: []string{`{"name":"count","inputSchema":{"type":"object"}` + schema + `}`}}}
	out := `{"n":1}`
	isErr := false
	fs["s"].call = func(string, json.RawMessage) (json.RawMessage, *messages.Error) {
		return json.RawMessage(fmt.Sprintf(`{"content":[],"structuredContent":%s,"isError":%v}`, out, isErr)), nil
	}
	r := newFakeRig(t, fs, named("s"), config.Settings{}, "")
	wantOK(t, r.exec(`{"tool":"count"}`), `{"n":1}`)
	out = `{"n":"one"}`
	res := r.exec(`{"tool":"count"}`)
	wantCode(t, res, "tool_error")
	if !strings.Contains(res.Text, "does not match its output schema (/n: expected integer, got string)") {
		t.Fatalf("validation: %q", res.Text)
	}
	isErr = true
	if res := r.exec(`{"tool":"count"}`); res.Details["validation"] != nil {
		t.Fatalf("an error result was validated: %v", res.Details)
	}
}

// settings.outputGuard false: long output reaches the model whole, with
// the raw result in details and no file; controls are still removed.
func TestOutputGuardOff(t *testing.T) {
	long := strings.Repeat("line of text\n", 2000) + "\x1b[2Jend"
	fs := map[string]*fakeServer{"s": {tools: []string{tool("long", "long")}}}
	fs["s"].call = func(string, json.RawMessage) (json.RawMessage, *messages.Error) {
		b, _ := json.Marshal(long)
		return json.RawMessage(`{"content":[{"type":"text","text":` + string(b) + `}]}`), nil
	}
	r := newFakeRig(t, fs, named("s"), config.Settings{OutputGuardOff: true}, "")
	res := r.exec(`{"tool":"long"}`)
	if res.IsError || res.Text != strings.Repeat("line of text\n", 2000)+"end" || res.Details["fullResultPath"] != nil {
		t.Fatalf("guard off: %d bytes, details %v", len(res.Text), res.Details["fullResultPath"])
	}
	if raw, ok := res.Details["result"].(json.RawMessage); !ok || len(raw) < 26000 {
		t.Fatalf("details: %T", res.Details["result"])
	}
}
