package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"A": "alpha", "EMPTY": "", "_x1": "under"})
	for _, tc := range []struct {
		in, out string
		missing bool
		bad     bool
	}{
		{"plain", "plain", false, false},
		{"${A}", "alpha", false, false},
		{"pre-${A}-post", "pre-alpha-post", false, false},
		{"${A:-def}", "alpha", false, false},
		{"${UNSET:-def}", "def", false, false},
		{"${EMPTY:-def}", "", false, false}, // default only when unset
		{"${UNSET:-}", "", false, false},
		{"${UNSET:-a b:c/d}", "a b:c/d", false, false},
		{"${env:A}", "alpha", false, false},
		{"$env:A/x", "alpha/x", false, false},
		{"$env:_x1.", "under.", false, false},
		{"${UNSET}", "", true, false},
		{"$env:UNSET", "", true, false},
		{"$$", "$$", false, false},
		{"echo $$ > f", "echo $$ > f", false, false},
		{"$${A}", "${A}", false, false},
		{"$$$${A}", "$$${A}", false, false},
		{"$$env:A", "$env:A", false, false},
		{"$$$env:A", "$$env:A", false, false},
		{"$$${A}", "$${A}", false, false},
		{"$HOME $1 $", "$HOME $1 $", false, false},
		{"$env:", "$env:", false, false},
		{"$env:9", "$env:9", false, false},
		{"${A}${A}", "alphaalpha", false, false},
		{"${A", "", false, true},
		{"${}", "", false, true},
		{"${1A}", "", false, true},
		{"${A-b}", "", false, true},
		{"${input:x}", "", false, true},
		{"${env:}", "", false, true},
		{"${A:-x}}", "alpha}", false, false},
	} {
		out, missing, err := expand(tc.in, env)
		if (err != nil) != tc.bad || (err == nil && (out != tc.out || missing != tc.missing)) {
			t.Errorf("expand(%q) = %q, %v, %v; want %q, %v, bad %v", tc.in, out, missing, err, tc.out, tc.missing, tc.bad)
		}
		if (checkTemplate(tc.in) != nil) != tc.bad {
			t.Errorf("checkTemplate(%q) disagrees with expand", tc.in)
		}
	}
	if got := escapeDollars("a$b${c}$$ $env:x"); got != "a$b$${c}$$ $$env:x" {
		t.Fatalf("escape %q", got)
	}
}

func TestResolve(t *testing.T) {
	w := newWorld(t)
	w.env = map[string]string{"TOKEN": sentinel, "HOST": "api.example.com", "BANG": "!rm -rf", "SUB": "sub", "CRED": "u:" + sentinel + "@h"}
	files := w.files()
	write(t, files[0], `{"mcpServers":{
		"stdio":{"command":"${SUB}/bin","args":["--token=${TOKEN}","$${literal}"],"cwd":"rel/${SUB}",
			"env":{"A":"${TOKEN}","B":"!op read x","C":"!!${BANG}","D":"${BANG}","E":"plain"}},
		"home":{"command":"x","cwd":"~/work"},
		"sock":{"socket":"~/s.sock"},
		"http":{"url":"https://${HOST}/mcp","headers":{"X-A":"Bearer ${TOKEN}","X-B":"!pass show t"},"bearerTokenEnv":"TOKEN"},
		"tok":{"url":"https://h/mcp","bearerToken":"!!x"}
	}}`)
	write(t, files[4], `{"mcpServers":{
		"missingurl":{"url":"https://${NOPE}/mcp"},
		"missingenv":{"command":"x","env":{"K":"${NOPE}"}},
		"missingtok":{"url":"https://h/mcp","bearerTokenEnv":"NOPE"},
		"badurl":{"url":"https://${CRED}/mcp"},
		"staticurl":{"url":"${HOST}/mcp"},
		"projcwd":{"command":"x","cwd":"."},
		"offmissing":{"command":"x","env":{"K":"${NOPE}"},"disabled":true}
	}}`)
	eff := w.load(t)
	get := func(name string) Server {
		s, ok := eff.Server(name)
		if !ok {
			t.Fatalf("no server %s: %s", name, issuesText(eff.Issues))
		}
		return s
	}
	ep := get("stdio").Endpoint()
	if ep.Command != "sub/bin" || ep.Args[0] != "--token="+sentinel || ep.Args[1] != "${literal}" || ep.Cwd != filepath.Join(w.home, ".config/mcp/rel/sub") {
		t.Fatalf("stdio %+v", ep)
	}
	wantEnv := map[string]string{"A": sentinel, "B": "!op read x", "C": "!!!rm -rf", "D": "!!rm -rf", "E": "plain"}
	for k, v := range wantEnv {
		if ep.Env[k] != v {
			t.Errorf("env %s = %q, want %q", k, ep.Env[k], v)
		}
	}
	if get("home").Endpoint().Cwd != filepath.Join(w.home, "work") || get("sock").Endpoint().Socket != filepath.Join(w.home, "s.sock") {
		t.Fatal("~ is not expanded in cwd and socket")
	}
	hep := get("http").Endpoint()
	if hep.URL != "https://api.example.com/mcp" || hep.Headers["X-A"] != "Bearer "+sentinel || hep.Headers["X-B"] != "!pass show t" || hep.BearerToken != sentinel || hep.Problem != "" {
		t.Fatalf("http %+v", hep)
	}
	if get("tok").Endpoint().BearerToken != "!!x" {
		t.Fatal("escaped bearer token")
	}
	if get("projcwd").Endpoint().Cwd != w.work {
		t.Fatal("relative cwd resolves from the declaring file's directory")
	}
	for name, field := range map[string]string{"missingurl": "url", "missingenv": "env", "missingtok": "bearerTokenEnv", "badurl": "url"} {
		p := get(name).Endpoint().Problem
		if !strings.HasPrefix(p, "field "+field+": ") {
			t.Errorf("%s: problem %q", name, p)
		}
	}
	text := issuesText(eff.Issues)
	if strings.Contains(text, "offmissing") || get("offmissing").Endpoint().Problem == "" {
		t.Errorf("a disabled server's problem is reported, or not recorded:\n%s", text)
	}
	for _, want := range []string{`server "missingurl": field url: uses an environment variable that is not set`,
		`server "missingtok": field bearerTokenEnv: names an environment variable that is not set`,
		`server "badurl": field url: once interpolated, must not contain credentials`,
		`server "staticurl": field url: must be an absolute http or https URL`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "NOPE") || strings.Contains(text, sentinel) || strings.Contains(text, "HOST") {
		t.Fatalf("an issue names a variable or a value:\n%s", text)
	}
	// The servers keep what was written: hashes and displays never see
	// resolved values.
	if s := get("http"); s.URL != "https://${HOST}/mcp" || strings.Contains(s.Headers["X-A"], sentinel) {
		t.Fatalf("written values were replaced: %+v", s)
	}
	// Show masks every secret-bearing value, resolved or not.
	for _, srv := range Show(eff).Servers {
		for k, v := range srv.Config {
			if strings.Contains(toJSON(v), sentinel) || strings.Contains(toJSON(v), "op read") || strings.Contains(toJSON(v), "pass show") {
				t.Errorf("%s.%s shows a secret: %v", srv.Name, k, v)
			}
		}
	}
}

func TestShowMasksURLs(t *testing.T) {
	for in, want := range map[string]string{
		"https://h/mcp":                  "https://h/mcp",
		"https://h/mcp?token=x":          "https://h/mcp?" + MaskSecret,
		"https://u:p@h:8/mcp?x#f":        "https://h:8/mcp?" + MaskSecret,
		"https://${HOST}/mcp?k=${TOKEN}": "https://${HOST}/mcp?" + MaskSecret,
		"https://h/p@x":                  "https://h/p@x",
	} {
		if got := maskURL(in); got != want {
			t.Errorf("maskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
