package testenv

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
)

// The test peer written with the official MCP TypeScript SDK lives in
// internal/testonly/tspeer: peer.mjs, with its package.json and
// package-lock.json pinning the SDK (v1 for 2025-11-25, v2 for
// 2026-07-28). TSPeer installs it with npm ci into .cache/tspeer, once per
// lock file.

// TSPeer returns the path of the installed peer script (peer.mjs),
// installing the locked packages on first use.
func TSPeer(t testing.TB) string {
	t.Helper()
	Node(t)
	src := filepath.Join(RepoRoot(), "internal", "testonly", "tspeer")
	dir := filepath.Join(RepoRoot(), ".cache", "tspeer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock := flock.New(filepath.Join(dir, ".lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	var files = map[string][]byte{}
	for _, name := range []string{"package.json", "package-lock.json", "peer.mjs"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	sum := sha256.Sum256(append(append([]byte(nil), files["package.json"]...), files["package-lock.json"]...))
	stamp := hex.EncodeToString(sum[:])
	stampFile := filepath.Join(dir, "node_modules", ".mcprt-lock-sha256")
	if old, err := os.ReadFile(stampFile); err != nil || strings.TrimSpace(string(old)) != stamp {
		for _, name := range []string{"package.json", "package-lock.json"} {
			if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
		if err := os.WriteFile(stampFile, []byte(stamp+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "peer.mjs")
	if old, err := os.ReadFile(script); err != nil || !bytes.Equal(old, files["peer.mjs"]) {
		if err := os.WriteFile(script, files["peer.mjs"], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return script
}

// StartTSPeer starts the peer in an HTTP mode (legacy-http or modern-http)
// and returns its MCP endpoint's URL.
func StartTSPeer(t testing.TB, mode string) (string, *Proc) {
	t.Helper()
	script := TSPeer(t)
	cmd := exec.Command(Node(t), script, mode)
	cmd.Env = append(os.Environ(), "PORT=0")
	p, line := start(t, cmd, func(line string) bool { return strings.HasPrefix(line, "listening on port ") })
	var port int
	if _, err := fmt.Sscanf(line, "listening on port %d", &port); err != nil {
		t.Fatalf("peer said %q", line)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), p
}

// TSPeerStdio returns the command and args that run the peer over stdio
// in mode (legacy-stdio or modern-stdio).
func TSPeerStdio(t testing.TB, mode string) (string, []string) {
	t.Helper()
	return Node(t), []string{TSPeer(t), mode}
}
