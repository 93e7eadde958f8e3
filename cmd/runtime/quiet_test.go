package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A warning about an imported host's file is printed once, not on every
// command in every directory; config show always lists it; a new warning
// is printed once in its turn. Host fields mcprt cannot use are listed
// per server in config show.
func TestImportWarningsAreShownOnce(t *testing.T) {
	t.Parallel()
	home, agent := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "MCPRT_AGENT_DIR=" + agent}
	writeFile(t, filepath.Join(agent, "mcp.json"), `{"imports":["cursor"]}`)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"),
		`{"mcpServers":{"bad":{"command":"x","args":"not-a-list"},"notes":{"command":"true","envFile":"/some/.env"}}}`)
	const warning = `server "bad": field args: must be an array of strings`
	o := runCLI(t, env, "status")
	if o.code != 0 || !strings.Contains(o.stderr, warning) {
		t.Fatalf("first command: exit %d, stderr %q", o.code, o.stderr)
	}
	for _, args := range [][]string{{"status"}, {"list"}, {"status"}} {
		if o := runCLI(t, env, args...); strings.Contains(o.stderr, "warning") {
			t.Fatalf("%v repeats the import warning: %q", args, o.stderr)
		}
	}
	o = runCLI(t, env, "config", "show")
	if !strings.Contains(o.stdout, warning) || !strings.Contains(o.stdout, "ignored: field envFile") {
		t.Fatalf("config show: %q", o.stdout)
	}
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers":{"bad":{"command":"x","env":"oops"}}}`)
	if o := runCLI(t, env, "status"); !strings.Contains(o.stderr, `server "bad": field env`) {
		t.Fatalf("a changed warning is not shown: %q", o.stderr)
	}
}
