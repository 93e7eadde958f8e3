package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// world is a home directory, an agent dir and a project directory.
type world struct {
	home, agent, work string
	env               map[string]string
}

func newWorld(t *testing.T) *world {
	home := t.TempDir()
	return &world{home: home, agent: filepath.Join(home, ".mcprt", "agent"), work: filepath.Join(home, "proj"), env: map[string]string{}}
}

func (w *world) src() Sources {
	return Sources{Home: w.home, AgentDir: w.agent, WorkDir: w.work, LookupEnv: func(k string) (string, bool) {
		v, ok := w.env[k]
		return v, ok
	}}
}

// The six standard files, lowest precedence first.
func (w *world) files() []string {
	return []string{
		filepath.Join(w.home, ".config/mcp/mcp.json"),
		filepath.Join(w.home, ".agents/mcp.json"),
		filepath.Join(w.home, ".agents/mcp/mcp.json"),
		filepath.Join(w.agent, "mcp.json"),
		filepath.Join(w.work, ".mcp.json"),
		filepath.Join(w.work, ".mcprt/mcp.json"),
	}
}

func (w *world) load(t *testing.T) *Effective {
	t.Helper()
	eff, err := Load(w.src())
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

func TestPrecedenceOfTheSixFiles(t *testing.T) {
	w := newWorld(t)
	files := w.files()
	// Each file sets its own args and one field nobody above it sets.
	fields := []string{`"lifecycle":"eager"`, `"description":"agents"`, `"idleTimeout":4`, `"debug":true`, `"requestTimeoutMs":500`, `"startupTimeoutMs":600`}
	for i, f := range files {
		write(t, f, `{"mcpServers":{"s":{"args":["`+itoa(i)+`"],`+fields[i]+`}, "only`+itoa(i)+`":{"command":"c`+itoa(i)+`"}}}`)
	}
	write(t, files[0], `{"mcpServers":{"s":{"command":"base","args":["0"],`+fields[0]+`}, "only0":{"command":"c0"}}}`)
	eff := w.load(t)
	if len(eff.Issues) != 0 {
		t.Fatalf("issues: %s", issuesText(eff.Issues))
	}
	s, _ := eff.Server("s")
	if s.Command != "base" || s.Args[0] != "5" || s.Lifecycle != "eager" || s.Description != "agents" || *s.IdleTimeout != 4 || !s.Debug ||
		*s.RequestTimeoutMs != 500 || *s.StartupTimeoutMs != 600 {
		t.Fatalf("merged %+v", s)
	}
	want := map[string]string{"command": files[0], "lifecycle": files[0], "description": files[1], "idleTimeout": files[2], "debug": files[3],
		"requestTimeoutMs": files[4], "startupTimeoutMs": files[5], "args": files[5]}
	if !reflect.DeepEqual(s.Provenance, want) {
		t.Fatalf("provenance\n got %v\nwant %v", s.Provenance, want)
	}
	if s.Source != files[5] {
		t.Fatalf("source %s", s.Source)
	}
	var names []string
	for _, srv := range eff.Servers {
		names = append(names, srv.Name)
	}
	if strings.Join(names, ",") != "s,only0,only1,only2,only3,only4,only5" {
		t.Fatalf("order %v", names)
	}
	if got := eff.Files(); !reflect.DeepEqual(got, files) {
		t.Fatalf("files %v", got)
	}
}

// TestCredentialsStayWithTheirEndpoint is the three-layer table of the
// URL-bound merge: a layer that changes command, url or socket inherits
// none of the lower layers' headers, env, bearer token or oauth.
func TestCredentialsStayWithTheirEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name      string
		layers    [3]string // ~/.config/mcp/mcp.json, .mcp.json, .mcprt/mcp.json
		want      map[string]any
		wantIssue string
	}{
		{"same url keeps headers", [3]string{`{"url":"https://a/mcp","headers":{"X-K":"h1"}}`, `{"url":"https://a/mcp"}`, `{"lifecycle":"eager"}`},
			map[string]any{"url": "https://a/mcp", "headers": map[string]any{"X-K": "h1"}, "lifecycle": "eager"}, ""},
		{"new url drops headers", [3]string{`{"url":"https://a/mcp","headers":{"X-K":"h1"}}`, `{"url":"https://b/mcp"}`, `{}`},
			map[string]any{"url": "https://b/mcp"}, ""},
		{"headers set above the new url stay", [3]string{`{"url":"https://a/mcp","headers":{"X-K":"h1"}}`, `{"url":"https://b/mcp"}`, `{"headers":{"X-K":"h3"}}`},
			map[string]any{"url": "https://b/mcp", "headers": map[string]any{"X-K": "h3"}}, ""},
		{"changing back does not bring them back", [3]string{`{"url":"https://a/mcp","headers":{"X-K":"h1"},"bearerToken":"t1"}`, `{"url":"https://b/mcp"}`, `{"url":"https://a/mcp"}`},
			map[string]any{"url": "https://a/mcp"}, ""},
		{"credentials written without an endpoint never attach to one chosen above", [3]string{`{"headers":{"X-K":"h1"},"oauth":{"clientId":"c"}}`, `{"url":"https://evil/mcp"}`, `{}`},
			map[string]any{"url": "https://evil/mcp"}, ""},
		{"new command drops env, keeps args", [3]string{`{"command":"a","args":["x"],"env":{"K":"v"}}`, `{"command":"b"}`, `{}`},
			map[string]any{"command": "b", "args": []any{"x"}}, ""},
		{"same command keeps env", [3]string{`{"command":"a","env":{"K":"v"}}`, `{"args":["y"]}`, `{"command":"a"}`},
			map[string]any{"command": "a", "args": []any{"y"}, "env": map[string]any{"K": "v"}}, ""},
		{"switching transport drops args, cwd and type", [3]string{`{"type":"stdio","command":"a","args":["x"],"cwd":"/tmp","env":{"K":"v"}}`, `{"socket":"/tmp/s.sock"}`, `{}`},
			map[string]any{"socket": "/tmp/s.sock"}, ""},
		{"oauth dropped with the url", [3]string{`{"url":"https://a/mcp","auth":"oauth","oauth":{"clientId":"c","clientSecret":"s"}}`, `{"url":"https://b/mcp"}`, `{}`},
			map[string]any{"url": "https://b/mcp", "auth": "oauth"}, ""},
		{"bearerTokenEnv replaces bearerToken", [3]string{`{"url":"https://a/mcp","bearerToken":"t"}`, `{}`, `{"bearerTokenEnv":"TOK"}`},
			map[string]any{"url": "https://a/mcp", "bearerTokenEnv": "TOK"}, ""},
		{"timeout above requestTimeoutMs", [3]string{`{"command":"a","requestTimeoutMs":5}`, `{"timeout":7}`, `{}`},
			map[string]any{"command": "a", "requestTimeoutMs": float64(7)}, ""},
		{"whole-entry rule on the merge", [3]string{`{"args":["x"]}`, `{"env":{"K":"v"}}`, `{}`},
			nil, "exactly one of command, url and socket must be set (after merging"},
		{"disabled above, enabled again higher", [3]string{`{"command":"a"}`, `{"disabled":true}`, `{"disabled":false}`},
			map[string]any{"command": "a"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			files := w.files()
			for i, f := range []string{files[0], files[4], files[5]} {
				write(t, f, `{"mcpServers":{"s":`+tc.layers[i]+`}}`)
			}
			eff := w.load(t)
			s, ok := eff.Server("s")
			if tc.want == nil {
				if ok || !strings.Contains(issuesText(eff.Issues), tc.wantIssue) {
					t.Fatalf("want issue %q; got server %v, issues:\n%s", tc.wantIssue, ok, issuesText(eff.Issues))
				}
				return
			}
			if !ok {
				t.Fatalf("server dropped: %s", issuesText(eff.Issues))
			}
			got := Show(eff).Servers[0].Config
			for k := range got {
				if k == "disabled" && got[k] == false {
					delete(got, k)
				}
			}
			// Compare unmasked values: the test's own values are not secrets.
			raw, _ := json.Marshal(s)
			var all map[string]any
			_ = json.Unmarshal(raw, &all)
			delete(all, "name")
			delete(all, "source")
			if !reflect.DeepEqual(all, tc.want) {
				t.Fatalf("merged\n got %v\nwant %v", all, tc.want)
			}
			for k := range all {
				if s.Provenance[k] == "" {
					t.Errorf("no provenance for %s", k)
				}
			}
		})
	}
}

func TestMaskingAndFailClosed(t *testing.T) {
	w := newWorld(t)
	files := w.files()
	write(t, files[0], `{"mcpServers":{"gh":{"command":"gh-server","env":{"T":"`+sentinel+`"}},"other":{"command":"o"}}}`)
	write(t, files[4], `{"mcpServers":{"gh":{"args":["x"],"bogus":1},"fine":{"command":"f"}}}`)
	eff := w.load(t)
	if _, ok := eff.Server("gh"); ok {
		t.Fatal("an invalid project entry did not mask the global definition")
	}
	if _, ok := eff.Server("other"); !ok {
		t.Fatal("a bad entry hid a healthy server of another name")
	}
	if _, ok := eff.Server("fine"); !ok {
		t.Fatal("a bad entry hid a healthy server of the same file")
	}
	text := issuesText(eff.Issues)
	if !strings.Contains(text, files[4]+`: server "gh": field bogus: unknown field`) ||
		!strings.Contains(text, files[4]+`: server "gh": is not started: this file's entry for it is invalid, which also masks its definition in `+files[0]) {
		t.Fatalf("issues:\n%s", text)
	}
	// A default file that cannot be parsed stops every server of the
	// default files, naming the file.
	write(t, files[5], `{"mcpServers":{"gh":{"disabled":true}`)
	_, err := Load(w.src())
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), files[5]+": invalid JSON at line 1") {
		t.Fatalf("broken override: %v", err)
	}
	write(t, files[5], `{"mcpServers":[]}`)
	if _, err := Load(w.src()); !errors.Is(err, ErrSyntax) {
		t.Fatalf("bad root structure: %v", err)
	}
	if err := os.Chmod(files[5], 0); err == nil && os.Getuid() != 0 {
		if _, err := Load(w.src()); err == nil || !strings.Contains(err.Error(), "cannot be read") {
			t.Fatalf("unreadable file: %v", err)
		}
	}
}

func TestSettingsMergeShallowAndImportsUnion(t *testing.T) {
	w := newWorld(t)
	files := w.files()
	write(t, files[0], `{"settings":{"idleTimeout":3,"toolPrefix":"short","output":{"maxLines":5,"maxTextBytes":100}},"imports":["cursor","codex"]}`)
	write(t, files[3], `{"settings":{"output":{"maxLines":9}},"imports":["codex","vscode"]}`)
	write(t, files[4], `{"settings":{"toolPrefix":"none"}}`)
	eff := w.load(t)
	set := eff.Settings
	if *set.IdleTimeout != 3 || set.ToolPrefix != "none" || *set.Output.MaxLines != 9 || set.Output.MaxTextBytes != nil {
		t.Fatalf("settings %+v %+v", set, set.Output)
	}
	if eff.SettingsProvenance["toolPrefix"] != files[4] || eff.SettingsProvenance["idleTimeout"] != files[0] {
		t.Fatalf("settings provenance %v", eff.SettingsProvenance)
	}
	if strings.Join(eff.Imports, ",") != "cursor,codex,vscode" {
		t.Fatalf("imports %v", eff.Imports)
	}
}

func TestAgentDirNeverTheProjectOverride(t *testing.T) {
	w := newWorld(t)
	w.work = w.home // working in the home directory
	files := NativeFiles(w.src())
	if len(files) != 6 || files[3].Path == files[5].Path {
		t.Fatalf("files %v", files)
	}
	// An agent dir pointed at the project's .mcprt is read once, at its
	// highest rank.
	w.agent = filepath.Join(w.work, ".mcprt")
	files = NativeFiles(w.src())
	if len(files) != 5 || files[4].Scope != "project-override" {
		t.Fatalf("files %v", files)
	}
}
