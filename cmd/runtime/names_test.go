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
	// By the name, and by the provider-valid prefix a model sees in direct
	// tools' names (docs/config.md), in any case.
	for _, name := range []string{"GitHub", "my server", "my_server", "github"} {
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

// `runtime status` with nothing configured points at what would configure
// something: other hosts' files when there are some, else a .mcp.json.
func TestStatusWithNothingConfiguredPointsAtConfigDetect(t *testing.T) {
	t.Parallel()
	o := runCLI(t, nil, "status")
	if o.code != 0 || !strings.Contains(o.stdout, "no servers configured") || !strings.Contains(o.stdout, "write a .mcp.json") {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(`{"mcpServers":{"GitHub":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o = runCLI(t, []string{"HOME=" + home}, "status")
	if o.code != 0 || !strings.Contains(o.stdout, "(cursor)") || !strings.Contains(o.stdout, "runtime config detect --write") {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	if o = runCLI(t, []string{"HOME=" + home}, "status", "--json"); strings.Contains(o.stdout, "config detect") {
		t.Fatalf("--json output is not only JSON: %q", o.stdout)
	}
}
