package main

import (
	"io"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// badInput is, for every command, an invocation with bad input and the
// exit code it must give: 2 for a usage or configuration error.
var badInput = map[string][][]string{
	"runtime":                       {{"stauts"}, {}, {"--url", "notaurl", "status"}, {"--nope"}},
	"runtime status":                {{"status", "extra"}, {"status", "--url", "ftp://x/"}},
	"runtime list":                  {{"list", "a", "b"}},
	"runtime call":                  {{"call"}, {"call", "echo", "{oops"}},
	"runtime tool":                  {{"tool", "mcp"}, {"tool", "mcp", "{oops"}},
	"runtime connect":               {{"connect"}},
	"runtime demo":                  {{"demo", "extra"}},
	"runtime demo-server":           {{"demo-server", "extra"}},
	"runtime events":                {{"events"}, {"events", "subscrib"}},
	"runtime events catalog":        {{"events", "catalog"}},
	"runtime events subscribe":      {{"events", "subscribe", "s"}, {"events", "subscribe", "s", "e", "{oops"}},
	"runtime config":                {{"config"}, {"config", "shw"}},
	"runtime config show":           {{"config", "show", "extra"}, {"config", "show", "--config", "/nonexistent/mcp.json"}},
	"runtime config detect":         {{"config", "detect", "--url", "http://127.0.0.1:1/mcp"}},
	"runtime config add":            {{"config", "add"}, {"config", "add", "x"}, {"config", "add", "x", "--url", "notaurl"}, {"config", "add", "a\tb", "--", "y"}},
	"runtime config remove":         {{"config", "remove"}, {"config", "remove", "nosuchserver"}},
	"runtime enable":                {{"enable"}, {"enable", "nosuchserver"}},
	"runtime disable":               {{"disable", "a", "b"}, {"disable", "nosuchserver"}},
	"runtime search":                {{"search"}, {"search", "x", "--limit", "many"}},
	"runtime describe":              {{"describe"}},
	"runtime instructions":          {{"instructions"}},
	"runtime prompts":               {{"prompts", "extra"}},
	"runtime resources":             {{"resources", "a", "b"}, {"resources", "nosuchserver", "--url", "http://127.0.0.1:1/mcp"}},
	"runtime read":                  {{"read"}, {"read", "demo://x", "--server", "nosuchserver", "--url", "http://127.0.0.1:1/mcp"}},
	"runtime completion":            {{"completion"}, {"completion", "bsh"}},
	"runtime completion bash":       {{"completion", "bash", "extra"}},
	"runtime completion zsh":        {{"completion", "zsh", "extra"}},
	"runtime completion fish":       {{"completion", "fish", "extra"}},
	"runtime completion powershell": {{"completion", "powershell", "extra"}},
	"runtime prompt":                {{"prompt", "s"}, {"prompt", "s", "n", "novalue", "--url", "http://127.0.0.1:1/mcp"}},
	"runtime serve":                 {{"serve", "extra"}, {"serve", "--listen", "nohostport"}, {"--attach", "127.0.0.1:1", "serve"}, {"--json", "serve"}},
	"runtime session":               {{"session", "extra"}, {"session", "--url", "notaurl"}},
	"runtime auth":                  {{"auth"}, {"auth", "logn"}, {"--oauth-grant", "implicit", "--url", "http://127.0.0.1:1/mcp", "list"}, {"--oauth-client-id", "x", "list"}},
	"runtime auth login":            {{"auth", "login"}, {"auth", "login", "nosuch", "--url", "http://127.0.0.1:1/mcp"}},
	"runtime auth logout":           {{"auth", "logout"}, {"auth", "logout", "adhoc", "--url", "http://127.0.0.1:1/mcp"}},
	"runtime auth status":           {{"auth", "status", "a", "b"}, {"auth", "status", "--oauth-store", "nope"}},
}

// commandPaths lists every command of the CLI, help included.
func commandPaths(c *cobra.Command) []string {
	var out []string
	if c.Name() != "help" {
		out = append(out, c.CommandPath())
	}
	for _, sub := range c.Commands() {
		out = append(out, commandPaths(sub)...)
	}
	return out
}

// Every subcommand run with bad input exits 2 with one error line, never
// 0 with its help; the table covers every command the CLI has.
func TestEveryCommandRefusesBadInput(t *testing.T) {
	t.Parallel()
	paths := commandPaths(newRoot(&globals{stdout: io.Discard, stderr: io.Discard}))
	sort.Strings(paths)
	for _, p := range paths {
		if _, ok := badInput[p]; !ok {
			t.Errorf("no bad-input case for %q", p)
		}
	}
	for path, cases := range badInput {
		for _, args := range cases {
			t.Run(strings.Join(append([]string{path}, args...), " "), func(t *testing.T) {
				t.Parallel()
				o := runCLI(t, nil, args...)
				if o.code != exitUsage {
					t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", o.code, exitUsage, o.stdout, o.stderr)
				}
				last := strings.TrimSpace(o.stderr)
				last = last[strings.LastIndex(last, "\n")+1:]
				if !strings.HasPrefix(last, "runtime: ") || strings.Contains(o.stderr, "panic") {
					t.Fatalf("the last line of stderr is not the error: %q", o.stderr)
				}
			})
		}
	}
}

// A near miss names the command meant.
func TestMistypedCommandSuggests(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{"stauts": `"status"`, "config shw": `"show"`, "events subscrib": `"subscribe"`} {
		o := runCLI(t, nil, strings.Fields(args)...)
		if o.code != exitUsage || !strings.Contains(o.stderr, "did you mean "+want) {
			t.Errorf("%s: exit %d, stderr %q", args, o.code, o.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	o := runCLI(t, nil, "--version")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "runtime ") || !strings.Contains(o.stdout, "mcprt ") {
		t.Fatalf("exit %d, stdout %q", o.code, o.stdout)
	}
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/mcprt/mcprt", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}}}
	if got, want := describeBuild(info), "v1.2.3, commit 0123456789ab-dirty (2026-12-01T10:00:00Z), go1.26.0, mcprt "; !strings.HasPrefix(got, want) {
		t.Fatalf("describeBuild: %q, want prefix %q", got, want)
	}
}
