package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// TestServerStopsReadingCLI (issue 13 item 1): a server that closes its
// input (stdio: its stdin; a socket: shutdown(SHUT_RD)) before answering a
// request, keeping its output open, never crashes the CLI (the nil status
// slot made it die with SIGSEGV, leaving the server running): a failure is
// one error line naming the server with exit 1, and over stdio no server
// process is left behind.
func TestServerStopsReadingCLI(t *testing.T) {
	t.Parallel()
	// Closing at initialize fails every handshake (notifications/initialized
	// cannot be written); closing at tools/list fails the first write after
	// it, a request never sent, which moves to a fresh connection where the
	// call may be answered before the server closes its input again.
	for _, tc := range []struct {
		at   string
		want string // "" when exit 0 is allowed
	}{
		{"initialize", "server stopped reading its stdin during the handshake"},
		{"tools/list", ""},
	} {
		t.Run("stdio "+tc.at, func(t *testing.T) {
			t.Parallel()
			marker := "closer-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.TempDir())
			self, env := stdioTestServer(t, "--stdio --close-input-on "+tc.at+" --name "+marker)
			o := runCLI(t, env, "--stdio", self, "call", "echo", `{"message":"x"}`)
			switch {
			case o.code == 1:
				oneLineError(t, o, `server "adhoc"`, tc.want)
			case o.code == 0 && tc.want == "":
				if !strings.Contains(o.stdout, "echo: x") {
					t.Errorf("exit 0 without the echo: %q", o.stdout)
				}
			default:
				t.Fatalf("exit %d; stdout %q, stderr %q", o.code, o.stdout, o.stderr)
			}
			if strings.Contains(o.stderr, "panic") || strings.Contains(o.stderr, "SIGSEGV") {
				t.Errorf("crash output: %s", o.stderr)
			}
			if pids := processesWith(marker); len(pids) > 0 {
				t.Errorf("server processes left behind: %v", pids)
			}
		})
	}
	t.Run("socket", func(t *testing.T) {
		t.Parallel()
		dir, err := os.MkdirTemp("", "mcprt")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		// The socket server serves every connection the same way: the
		// handshake cannot complete.
		where, _ := testenv.StartTestServer(t, "--socket "+filepath.Join(dir, "s")+" --close-input-on initialize")
		cfg := filepath.Join(t.TempDir(), "mcp.json")
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"deaf": map[string]any{"socket": where}}})
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		o := runCLI(t, nil, "--config", cfg, "call", "echo", `{"message":"x"}`)
		if o.code != 1 {
			t.Fatalf("exit %d, want 1; stderr %q", o.code, o.stderr)
		}
		oneLineError(t, o, `server "deaf"`, "server stopped reading the socket during the handshake")
	})
}

// processesWith lists the pids of running processes whose environment
// holds marker (the test server's arguments travel in its environment).
func processesWith(marker string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		b, err := os.ReadFile(dir + "/environ")
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		if st, err := os.ReadFile(dir + "/stat"); err == nil {
			s := string(st)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] == "Z" {
				continue // a zombie is not running
			}
		}
		pids = append(pids, filepath.Base(dir))
	}
	return pids
}

// TestFailingServerSaysWhy (issue 18 item 3): without debug, the CLI's
// error carries the last stderr lines of a server that failed, with the
// values of its configured env masked; the model-facing text (the tool
// result's text) does not, and the host's details do.
func TestFailingServerSaysWhy(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	entry := map[string]any{"command": "/bin/sh", "env": map[string]string{"API_KEY": "sentinel-key-4711"},
		"args": []string{"-c", `echo "error: GITHUB_PERSONAL_ACCESS_TOKEN is not set (key $API_KEY)" >&2; exit 1`}}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"failing": entry}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	o := runCLI(t, nil, "--config", cfg, "list", "failing")
	if o.code != 1 {
		t.Fatalf("exit %d, want 1: %q", o.code, o.stderr)
	}
	oneLineError(t, o, `server "failing"`, "exited with status 1", "error: GITHUB_PERSONAL_ACCESS_TOKEN is not set (key <redacted>)")
	if strings.Contains(o.stderr+o.stdout, "sentinel-key-4711") {
		t.Fatalf("the configured secret was printed: %q", o.stderr)
	}

	o = runCLI(t, nil, "--config", cfg, "--json", "tool", "mcp", `{"server":"failing"}`)
	var r struct {
		Text    string         `json:"text"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("--json output %q: %v", o.stdout, err)
	}
	if strings.Contains(r.Text, "GITHUB_PERSONAL_ACCESS_TOKEN") {
		t.Errorf("model-facing text carries the server's stderr: %q", r.Text)
	}
	if lines, _ := r.Details["serverStderr"].([]any); len(lines) != 1 || !strings.Contains(lines[0].(string), "is not set (key <redacted>)") {
		t.Errorf("details.serverStderr = %v", r.Details["serverStderr"])
	}
}
