package config

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// hostWorld copies testdata/hosts/KIND/{home,work} into a fresh home and
// project directory (the project's path replaces @WORK@ in the files) and
// imports KIND from the agent-dir file.
func hostWorld(t *testing.T, kind string) *world {
	t.Helper()
	w := newWorld(t)
	for part, dst := range map[string]string{"home": w.home, "work": w.work} {
		root := filepath.Join("testdata", "hosts", kind, part)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			write(t, filepath.Join(dst, rel), strings.ReplaceAll(string(data), "@WORK@", w.work))
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(w.work, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.agent, "mcp.json"), `{"imports":["`+kind+`"]}`)
	return w
}

// effectiveServers renders every effective server as its written fields
// (what config show would print, unmasked).
func effectiveServers(t *testing.T, eff *Effective) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, s := range eff.Servers {
		b, _ := json.Marshal(s)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "name")
		delete(m, "source")
		out[s.Name] = m
	}
	return out
}

func decodeJSON(t *testing.T, s string) map[string]map[string]any {
	var m map[string]map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHostFormats loads one realistic file of each host (written from
// that host's documentation) and asserts the exact effective servers,
// issues and notices.
func TestHostFormats(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		env      map[string]string
		want     string
		issues   []string
		notices  []string
		endpoint func(t *testing.T, w *world, eff *Effective)
	}{
		{kind: "cursor", env: map[string]string{"GITHUB_TOKEN": "gh", "FIGMA_TOKEN": "fg"},
			want: `{
			"github": {"command": "podman", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server:v1"]},
			"Linear": {"url": "https://mcp.linear.app/sse"},
			"figma": {"url": "http://127.0.0.1:3845/mcp", "headers": {"X-Figma-Token": "${FIGMA_TOKEN}"}},
			"local-notes": {"type": "stdio", "command": "node", "args": ["@WORK@/tools/notes-server.js", "--home", "@HOME@/notes"]}}`,
			notices: []string{`"figma": field auth: is specific to that host and ignored`,
				`"local-notes": field envFile: is specific to that host and ignored`},
			endpoint: func(t *testing.T, w *world, eff *Effective) {
				// The project's github entry changes the command: the user
				// file's token is not inherited.
				s, _ := eff.Server("github")
				if s.Env != nil {
					t.Fatal("credentials followed a changed endpoint")
				}
				f, _ := eff.Server("figma")
				if f.Endpoint().Headers["X-Figma-Token"] != "fg" {
					t.Fatal("${env:VAR} not resolved")
				}
			}},
		{kind: "claude-code", env: map[string]string{"AIRTABLE_API_KEY": "k", "SENTRY_TOKEN": "s"},
			want: `{
			"sentry": {"type": "sse", "url": "https://mcp.sentry.dev/sse", "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"}},
			"airtable": {"type": "stdio", "command": "npx", "args": ["-y", "airtable-mcp-server"], "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}},
			"notion": {"type": "http", "url": "https://mcp.notion.com/mcp"},
			"db": {"type": "stdio", "command": "/usr/local/bin/db-mcp", "args": ["--dsn", "${DB_URL:-postgres://localhost:5432/dev}"]}}`,
			notices: []string{`"notion": field oauth: is specific to that host and ignored`},
			endpoint: func(t *testing.T, w *world, eff *Effective) {
				s, _ := eff.Server("db")
				if got := s.Endpoint().Args[1]; got != "postgres://localhost:5432/dev" {
					t.Fatalf("default not applied: %q", got)
				}
			}},
		{kind: "claude-desktop",
			want: `{
			"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"]},
			"brave-search": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search"], "env": {"BRAVE_API_KEY": "!!not-a-command $HOME $${X}"}}}`,
			endpoint: func(t *testing.T, w *world, eff *Effective) {
				// Claude Desktop does not interpolate: values stay literal, and
				// a leading "!" never runs a command.
				s, _ := eff.Server("brave-search")
				if got := s.Endpoint().Env["BRAVE_API_KEY"]; got != "!!not-a-command $HOME ${X}" {
					t.Fatalf("literal value changed: %q", got)
				}
			}},
		{kind: "vscode",
			want: `{
			"time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/Paris"]},
			"playwright": {"command": "npx", "args": ["@playwright/mcp@latest"]},
			"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
			"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
			"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "@WORK@/.vscode/memory.jsonl", "PORT": "3000"}}}`,
			issues:  []string{`"Perplexity": field env uses a variable only that host can resolve`},
			notices: []string{`"memory": field dev: is specific to that host and ignored`}},
		{kind: "windsurf", env: map[string]string{"AUTH_TOKEN": "t"},
			want: `{
			"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_PERSONAL_ACCESS_TOKEN>"}},
			"figma": {"url": "https://your-server-url/mcp", "headers": {"Authorization": "Bearer ${AUTH_TOKEN}"}},
			"puppeteer": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-puppeteer"], "disabled": true, "excludeTools": ["puppeteer_evaluate"]}}`},
		{kind: "codex", env: map[string]string{"HTTPS_PROXY": "http://proxy:3128", "FIGMA_OAUTH_TOKEN": "f", "LINEAR_AUTH_HEADER": "Bearer l"},
			want: `{
			"context7": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"], "env": {"LOG_LEVEL": "info", "HTTPS_PROXY": "${HTTPS_PROXY}"},
				"startupTimeoutMs": 20000, "requestTimeoutMs": 60500},
			"figma": {"url": "https://mcp.figma.com/mcp", "bearerTokenEnv": "FIGMA_OAUTH_TOKEN", "headers": {"X-Figma-Region": "us-east-1"}, "requestTimeoutMs": 120000},
			"linear": {"url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "${LINEAR_AUTH_HEADER}"}, "disabled": true,
				"includeTools": ["list_issues", "get_issue"], "excludeTools": ["delete_issue"]},
			"docs": {"command": "./scripts/docs-mcp", "cwd": "/srv/docs", "args": ["--price", "$5"]}}`,
			notices: []string{`"linear": field required: is specific to that host and ignored`},
			endpoint: func(t *testing.T, w *world, eff *Effective) {
				f, _ := eff.Server("figma")
				if ep := f.Endpoint(); ep.BearerToken != "f" || ep.Problem != "" {
					t.Fatalf("bearer_token_env_var: %+v", ep)
				}
				d, _ := eff.Server("docs")
				if d.Endpoint().Args[1] != "$5" {
					t.Fatal("a Codex string is not literal")
				}
				if d.Provenance["command"] != filepath.Join(w.work, ".codex", "config.toml") {
					t.Fatalf("provenance %v", d.Provenance)
				}
			}},
		{kind: "opencode", env: map[string]string{"CONTEXT7_API_KEY": "c"},
			want: `{
			"sentry": {"url": "https://mcp.sentry.dev/mcp", "auth": "oauth", "oauth": {}},
			"context7": {"url": "https://mcp.context7.com/mcp", "headers": {"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"}},
			"mcp_everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"MY_ENV_VAR": "my_env_var_value"},
				"catalogTimeoutMs": 10000, "disabled": true},
			"gh_grep": {"url": "https://mcp.grep.app"}}`,
			issues: []string{`"secrets": field env uses a variable only that host can resolve`}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			w := hostWorld(t, tc.kind)
			w.env = tc.env
			eff := w.load(t)
			want := decodeJSON(t, strings.NewReplacer("@WORK@", w.work, "@HOME@", w.home).Replace(tc.want))
			got := effectiveServers(t, eff)
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.MarshalIndent(got, "", " ")
				t.Fatalf("effective servers:\n%s\nissues:\n%s", gb, issuesText(eff.Issues))
			}
			checkLines(t, "issue", issuesText(eff.Issues), tc.issues)
			checkLines(t, "notice", issuesText(eff.Notices), tc.notices)
			for _, s := range eff.Servers {
				if ep := s.Endpoint(); ep.Problem != "" {
					t.Errorf("%s cannot connect: %s", s.Name, ep.Problem)
				}
			}
			if tc.endpoint != nil {
				tc.endpoint(t, w, eff)
			}
			// Imported servers rank below every native file.
			write(t, filepath.Join(w.work, ".mcp.json"), `{"mcpServers":{"`+eff.Servers[0].Name+`":{"description":"native"}}}`)
			again := w.load(t)
			if s, _ := again.Server(eff.Servers[0].Name); s.Description != "native" || s.Provenance["description"] != filepath.Join(w.work, ".mcp.json") {
				t.Fatalf("a native file did not win over the import: %+v", s)
			}
		})
	}
}

// checkLines asserts that text has exactly the wanted lines (each given by
// a substring).
func checkLines(t *testing.T, what, text string, want []string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	if len(lines) != len(want) {
		t.Fatalf("%d %ss, want %d:\n%s", len(lines), what, len(want), text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("no %s %q in:\n%s", what, w, text)
		}
	}
}

// TestOpenCodeProjectFile: the nearest opencode.json from the working
// directory up to the git root; outside a repository, only the working
// directory's own.
func TestOpenCodeProjectFile(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "a", "b")
	write(t, filepath.Join(root, "opencode.json"), `{"mcp":{}}`)
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := (hostEnv{workDir: work}).opencodeProject(); got != nil {
		t.Fatalf("outside a repository: %v", got)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := (hostEnv{workDir: work}).opencodeProject(); len(got) != 1 || got[0] != filepath.Join(root, "opencode.json") {
		t.Fatalf("inside a repository: %v", got)
	}
	write(t, filepath.Join(work, "opencode.jsonc"), `{}`)
	if got := (hostEnv{workDir: work}).opencodeProject(); len(got) != 1 || got[0] != filepath.Join(work, "opencode.jsonc") {
		t.Fatalf("nearest: %v", got)
	}
}
