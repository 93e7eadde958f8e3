package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config add writes the chosen file and keeps its comments; the server is
// then configured; config remove takes it out again, and refuses a server
// that only another host's file declares.
func TestConfigAddAndRemove(t *testing.T) {
	t.Parallel()
	home, agent := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "MCPRT_AGENT_DIR=" + agent}
	user := filepath.Join(home, ".config", "mcp", "mcp.json")
	writeFile(t, user, "// my servers\n{\"mcpServers\": {\n  // the old one\n  \"old\": {\"command\": \"x\"},\n}}\n")
	o := runCLI(t, env, "config", "add", "GitHub", "--scope", "user", "--env", "TOKEN=${GITHUB_TOKEN}", "--", "npx", "-y", "@modelcontextprotocol/server-github")
	if o.code != 0 {
		t.Fatalf("config add: exit %d, %s", o.code, o.stderr)
	}
	if o := runCLI(t, env, "config", "add", "ctx", "--scope", "user", "--url", "https://mcp.context7.com/mcp", "--json"); o.code != 0 || !strings.Contains(o.stdout, `"file"`) {
		t.Fatalf("config add --url: exit %d, %s%s", o.code, o.stdout, o.stderr)
	}
	b, _ := os.ReadFile(user)
	if !strings.Contains(string(b), "// my servers") || !strings.Contains(string(b), "// the old one") {
		t.Fatalf("comments lost:\n%s", b)
	}
	o = runCLI(t, env, "config", "show")
	if !strings.Contains(o.stdout, "GitHub (enabled)") || !strings.Contains(o.stdout, "ctx (enabled)") || !strings.Contains(o.stdout, `"TOKEN":"<secret>"`) {
		t.Fatalf("config show after add:\n%s", o.stdout)
	}
	if o := runCLI(t, env, "config", "add", "GitHub", "--scope", "user", "--", "y"); o.code != exitUsage {
		t.Fatalf("adding an existing name: exit %d", o.code)
	}
	if o := runCLI(t, env, "config", "remove", "GitHub"); o.code != 0 {
		t.Fatalf("config remove: exit %d, %s", o.code, o.stderr)
	}
	b, _ = os.ReadFile(user)
	if strings.Contains(string(b), "GitHub") || !strings.Contains(string(b), "// the old one") {
		t.Fatalf("after remove:\n%s", b)
	}
	writeFile(t, filepath.Join(agent, "mcp.json"), `{"imports":["cursor"]}`)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers":{"linear":{"url":"https://mcp.linear.app/sse"}}}`)
	if o := runCLI(t, env, "config", "remove", "linear"); o.code != exitUsage || !strings.Contains(o.stderr, "never edits") {
		t.Fatalf("removing an imported server: exit %d, %s", o.code, o.stderr)
	}
}
