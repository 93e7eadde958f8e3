package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Servers named as hosts name them ("GitHub", "Context7", "my server")
// are usable from the CLI; a name with a control character is refused
// without being echoed.
func TestRealServerNames(t *testing.T) {
	t.Parallel()
	self, env := stdioTestServer(t, "--stdio")
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	doc := `{"mcpServers":{` +
		`"GitHub":{"command":"sh","args":["-c",` + jsonString(`exec `+self) + `]},` +
		`"my server":{"command":"sh","args":["-c",` + jsonString(`exec `+self) + `]},` +
		`"bad\u001b[31mname":{"command":"x"}}}`
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"GitHub", "my server"} {
		o := runCLI(t, env, "--config", cfg, "call", name+"_echo", `{"message":"hi"}`)
		if o.code != 0 || strings.TrimSpace(o.stdout) != "echo: hi" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, o.code, o.stdout, o.stderr)
		}
		if strings.Contains(o.stderr, "\x1b") || !strings.Contains(o.stderr, "entry #3: invalid server name") {
			t.Errorf("%s: the invalid name is not reported by position: %q", name, o.stderr)
		}
	}
}

func jsonString(s string) string { return compact(s) }
