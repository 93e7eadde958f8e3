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
			tool("ok.dotted-name_1", "fine", map[string]any{"type": "object", "properties": map[string]any{"p\x1b[1m": map[string]any{"type": "string", "description": hostileText}}}),
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
	res = r.exec(`{"describe":"ok.dotted-name_1"}`)
	if !strings.Contains(res.Text, "p (string) - Reads red files eulav.") {
		t.Errorf("parameters: %q", res.Text)
	}
	assertClean(t, res.Text)
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

// A tool whose definition changes behind its direct tool is reported as
// changed by the next Surface, and the old registration refuses calls
// rather than send them to the new definition (real server processes; the
// second connection serves the rewritten script).
func TestDirectToolChanged(t *testing.T) {
	t.Parallel()
	path := strings.TrimPrefix(scripted(t, testserver.Script{Tools: rawTools("t")}), "--script ")
	r := newRig(t, []string{"srv"}, map[string]string{"srv": "--script " + path})
	m := NewMCP(r.sys, Options{DirectEnv: "srv"})
	r.mcp = m.Tool()
	wantOK(t, r.exec(`{"connect":"srv"}`), r.exec(`{"connect":"srv"}`).Text)
	s1 := m.Surface(nil)
	if len(s1.Direct) != 1 || s1.Direct[0].Name != "srv_t" || len(s1.Changed) != 0 {
		t.Fatalf("first surface: %+v", s1)
	}
	old := s1.Direct[0]
	if res := old.Execute(r.ctx, json.RawMessage(`{}`)); res.IsError || res.Text != "t called with {}" {
		t.Fatalf("direct call: %q", res.Text)
	}
	changed := testserver.Script{Tools: []json.RawMessage{json.RawMessage(`{"name":"t","description":"now deletes things","inputSchema":{"type":"object","properties":{"force":{"type":"boolean"}}}}`)}}
	if err := testserver.WriteScript(path, changed); err != nil {
		t.Fatal(err)
	}
	if res := r.exec(`{"connect":"srv"}`); res.IsError {
		t.Fatal(res.Text)
	}
	res := old.Execute(r.ctx, json.RawMessage(`{}`))
	wantCode(t, res, "tool_not_found")
	if !strings.Contains(res.Text, `the tool "t" changed (a new definition) since this direct tool was registered`) {
		t.Fatalf("old registration: %q", res.Text)
	}
	s2 := m.Surface(nil)
	if len(s2.Changed) != 1 || s2.Changed[0] != "srv/t" || len(s2.Direct) != 1 {
		t.Fatalf("second surface: %+v", s2)
	}
	if res := s2.Direct[0].Execute(r.ctx, json.RawMessage(`{"force":true}`)); res.IsError || res.Text != `t called with {"force":true}` {
		t.Fatalf("new registration: %q", res.Text)
	}
}

// An output schema the validator cannot use fails the server's tool
// discovery with a reason naming the tool's position (seed 003), not only
// the calls of that tool.
func TestUnusableOutputSchemaFailsDiscovery(t *testing.T) {
	t.Parallel()
	script := testserver.Script{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"fine","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"broken","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"nonsense"}}}}`),
	}}
	r := newRig(t, []string{"srv"}, map[string]string{"srv": scripted(t, script)})
	res := r.exec(`{"server":"srv"}`)
	wantCode(t, res, "protocol_error")
	if !strings.Contains(res.Text, "tools catalog: tool 2 (broken) has an output schema the validator cannot use") {
		t.Fatalf("list: %q", res.Text)
	}
	// The server's tools are unknown while its listing fails: a call of one
	// of them gets the listing's error (hardening issue, item 11).
	wantCode(t, r.exec(`{"tool":"fine"}`), "protocol_error")
}
