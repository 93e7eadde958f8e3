package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// TestCallPrintsSavedResultPath: a call whose result is cut prints the path
// of the saved full result, in the per-user results directory (mode 0700),
// and the file is still there after the process has ended.
func TestCallPrintsSavedResultPath(t *testing.T) {
	t.Parallel()
	self, env := stdioTestServer(t, "--stdio")
	cache := t.TempDir()
	env = append(env, "XDG_CACHE_HOME="+cache)
	o := runCLI(t, env, "--stdio", self, "call", "big", `{"bytes":30000}`)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	m := regexp.MustCompile(`\[Full result \(JSON\): (.+)\]`).FindStringSubmatch(o.stdout)
	if m == nil {
		t.Fatalf("no saved-result path in the output: ...%s", o.stdout[max(0, len(o.stdout)-300):])
	}
	dir := filepath.Join(cache, "mcprt", "results")
	if filepath.Dir(m[1]) != dir {
		t.Fatalf("saved in %s, want %s", filepath.Dir(m[1]), dir)
	}
	data, err := os.ReadFile(m[1])
	if err != nil || !strings.Contains(string(data), strings.Repeat("x", 30000)) {
		t.Fatalf("the saved result after exit: %v (%d bytes)", err, len(data))
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("results directory: %v %v", st, err)
	}
}

// runtime read reads a resource by URI, or a template expanded with
// NAME=VALUE arguments (the catalog is listed first on a fresh runtime);
// a malformed argument is a usage error.
func TestReadByURIAndTemplate(t *testing.T) {
	t.Parallel()
	stdio := shellQuote(testenv.Node(t)) + " " + shellQuote(testenv.EverythingJS(t)) + " stdio"
	o := runCLI(t, nil, "--stdio", stdio, "read", "demo://resource/dynamic/text/{resourceId}", "resourceId=7")
	if o.code != 0 || !strings.Contains(o.stdout, "[resource adhoc: demo://resource/dynamic/text/7]") || !strings.Contains(o.stdout, "Resource 7") {
		t.Errorf("template read: %d %q %q", o.code, o.stdout, o.stderr)
	}
	o = runCLI(t, nil, "--stdio", stdio, "read", "demo://resource/static/document/features.md")
	if o.code != 0 || !strings.Contains(o.stdout, "Everything Server - Features") {
		t.Errorf("URI read: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := runCLI(t, nil, "--stdio", stdio, "read", "demo://resource/dynamic/text/{resourceId}", "resourceId"); o.code != 2 {
		t.Errorf("a malformed argument: %d %q", o.code, o.stderr)
	}
}
