package mcprt_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxHostModules bounds the modules a minimal host links (41 when
// measured; docs/embedding.md): a new dependency of the runtime shows
// here.
const maxHostModules = 45

// The 20-line host in testdata/minimalhost builds, starts the runtime on
// the configuration of its working directory and calls a tool of the demo
// server through mcp; its module count and size are what docs/embedding.md
// records (go test -run TestMinimalHostBinary -v prints them).
func TestMinimalHostBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "minimalhost")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/minimalhost").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work, home := t.TempDir(), t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": self, "env": map[string]string{"MCPRT_EXAMPLE_DEMO": "1", "MCPRT_EXAMPLE_ROOT": work}},
	}})
	if err := os.WriteFile(filepath.Join(work, ".mcp.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, `{"tool":"echo","args":{"message":"from a minimal host"}}`)
	run.Dir = work
	run.Env = append(os.Environ(), "HOME="+home, "MCPRT_AGENT_DIR="+filepath.Join(home, "agent"))
	out, err := run.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "echo: from a minimal host" {
		t.Fatalf("the minimal host: %v\n%s", err, out)
	}

	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	modules := 0
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "dep" {
			modules++
		}
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("minimal host: %d modules besides the standard library and mcprt, %.1f MB", modules, float64(st.Size())/1e6)
	if modules > maxHostModules {
		t.Errorf("a minimal host links %d modules, more than %d: record the new dependency in docs/embedding.md and raise the bound", modules, maxHostModules)
	}
}
