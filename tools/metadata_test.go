package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// hostileText holds every kind of control the model must not see: an ANSI
// colour, an OSC title, a bidi override, a C1 CSI and a NUL.
const hostileText = "Reads \x1b[31mred\x1b[0m files\x1b]0;owned\x07 \u202eeulav\u202c\u009b2J\x00."

// Seed 003's metadata rules, through the mcp tool, against a real server
// serving hostile metadata: invalid and duplicate tool names are refused
// one by one and named in status and list (the invalid name never shown),
// descriptions are cleaned and cut at 16 KiB with a marker, an input
// schema a provider would refuse is marked, instructions and tool output
// lose their controls, a broken prompt catalog fails alone.
func TestMetadataRules(t *testing.T) {
	t.Parallel()
	tool := func(name, desc string, schema any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"name": name, "description": desc, "inputSchema": schema})
		return b
	}
	obj := map[string]any{"type": "object"}
	long := strings.Repeat("d", 20<<10)
	script := testserver.Script{
		Tools: []json.RawMessage{
			tool("good", hostileText, obj),
			tool("bad name\x1b[2J", "x", obj),
			tool(strings.Repeat("n", 129), "x", obj),
			tool("good", "a second good", obj),
			tool("long", long, obj),
			tool("ok.dotted-name_1", "fine", obj),
			tool("tuple", "draft-07 tuple", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
				"properties": map[string]any{"a": map[string]any{"type": "array", "items": []any{map[string]any{"type": "string"}}}}}),
		},
		Prompts: []json.RawMessage{json.RawMessage(`{"name":"p1"}`), json.RawMessage(`{"name":"p1"}`)},
		Calls: map[string]json.RawMessage{
			"good": json.RawMessage(`{"content":[{"type":"text","text":` + mustJSON(hostileText) + `}]}`),
		},
	}
	r := newRig(t, []string{"hostile"}, map[string]string{"hostile": scripted(t, script) + " --instructions " + "Use\x1b[1mgood\x1b[0m"})

	res := r.exec(`{"server":"hostile"}`)
	if res.IsError {
		t.Fatal(res.Text)
	}
	for _, want := range []string{
		"hostile (4 tools):",
		"- good - Reads red files eulav.",
		"- tuple [unsupported input schema: draft07-tuple-items; call it through mcp]",
		"Note: prompts catalog failed: prompt 2 has the name of an earlier prompt",
		`- tool 2 (invalid-name): the name is not 1–128 ASCII letters, digits, '_', '-' or '.'`,
		`- tool 3 (invalid-name)`,
		`- tool 4 "good" (duplicate-name): an earlier tool of the listing has the same name`,
		"Instructions: Usegood",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("list lacks %q:\n%s", want, res.Text)
		}
	}
	assertClean(t, res.Text)
	if strings.Contains(res.Text, "bad name") || strings.Contains(res.Text, "nnnnnnnn") {
		t.Errorf("an invalid tool name reached the model:\n%s", res.Text)
	}
	res = r.exec(`{"describe":"long"}`)
	if !strings.Contains(res.Text, strings.Repeat("d", 100)+" […cut at 16 KiB]") || len(res.Text) > 17<<10 {
		t.Errorf("a 20 KiB description was not cut to 16 KiB with a marker (%d bytes)", len(res.Text))
	}
	res = r.exec(`{}`)
	for _, want := range []string{"✓ hostile (4 tools)", "  4 tools of hostile not offered or unsupported:", `  - tool 7 "tuple" (draft07-tuple-items)`} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("status lacks %q:\n%s", want, res.Text)
		}
	}
	res = r.exec(`{"tool":"good"}`)
	if res.IsError || res.Text == hostileText || !strings.HasPrefix(res.Text, "Reads red files eulav.") || res.Details["fullResultPath"] == nil {
		t.Errorf("tool output not cleaned (or the original not kept): %q", res.Text)
	}
	assertClean(t, res.Text)
	wantOK(t, r.exec(`{"tool":"ok.dotted-name_1"}`), "ok.dotted-name_1 called with {}")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// assertClean fails when model-facing text holds a terminal or bidi
// control or Go syntax.
func assertClean(t *testing.T, text string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\x00", "\u202e", "\u202c", "\u009b", "&{", "map[", "%!"} {
		if strings.Contains(text, bad) {
			t.Errorf("model-facing text holds %q:\n%q", bad, text)
		}
	}
}
