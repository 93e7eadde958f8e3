package transports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// fakeNpxCache lays out an npx cache holding pkg@version with bin.
func fakeNpxCache(t *testing.T, cache, hash, pkg, version, bin string) string {
	t.Helper()
	dir := filepath.Join(cache, "_npx", hash, "node_modules", filepath.FromSlash(pkg))
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"`+pkg+`","version":"`+version+`","bin":`+bin+`}`), 0o644)
	os.WriteFile(filepath.Join(dir, "dist", "index.js"), []byte("// server\n"), 0o644)
	return filepath.Join(dir, "dist", "index.js")
}

func TestResolveNpx(t *testing.T) {
	cache := t.TempDir()
	js := fakeNpxCache(t, cache, "aaaa", "@scope/srv", "1.2.3", `{"srv":"dist/index.js","other":"x.js"}`)
	fakeNpxCache(t, cache, "bbbb", "plain", "0.1.0-beta.1", `"dist/index.js"`)
	fakeNpxCache(t, cache, "cccc", "many", "1.0.0", `{"a":"dist/index.js","b":"dist/index.js"}`)
	node := testenv.Node(t)
	env := []string{"PATH=" + filepath.Dir(node), "npm_config_cache=" + cache}
	for _, c := range []struct {
		args []string
		want string // "" = fall back to npx
	}{
		{[]string{"-y", "@scope/srv@1.2.3", "stdio", "--", "--flag"}, js + " stdio -- --flag"},
		{[]string{"--yes", "--", "@scope/srv@1.2.3"}, js},
		{[]string{"plain@0.1.0-beta.1"}, strings.Replace(js, "aaaa/node_modules/@scope/srv", "bbbb/node_modules/plain", 1)},
		{[]string{"-y", "@scope/srv@1.2.4"}, ""},  // another version
		{[]string{"-y", "@scope/srv@^1.2.3"}, ""}, // a range
		{[]string{"-y", "@scope/srv@latest"}, ""}, // a tag
		{[]string{"-y", "@scope/srv"}, ""},        // no version
		{[]string{"--package=@scope/srv@1.2.3", "srv"}, ""},
		{[]string{"many@1.0.0"}, ""}, // which bin is unclear
		{[]string{"-y"}, ""},
	} {
		cmd, args, ok := resolveNpx("npx", c.args, env)
		got := ""
		if ok {
			if cmd != node {
				t.Errorf("%v: command %s, want node", c.args, cmd)
			}
			got = strings.Join(args, " ")
		}
		if got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
	if _, _, ok := resolveNpx("/usr/bin/node", []string{"x@1.0.0"}, env); ok {
		t.Error("resolved a command that is not npx")
	}
	if _, _, ok := resolveNpx("npx", []string{"plain@0.1.0-beta.1"}, []string{"npm_config_cache=" + cache, "PATH=/nonexistent"}); ok {
		t.Error("resolved without node on PATH")
	}
}

// A server configured through npx whose package is in the npx cache runs
// without npx: here npx on PATH always fails, and the server still starts.
func TestNpxServerRunsFromTheCache(t *testing.T) {
	t.Parallel()
	everything := filepath.Dir(filepath.Dir(testenv.EverythingJS(t)))
	cache := t.TempDir()
	mods := filepath.Join(cache, "_npx", "0123", "node_modules", "@modelcontextprotocol")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(everything, filepath.Join(mods, "server-everything")); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "npx"), []byte("#!/bin/sh\necho npx must not run >&2\nexit 7\n"), 0o755)
	c, info := dial(t, messages.Endpoint{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything@" + testenv.EverythingVersion, "stdio"},
		Env: map[string]string{"npm_config_cache": cache, "PATH": bin + ":" + filepath.Dir(testenv.Node(t))}})
	if info.Name == "" {
		t.Fatalf("info %+v", info)
	}
	if res := callTool(t, c, "echo", map[string]any{"message": "via cache"}); !strings.Contains(toolText(t, res), "via cache") {
		t.Fatalf("echo: %+v", res)
	}
}
