package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sentinel = "SENTINEL-7c1d"

func issuesText(issues []Issue) string {
	var b strings.Builder
	for _, i := range issues {
		b.WriteString(i.String() + "\n")
	}
	return b.String()
}

func TestParseValidAndOrder(t *testing.T) {
	f, issues, err := Parse([]byte(`{"mcpServers":{
		"zeta":{"command":"node","args":["s.js"],"env":{"K":"v"},"cwd":"/tmp","lifecycle":"eager","debug":true},
		"alpha":{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer x"},"requestTimeoutMs":5000,"protocolVersion":"2026-07-28"},
		"sock":{"socket":"/tmp/s.sock","disabled":true,"idleTimeout":0}
	},"settings":{"idleTimeout":3,"requestTimeoutMs":7000}}`), "f.json")
	if err != nil || len(issues) != 0 {
		t.Fatalf("err %v issues %v", err, issues)
	}
	if got := strings.Join(f.Order, ","); got != "zeta,alpha,sock" {
		t.Fatalf("order %s (want file order)", got)
	}
	z, a, s := f.MCPServers["zeta"], f.MCPServers["alpha"], f.MCPServers["sock"]
	if z.Endpoint().Command != "node" || z.Endpoint().Env["K"] != "v" || !z.Debug || z.Source != "f.json" {
		t.Fatalf("zeta %+v", z)
	}
	if a.CallTimeout(f.Settings) != 5*time.Second || z.CallTimeout(f.Settings) != 7*time.Second {
		t.Fatal("call timeouts: own, else settings")
	}
	if z.Idle(f.Settings) != 0 {
		t.Fatal("an eager server is idle-closed only when it sets idleTimeout itself")
	}
	if a.Idle(f.Settings) != 3*time.Minute || s.Idle(f.Settings) != 0 || !s.Disabled {
		t.Fatalf("idle: alpha %s sock %s", a.Idle(f.Settings), s.Idle(f.Settings))
	}
	if (Server{}).Idle(Settings{}) != 10*time.Minute {
		t.Fatal("default idle timeout is 10 minutes")
	}
}

func TestInvalidEntriesAreDroppedSafely(t *testing.T) {
	doc := `{"mcpServers":{
		"unknown":{"command":"/x/` + sentinel + `","args":["` + sentinel + `"],"env":{"T":"` + sentinel + `"},"frobnicate":"` + sentinel + `"},
		"both":{"command":"x","url":"https://h/` + sentinel + `"},
		"neither":{"args":["` + sentinel + `"]},
		"creds":{"url":"https://user:` + sentinel + `@example.com/mcp"},
		"timeouts":{"command":"x","timeout":10,"requestTimeoutMs":20},
		"badlife":{"command":"x","lifecycle":"` + sentinel + `"},
		"badproto":{"command":"x","protocolVersion":"` + sentinel + `"},
		"badtype":{"command":"x","env":{"K":1}},
		"bad name ` + sentinel + `":{"command":"x"},
		"ok":{"command":"fine"}
	}}`
	f, issues, err := Parse([]byte(doc), "cfg.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.MCPServers) != 1 || f.MCPServers["ok"].Command != "fine" {
		t.Fatalf("healthy entry lost or bad ones kept: %v", f.Order)
	}
	text := issuesText(issues)
	if strings.Contains(text, sentinel) {
		t.Fatalf("a diagnostic echoed a value:\n%s", text)
	}
	for _, want := range []string{
		`server "unknown": field frobnicate: unknown field`,
		`server "both": exactly one of command, url and socket`,
		`server "neither": exactly one of command, url and socket`,
		`server "creds": field url: must not contain credentials`,
		`server "timeouts": field timeout: is a synonym of requestTimeoutMs`,
		`server "badlife": field lifecycle`,
		`server "badproto": field protocolVersion`,
		`server "badtype": field env: must be an object whose values are strings`,
		`server entry #9: invalid server name`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing diagnostic %q in:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(line, "cfg.json: ") {
			t.Errorf("diagnostic does not name the file: %q", line)
		}
	}
}

func TestSyntaxErrorsNameLineAndColumnOnly(t *testing.T) {
	_, _, err := Parse([]byte("{\n  \"mcpServers\": {\n    \"x\": {\"command\": \""+sentinel+"\",}\n}}"), "broken.json")
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "broken.json: invalid JSON at line 3") || strings.Contains(err.Error(), sentinel) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := Parse([]byte(`["not","an","object"]`), "arr.json"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("array root: %v", err)
	}
	if _, _, err := Parse([]byte(`{"mcpServers":[]}`), "m.json"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("mcpServers array: %v", err)
	}
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	if eff, err := Load(Sources{WorkDir: dir}); err != nil || len(eff.Servers) != 0 || len(eff.Files) != 0 {
		t.Fatalf("no .mcp.json: %+v %v", eff, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"p":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	eff, err := Load(Sources{WorkDir: dir})
	if err != nil || len(eff.Servers) != 1 || eff.Servers[0].Name != "p" {
		t.Fatalf("project file: %+v %v", eff, err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"mcpServers":{"o":{"url":"http://127.0.0.1:9/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	eff, err = Load(Sources{Path: other, WorkDir: dir})
	if err != nil || len(eff.Servers) != 1 || eff.Servers[0].Name != "o" {
		t.Fatalf("--config reads only that file: %+v %v", eff, err)
	}
	if _, err := Load(Sources{Path: filepath.Join(dir, "missing.json")}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing explicit file: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Sources{Path: big}); err == nil || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Fatalf("oversized file: %v", err)
	}
}

func TestInlineConfigIsAnIsolatedCopy(t *testing.T) {
	in := &File{MCPServers: map[string]Server{"a": {Command: "x", Args: []string{"one"}, Env: map[string]string{"K": "v"}}}}
	eff, err := Load(Sources{Inline: in, WorkDir: "/nonexistent"})
	if err != nil || len(eff.Servers) != 1 {
		t.Fatalf("%+v %v", eff, err)
	}
	in.MCPServers["a"].Args[0] = "changed"
	in.MCPServers["a"].Env["K"] = "changed"
	if eff.Servers[0].Args[0] != "one" || eff.Servers[0].Env["K"] != "v" {
		t.Fatal("changing the caller's snapshot changed the loaded configuration")
	}
	bad := &File{MCPServers: map[string]Server{"b": {Command: "x", URL: "http://h/"}, "ok": {Command: "y"}}}
	eff, err = Load(Sources{Inline: bad})
	if err != nil || len(eff.Servers) != 1 || len(eff.Issues) != 1 || eff.Issues[0].Server != "b" {
		t.Fatalf("inline validation: %+v %v", eff, err)
	}
}

func TestAdapterFields(t *testing.T) {
	f, issues, err := Parse([]byte(`{"mcpServers":{
		"remote":{"type":"http","url":"https://example.com/mcp","auth":"oauth","oauth":{"grantType":"client_credentials","clientId":"id","clientSecret":"`+sentinel+`"},
			"directTools":["a","b"],"toolPrefix":"short","includeTools":["get_*"],"excludeTools":["get_secret"],"exposeResources":false,"searchKeywords":["docs"]},
		"tok":{"url":"https://example.com/mcp","bearerToken":"`+sentinel+`","directTools":true},
		"badprefix":{"command":"x","toolPrefix":"weird"},
		"badauth":{"command":"x","bearerToken":"`+sentinel+`"},
		"badgrant":{"url":"https://h/","oauth":{"grantType":"implicit"}},
		"baddirect":{"command":"x","directTools":"yes"}
	},"settings":{"directTools":true,"toolPrefix":"mcp","disableProxyTool":true,"output":{"maxLines":50}}}`), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	r := f.MCPServers["remote"]
	if r.OAuth == nil || r.OAuth.GrantType != "client_credentials" || r.DirectTools == nil || len(r.DirectTools.Names) != 2 ||
		r.ToolPrefix != "short" || r.ExposeResources == nil || *r.ExposeResources || r.SearchKeywords[0] != "docs" || r.Type != "http" {
		t.Fatalf("remote %+v", r)
	}
	if tok := f.MCPServers["tok"]; !tok.DirectTools.All || !tok.DirectTools.Enabled() {
		t.Fatalf("tok %+v", tok)
	}
	if !f.Settings.DisableProxyTool || f.Settings.ToolPrefix != "mcp" || !f.Settings.DirectTools.All || *f.Settings.Output.MaxLines != 50 {
		t.Fatalf("settings %+v", f.Settings)
	}
	text := issuesText(issues)
	for _, want := range []string{`"badprefix": field toolPrefix`, `"badauth": auth, bearerToken`, `"badgrant": field oauth.grantType`, `"baddirect": field directTools`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, sentinel) {
		t.Fatalf("diagnostic echoed a secret:\n%s", text)
	}
	// The in-memory form round-trips through the same validation.
	eff, err := Load(Sources{Inline: &File{MCPServers: map[string]Server{"remote": r}}})
	if err != nil || len(eff.Servers) != 1 || len(eff.Issues) != 0 || eff.Servers[0].OAuth.ClientSecret != sentinel {
		t.Fatalf("inline round trip: %+v %v", eff, err)
	}
}
