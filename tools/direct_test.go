package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/config"
)

func names(ts []Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return strings.Join(out, " ")
}

// Direct tools: per-server and settings selection, prefix modes, valid and
// collision-free names, unsupported schemas and collisions reported.
func TestDirectToolsSurface(t *testing.T) {
	d07bad := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/x"}}}`
	fs := map[string]*fakeServer{
		"chrome-devtools-mcp": {tools: []string{tool("take.screenshot", "Shot"), tool("navigate", "Go")}},
		"github":              {tools: []string{tool("create_issue", "Issue"), tool("search_code", "Code"), tool("bad", "Bad", d07bad)}},
		"plain":               {tools: []string{tool("read", "Host collision"), tool("echo", "Echo")}},
		"other":               {tools: []string{tool("echo", "Echo")}},
		"proxied":             {tools: []string{tool("hidden", "Not direct")}},
	}
	cfg := named("chrome-devtools-mcp", "github", "plain", "other", "proxied")
	cfg[0].DirectTools, cfg[0].ToolPrefix = &config.DirectTools{All: true}, "short"
	cfg[1].DirectTools = &config.DirectTools{Names: []string{"search_code", "bad"}}
	cfg[2].ToolPrefix, cfg[3].ToolPrefix = "none", "none"
	cfg[4].DirectTools = &config.DirectTools{All: false}
	set := config.Settings{DirectTools: &config.DirectTools{All: true}}
	r := newFakeRig(t, fs, cfg, set, "")
	surf := r.m.Surface(map[string]string{"read": `the host's tool "read"`, "mcp": "the proxy tool's"})
	if surf.Complete || len(surf.Waiting) != 4 {
		t.Fatalf("before any listing: %+v", surf)
	}
	for _, s := range cfg {
		r.exec(`{"server":"` + s.Name + `"}`)
	}
	surf = r.m.Surface(map[string]string{"read": `the host's tool "read"`, "mcp": "the proxy tool's"})
	if got := names(surf.Direct); got != "chrome-devtools_take_screenshot chrome-devtools_navigate github_search_code echo" {
		t.Fatalf("direct tools: %s", got)
	}
	for _, d := range surf.Direct {
		if !validName(d.Name) {
			t.Errorf("invalid name %q", d.Name)
		}
	}
	issues := strings.Join(surf.Issues, "\n")
	for _, want := range []string{"github/bad is not registered: unsupported input schema (draft07-reference", `plain/read is not registered: its name "read" is the host's tool "read"`, `other/echo is not registered: its name "echo" is already used by plain/echo`} {
		if !strings.Contains(issues, want) {
			t.Errorf("issues lack %q:\n%s", want, issues)
		}
	}
	if surf.AllDirect || !surf.Complete {
		t.Fatalf("complete %v, all direct %v", surf.Complete, surf.AllDirect)
	}
	res := surf.Direct[0].Execute(r.ctx, json.RawMessage(`{"message":"hi"}`))
	if res.IsError || res.Text != `take.screenshot {"message":"hi"}` {
		t.Fatalf("direct call: %q", res.Text)
	}
	if !strings.Contains(surf.Direct[2].Description, "(MCP server github)") || string(surf.Direct[2].InputSchema) == "" {
		t.Fatalf("direct tool: %+v", surf.Direct[2])
	}
}

func validName(n string) bool {
	if len(n) == 0 || len(n) > 64 {
		return false
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// MCPRT_DIRECT_TOOLS overrides the configuration: "srv" for all of a
// server's tools, "srv/tool" for one, "__none__" for none.
func TestDirectToolsEnvOverride(t *testing.T) {
	fs := map[string]*fakeServer{"a": {tools: []string{tool("x", "x"), tool("y", "y")}}, "b": {tools: []string{tool("z", "z")}}}
	cfg := named("a", "b")
	cfg[0].DirectTools = &config.DirectTools{All: true}
	r := newFakeRig(t, fs, cfg, config.Settings{}, "")
	r.exec(`{"server":"a"}`)
	r.exec(`{"server":"b"}`)
	for env, want := range map[string]string{"": "a_x a_y", "__none__": "", "b": "b_z", "a/y,b": "a_y b_z"} {
		r.m.opts.DirectEnv = env
		if got := names(r.m.Surface(nil).Direct); got != want {
			t.Errorf("MCPRT_DIRECT_TOOLS=%q: %q, want %q", env, got, want)
		}
	}
}
