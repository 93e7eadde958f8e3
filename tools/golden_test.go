package tools

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// rewriteGolden regenerates the golden files of model-facing texts:
//
//	go test ./tools -run TestModelTextsGolden -rewrite-golden
//
// Review the diff: it is exactly what the model will read differently.
var rewriteGolden = flag.Bool("rewrite-golden", false, "rewrite testdata/model/*.txt")

// tempPaths are the private files results name; their random parts vary.
var tempPaths = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/mcprt-(result|blob)-[0-9]+`)

// savedResults are the files of the results directory; their names carry
// a time and a random part.
var savedResults = regexp.MustCompile(`[^\s\[\]]*/result-[0-9TZ.]+-[a-z0-9]+\.json`)

// The texts the model reads (status, list, search, describe, calls,
// reads, and every error on the way), produced through the mcp tool
// against real servers serving hostile and ordinary metadata, are kept as
// golden files: a change to what the model reads is a visible diff. Each
// text is also checked for controls and Go syntax.
func TestModelTextsGolden(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "description": "How many"}}, "required": []string{"n"}}
	tool := func(name, desc string, extra map[string]any) json.RawMessage {
		m := map[string]any{"name": name, "description": desc, "inputSchema": obj}
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	web := testserver.Script{
		Tools: []json.RawMessage{
			tool("take_screenshot", "Take a screenshot \x1b[31mof the page\x1b[0m", nil),
			tool("dotted.name", "A dotted \u202etool\u202c", nil),
			tool("count", "Counts", map[string]any{"outputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"}}}),
			tool("bad name", "refused", nil),
			tool("take_screenshot", "a duplicate", nil),
		},
		Resources: []json.RawMessage{
			json.RawMessage(`{"uri":"mem://a","name":"guide","description":"The guide"}`),
			json.RawMessage(`{"uri":"mem://b","name":"guide","description":"The other guide"}`),
		},
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"mem://docs/{topic}","name":"docs","description":"Docs by topic"}`)},
		Prompts:           []json.RawMessage{json.RawMessage(`{"name":"plan","arguments":[{"name":"goal","required":true}]}`)},
		Calls: map[string]json.RawMessage{
			"count":           json.RawMessage(`{"content":[{"type":"text","text":"{\"n\":\"many\"}"}],"structuredContent":{"n":"many"}}`),
			"take_screenshot": json.RawMessage(`{"content":[{"type":"text","text":"shot \u001b]0;title\u0007taken"},{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="}]}`),
		},
	}
	other := testserver.Script{Tools: []json.RawMessage{tool("read_file", "Reads a file", nil)}}
	demo := testserver.Script{Tools: []json.RawMessage{tool("read_file", "Reads a file too", nil)}}
	r := newRig(t, []string{"chrome-devtools", "other", "demo"}, map[string]string{
		"chrome-devtools": scripted(t, web) + " --instructions Take-screenshots-after-navigating.",
		"other":           scripted(t, other),
		"demo":            scripted(t, demo),
	}).withOptions(Options{HostTools: []string{"read", "bash"}, ResultDir: t.TempDir()})

	var b strings.Builder
	for _, args := range []string{
		`{}`,
		`{"server":"chrome-devtools"}`,
		`{"search":"screenshot"}`,
		`{"search":"read"}`,
		`{"describe":"chrome_devtools_take_screenshot"}`,
		`{"tool":"chrome_devtools_take_screenshot","args":{"n":1}}`,
		`{"tool":"dotted_name","args":{"n":2}}`,
		`{"tool":"count","args":{"n":3}}`,
		`{"tool":"read_file"}`,
		`{"tool":"bash"}`,
		`{"tool":"screenshot_take"}`,
		`{"tool":"read_guide"}`,
		`{"read":"docs","server":"chrome-devtools","args":{"topic":"go"}}`,
		`{"read":"https://u:p@example.com/x","server":"chrome-devtools"}`,
		`{"server":"typo"}`,
		`{"bogus":1}`,
		`{}`,
	} {
		res := r.exec(args)
		assertClean(t, res.Text)
		text := tempPaths.ReplaceAllString(res.Text, "$$TMP/mcprt-$1-N")
		text = savedResults.ReplaceAllString(text, "$$RESULTS/result-N.json")
		b.WriteString("## " + args + "\n" + text + "\n\n")
	}
	assertClean(t, r.mcp.Description)
	b.WriteString("## (the mcp tool's description)\n" + r.mcp.Description + "\n")
	path := filepath.Join("testdata", "model", "proxy.txt")
	if *rewriteGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./tools -run TestModelTextsGolden -rewrite-golden writes it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("model-facing texts differ from %s (rewrite with -rewrite-golden and review the diff):\n%s", path, b.String())
	}
}
