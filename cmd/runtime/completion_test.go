package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The PowerShell script is checked against a golden file (regenerate with
// `go run ./cmd/runtime completion powershell > cmd/runtime/testdata/completion.ps1`);
// the bash script is checked by bash itself; every shell's script calls
// back into `runtime __complete`.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	golden, err := os.ReadFile(filepath.Join("testdata", "completion.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	if o := runCLI(t, nil, "completion", "powershell"); o.code != 0 || o.stdout != string(golden) {
		t.Fatalf("completion powershell: exit %d; differs from testdata/completion.ps1 (%d bytes, want %d)", o.code, len(o.stdout), len(golden))
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		o := runCLI(t, nil, "completion", shell)
		if o.code != 0 || !strings.Contains(o.stdout, "__complete") {
			t.Fatalf("completion %s: exit %d\n%.300s", shell, o.code, o.stdout)
		}
		if sh, err := exec.LookPath(shell); err == nil {
			script := filepath.Join(t.TempDir(), "completion."+shell)
			if err := os.WriteFile(script, []byte(o.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(sh, "-n", script).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
		}
	}
}

// Completion offers the configured servers and the cached tools, without
// starting a server.
func TestCompletionOffersServersAndTools(t *testing.T) {
	t.Parallel()
	home, agent, root := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "MCPRT_AGENT_DIR=" + agent}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	writeFile(t, cfg, compact(map[string]any{"mcpServers": map[string]any{
		"adhoc":   map[string]any{"command": binary(t), "args": []string{"demo-server", "--root", root}},
		"GitHub":  map[string]any{"command": "/nonexistent/never-started"},
		"Context": map[string]any{"command": "/nonexistent/never-started"},
	}}))
	o := runCLI(t, env, "__complete", "--config", cfg, "list", "")
	if lines := strings.Fields(o.stdout); o.code != 0 || strings.Join(lines[:len(lines)-1], ",") != "Context,GitHub,adhoc" {
		t.Fatalf("servers: exit %d, %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	if o := runCLI(t, env, "__complete", "--config", cfg, "enable", "Gi"); !strings.HasPrefix(o.stdout, "GitHub\n:4") {
		t.Fatalf("a server prefix: %q", o.stdout)
	}
	if o := runCLI(t, env, "connect", "adhoc", "--config", cfg); o.code != 0 {
		t.Fatalf("connect: exit %d, %s", o.code, o.stderr)
	}
	o = runCLI(t, env, "__complete", "--config", cfg, "call", "")
	if !strings.Contains(o.stdout, "\necho\n") || !strings.Contains(o.stdout, "adhoc_echo\n") || strings.Contains(o.stderr, "never-started") {
		t.Fatalf("tools: %q, stderr %q", o.stdout, o.stderr)
	}
}
