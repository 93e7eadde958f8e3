package mcprt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeExample checks that the README's embedding example is the
// committed example program, that it is about 20 lines of code, and that it
// compiles and runs: in an empty directory it lists the mcp tool and prints
// the status of zero servers.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "<!-- embedding-example")
	if !ok {
		t.Fatal("README.md has no embedding-example marker")
	}
	_, block, ok := strings.Cut(after, "```go\n")
	if !ok {
		t.Fatal("no go block after the embedding-example marker")
	}
	block, _, _ = strings.Cut(block, "```")
	example, err := os.ReadFile(filepath.Join("testdata", "readme_example", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if block != string(example) {
		t.Fatal("README's embedding example differs from testdata/readme_example/main.go")
	}
	code := 0
	for _, line := range strings.Split(block, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") && l != ")" && l != "}" {
			code++
		}
	}
	if code > 24 {
		t.Fatalf("the embedding example has %d lines of code; keep it near 20", code)
	}
	// The two set-up commands, and the first step with one's own servers.
	for _, want := range []string{"go run ./cmd/runtime demo", "go test ./...", "runtime config detect", "(docs/config.md)"} {
		if !strings.Contains(string(readme), want) {
			t.Fatalf("README lacks %q", want)
		}
	}

	bin := filepath.Join(t.TempDir(), "example")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/readme_example").CombinedOutput(); err != nil {
		t.Fatalf("the README example does not compile: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Dir = t.TempDir()
	run.Env = append(os.Environ(), "HOME="+t.TempDir(), "MCPRT_AGENT_DIR="+t.TempDir())
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the README example failed: %v\n%s", err, out)
	}
	for _, want := range []string{`tool "mcp"`, "MCP: no servers configured"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("example output lacks %q:\n%s", want, out)
		}
	}
}
