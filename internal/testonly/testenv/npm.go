package testenv

import (
	"github.com/gofrs/flock"

	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// EverythingVersion is the pinned version of server-everything.
const EverythingVersion = "2026.8.31"

// RepoRoot returns the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Node returns the path of node, failing the test when it is missing: the
// real-peer tests are part of the suite and never skipped.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the real-peer tests need Node.js 20 or newer (.ci/run installs it)")
	}
	return p
}

// EverythingJS returns the entry script of server-everything, installing
// the pinned version with npm on first use.
func EverythingJS(t testing.TB) string {
	t.Helper()
	return npmInstall(t, "@modelcontextprotocol/server-everything@"+EverythingVersion,
		filepath.Join("@modelcontextprotocol", "server-everything", "dist", "index.js"))
}

// npmInstall installs spec into .cache/npm on first use (under a file
// lock, so parallel test binaries install once) and returns the path of
// probe, a file under its node_modules.
func npmInstall(t testing.TB, spec, probe string) string {
	t.Helper()
	Node(t)
	dir := filepath.Join(RepoRoot(), ".cache", "npm")
	script := filepath.Join(dir, "node_modules", probe)
	if _, err := os.Stat(script); err == nil {
		return script
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Test binaries of several packages install at once: one waits.
	lock := flock.New(filepath.Join(dir, ".lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if _, err := os.Stat(script); err == nil {
		return script // another test binary installed it while we waited
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"mcprt-test-peers","private":true}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", spec)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", spec, err, out)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("npm installed %s but %s is missing", spec, script)
	}
	return script
}
