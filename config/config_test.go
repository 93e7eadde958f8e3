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

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseValidAndOrder(t *testing.T) {
	f, issues, err := Parse([]byte(`{"mcpServers":{
		"zeta":{"command":"node","args":["s.js"],"env":{"K":"v"},"cwd":"/tmp","lifecycle":"eager","debug":true},
		"alpha":{"url":"https://example.com/mcp","headers":{"X-Client":"x"},"requestTimeoutMs":5000,"protocolVersion":"2026-07-28"},
		"sock":{"socket":"/tmp/s.sock","disabled":true,"idleTimeout":0}
	},"settings":{"idleTimeout":3,"requestTimeoutMs":7000}}`), "/etc/f.json")
	if err != nil || len(issues) != 0 {
		t.Fatalf("err %v issues %v", err, issues)
	}
	if got := strings.Join(f.Order, ","); got != "zeta,alpha,sock" {
		t.Fatalf("order %s (want file order)", got)
	}
	z, a, s := f.MCPServers["zeta"], f.MCPServers["alpha"], f.MCPServers["sock"]
	if z.Endpoint().Command != "node" || z.Endpoint().Env["K"] != "v" || !z.Debug || z.Source != "/etc/f.json" || z.Provenance["args"] != "/etc/f.json" {
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

func TestJSONWithCommentsAndTrailingCommas(t *testing.T) {
	f, issues, err := Parse([]byte(`{
		// a comment
		"mcpServers": {
			/* block */ "x": {"command": "node", "args": ["a",],},
		},
	}`), "c.json")
	if err != nil || len(issues) != 0 || f.MCPServers["x"].Args[0] != "a" {
		t.Fatalf("%+v %v %v", f, issues, err)
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
		"Upper":{"command":"x","requestTimeoutMs":0,"trace":true},
		"nul\u0000name":{"command":"x"},
		"migr":{"command":"x","timeoutMs":5},
		"typo":{"command":"x","lifecyle":"eager"},
		"badtmpl":{"command":"${` + sentinel + `"},
		"dup":{"command":"x"},
		"dup":{"command":"y"},
		"ok":{"command":"fine"}
	}}`
	f, issues, err := Parse([]byte(doc), "cfg.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.MCPServers) != 3 || f.MCPServers["ok"].Command != "fine" || f.MCPServers["Upper"].RequestTimeoutMs != nil ||
		!f.MCPServers["Upper"].Trace || f.MCPServers["bad name "+sentinel].Command != "x" {
		t.Fatalf("healthy entry lost or bad ones kept: %v", f.Order)
	}
	text := issuesText(issues)
	if strings.Contains(text, sentinel) {
		t.Fatalf("a diagnostic echoed a value:\n%s", text)
	}
	for _, want := range []string{
		`server "unknown": field frobnicate: unknown field`,
		`server "both": command, url and socket are mutually exclusive`,
		`server "neither": exactly one of command, url and socket`,
		`server "creds": field url: must not contain credentials`,
		`server "timeouts": field timeout: is a synonym of requestTimeoutMs`,
		`server "badlife": field lifecycle`,
		`server "badproto": field protocolVersion`,
		`server "badtype": field env: must be an object whose values are strings`,
		`server entry #11: invalid server name`,
		`server "migr": field timeoutMs: was renamed: use timeout`,
		`server "typo": field lifecyle: unknown field (did you mean lifecycle?)`,
		`server "badtmpl": field command: malformed variable reference`,
		`server "dup": is declared twice (entries #15 and #16)`,
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
	for _, tc := range []struct{ doc, want string }{
		{"{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"" + sentinel + "\" \"y\"}\n}}", "invalid JSON at line 3"},
		{`["not","an","object"]`, "the file must hold a JSON object (line 1, column 1)"},
		{"{\n\"mcpServers\": []}", "mcpServers must be an object whose values are server entries (line 2, column 15)"},
		{`{"settings": 3}`, "settings must be an object"},
		{`{"imports": "cursor"}`, "imports must be a list of host names"},
		{`{"mcpServers": {}, "mcpServers": {}}`, "a top-level key appears twice (line 1, column 20)"},
		{"", "invalid JSON at line 1, column 1"},
		{`{"mcpServers": {"` + sentinel + `": 1,}`, "invalid JSON at line 1"},
	} {
		_, _, err := Parse([]byte(tc.doc), "broken.json")
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "broken.json: ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), sentinel) {
			t.Errorf("%q: err = %v (want %q)", tc.doc, err, tc.want)
		}
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	for i := 0; i <= MaxEntriesPerFile; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"s` + itoa(i) + `":{"command":"x"}`)
	}
	b.WriteString("}}")
	if _, _, err := Parse([]byte(b.String()), "many.json"); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "more than 128 server entries") {
		t.Fatalf("too many entries: %v", err)
	}
	dir := t.TempDir()
	big := write(t, filepath.Join(dir, "big.json"), string(make([]byte, MaxFileSize+1)))
	if _, err := Load(Sources{Path: big}); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Fatalf("oversized file: %v", err)
	}
	// More than 64 enabled servers across two files fail; disabled ones do
	// not count.
	one, two := &strings.Builder{}, &strings.Builder{}
	for i := 0; i < 40; i++ {
		sep := ","
		if i == 0 {
			sep = ""
		}
		one.WriteString(sep + `"a` + itoa(i) + `":{"command":"x"}`)
		two.WriteString(sep + `"b` + itoa(i) + `":{"command":"x"}`)
	}
	home := t.TempDir()
	write(t, filepath.Join(home, ".config/mcp/mcp.json"), `{"mcpServers":{`+one.String()+`}}`)
	write(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers":{`+two.String()+`}}`)
	if _, err := Load(Sources{Home: home, WorkDir: dir}); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "80 servers are enabled, more than 64") {
		t.Fatalf("too many enabled servers: %v", err)
	}
	three := strings.ReplaceAll(two.String(), `"command":"x"`, `"command":"x","disabled":true`)
	write(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers":{`+three+`}}`)
	if eff, err := Load(Sources{Home: home, WorkDir: dir}); err != nil || len(eff.Servers) != 80 {
		t.Fatalf("disabled servers count against the limit: %v", err)
	}
}

func TestExplicitPath(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers":{"p":{"command":"x"}}}`)
	other := write(t, filepath.Join(dir, "other.json"), `{"mcpServers":{"o":{"url":"http://127.0.0.1:9/mcp"}},"imports":["cursor"]}`)
	write(t, filepath.Join(dir, ".cursor/mcp.json"), `{"mcpServers":{"c":{"command":"x"}}}`)
	eff, err := Load(Sources{Path: other, WorkDir: dir, Home: dir})
	if err != nil || len(eff.Servers) != 1 || eff.Servers[0].Name != "o" {
		t.Fatalf("--config reads only that file: %+v %v", eff, err)
	}
	if len(eff.Notices) != 1 || !strings.Contains(eff.Notices[0].String(), "imports: is not followed") {
		t.Fatalf("notices %v", eff.Notices)
	}
	if _, err := Load(Sources{Path: filepath.Join(dir, "missing.json")}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing explicit file: %v", err)
	}
}

func TestInlineConfigIsAnIsolatedCopy(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers":{"p":{"command":"x"}}}`)
	in := &File{MCPServers: map[string]Server{"a": {Command: "x", Args: []string{"one"}, Env: map[string]string{"K": "v"}, Cwd: "sub"}}}
	eff, err := Load(Sources{Inline: in, WorkDir: dir, Home: dir})
	if err != nil || len(eff.Servers) != 1 {
		t.Fatalf("%+v %v", eff, err)
	}
	in.MCPServers["a"].Args[0] = "changed"
	in.MCPServers["a"].Env["K"] = "changed"
	if eff.Servers[0].Args[0] != "one" || eff.Servers[0].Env["K"] != "v" || eff.Servers[0].Endpoint().Env["K"] != "v" {
		t.Fatal("changing the caller's snapshot changed the loaded configuration")
	}
	if got := eff.Servers[0].Endpoint().Cwd; got != filepath.Join(dir, "sub") {
		t.Fatalf("relative in-memory cwd resolves from the working directory: %q", got)
	}
	second, _ := Load(Sources{Inline: in, WorkDir: dir})
	second.Servers[0].Env["K"] = "mutated"
	third, _ := Load(Sources{Inline: in, WorkDir: dir})
	if third.Servers[0].Env["K"] != "changed" {
		t.Fatal("one load's result changed another's")
	}
	bad := &File{MCPServers: map[string]Server{"b": {Command: "x", URL: "http://h/"}, "ok": {Command: "y"}, "Bad\x1b[31m": {Command: "z"}}}
	eff, err = Load(Sources{Inline: bad})
	if err != nil || len(eff.Servers) != 1 || len(eff.Issues) != 2 {
		t.Fatalf("inline validation: %+v %v", eff, err)
	}
}

func TestAdapterFields(t *testing.T) {
	f, issues, err := Parse([]byte(`{"mcpServers":{
		"remote":{"type":"http","url":"https://example.com/mcp","auth":"oauth","oauth":{"grantType":"client_credentials","clientId":"id","clientSecret":"`+sentinel+`","redirectUri":"http://localhost:3118/callback"},
			"directTools":["a","b"],"toolPrefix":"short","includeTools":["get_*"],"excludeTools":["get_secret"],"exposeResources":false,"searchKeywords":["docs"],
			"description":"d","startupTimeoutMs":1000,"catalogTimeoutMs":2000,"timeout":960000},
		"tok":{"url":"https://example.com/mcp","bearerToken":"`+sentinel+`","directTools":true},
		"tokenv":{"url":"https://example.com/mcp","auth":"bearer","bearerTokenEnv":"MY_TOKEN"},
		"badprefix":{"command":"x","toolPrefix":"weird"},
		"badauth":{"command":"x","bearerToken":"`+sentinel+`"},
		"badgrant":{"url":"https://h/","oauth":{"grantType":"implicit"}},
		"badredirect":{"url":"https://h/","oauth":{"redirectUri":"https://evil.example/cb"}},
		"badoauthfield":{"url":"https://h/","oauth":{"clientSecrets":"`+sentinel+`"}},
		"baddirect":{"command":"x","directTools":"yes"},
		"both":{"url":"https://h/","bearerToken":"a","bearerTokenEnv":"B"},
		"bearernotoken":{"url":"https://h/","auth":"bearer"},
		"authheader":{"url":"https://h/","bearerToken":"a","headers":{"authorization":"b"}},
		"stdiotype":{"type":"stdio","url":"https://h/"},
		"disabledstr":{"command":"x","disabled":"true"},
		"params":{"url":"https://h/","auth":"oauth","oauth":{"authorizationParams":{"prompt":"consent","state":"`+sentinel+`"}}},
		"my server":{"command":"x"},
		"my_server":{"command":"x"}
	},"settings":{"directTools":true,"toolPrefix":"mcp","disableProxyTool":true,"output":{"maxLines":50}}}`), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	r := f.MCPServers["remote"]
	if r.OAuth == nil || r.OAuth.GrantType != "client_credentials" || r.DirectTools == nil || len(r.DirectTools.Names) != 2 ||
		r.ToolPrefix != "short" || r.ExposeResources == nil || *r.ExposeResources || r.SearchKeywords[0] != "docs" || r.Type != "http" ||
		r.CallTimeout(Settings{}) != 960*time.Second || r.StartupTimeout() != time.Second || r.CatalogTimeout() != 2*time.Second {
		t.Fatalf("remote %+v", r)
	}
	if r.Provenance["requestTimeoutMs"] != "f.json" {
		t.Fatalf("timeout is recorded as requestTimeoutMs: %v", r.Provenance)
	}
	if tok := f.MCPServers["tok"]; !tok.DirectTools.All || !tok.DirectTools.Enabled() {
		t.Fatalf("tok %+v", tok)
	}
	if !f.Settings.DisableProxyTool || f.Settings.ToolPrefix != "mcp" || !f.Settings.DirectTools.All || *f.Settings.Output.MaxLines != 50 {
		t.Fatalf("settings %+v", f.Settings)
	}
	text := issuesText(issues)
	for _, want := range []string{`"badprefix": field toolPrefix`, `"badauth": auth, bearerToken`, `"badgrant": field oauth.grantType`,
		`"badredirect": field oauth.redirectUri`, `"badoauthfield": field oauth.clientSecrets: unknown field`, `"baddirect": field directTools`,
		`"both": field bearerTokenEnv: set only one`, `"bearernotoken": field auth: is bearer but neither`, `"authheader": field headers: set Authorization and a bearer token`,
		`"stdiotype": field type: is stdio but no command`, `"disabledstr": field disabled: must be true or false; only a literal true disables, so the server stays enabled`,
		`"params": field oauth.authorizationParams: sets a parameter the OAuth flow owns`,
		`server "my server": has the same tool prefix "mcp__my_server" as server "my_server"`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, sentinel) {
		t.Fatalf("diagnostic echoed a secret:\n%s", text)
	}
	if len(f.MCPServers) != 7 || f.MCPServers["disabledstr"].Disabled {
		t.Fatalf("servers %v", f.Order)
	}
	if p := f.MCPServers["params"].OAuth.AuthorizationParams; len(p) != 1 || p["prompt"] != "consent" {
		t.Fatalf("authorizationParams %v", p)
	}
	// The in-memory form round-trips through the same validation.
	eff, err := Load(Sources{Inline: &File{MCPServers: map[string]Server{"remote": r}}})
	if err != nil || len(eff.Servers) != 1 || len(eff.Issues) != 0 || eff.Servers[0].OAuth.ClientSecret != sentinel {
		t.Fatalf("inline round trip: %+v %v", eff, err)
	}
}

func TestSettingsAndUnknownRootFields(t *testing.T) {
	f, issues, err := Parse([]byte(`{"$schema":"x","inputs":[],"mcpServers":{},"imports":["cursor","curzor"],
		"settings":{"idleTimeout":-1,"toolPrefx":"mcp","autoAuth":true,"requestTimeoutMs":100}}`), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	text := issuesText(issues)
	for _, want := range []string{"field inputs: unknown top-level field (ignored", "field settings.idleTimeout: must be a number",
		"field settings.toolPrefx: unknown setting (did you mean toolPrefix?)", "field imports[2]: is not a host mcprt can import"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "curzor") || strings.Contains(text, "autoAuth") {
		t.Fatalf("a value was echoed, or a known foreign setting warned about:\n%s", text)
	}
	if *f.Settings.RequestTimeoutMs != 100 || f.Settings.IdleTimeout != nil || len(f.Imports) != 1 {
		t.Fatalf("settings %+v imports %v", f.Settings, f.Imports)
	}
}

// settings.trace is a boolean: true traces every server; anything else is
// reported and ignored.
func TestSettingsTrace(t *testing.T) {
	f, issues, err := Parse([]byte(`{"mcpServers":{},"settings":{"trace":true}}`), "s.json")
	if err != nil || len(issues) != 0 || !f.Settings.Trace {
		t.Fatalf("trace true: %+v %v %v", f.Settings, issues, err)
	}
	f, issues, _ = Parse([]byte(`{"mcpServers":{},"settings":{"trace":"yes"}}`), "s.json")
	if f.Settings.Trace || !strings.Contains(issuesText(issues), "settings.trace: must be true or false") {
		t.Fatalf("trace \"yes\": %+v %s", f.Settings, issuesText(issues))
	}
}
