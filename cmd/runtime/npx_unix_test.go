//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testkit"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// fakeNpx installs (waiting for the test's release, as a slow download
// would) and then runs the test server; see e2e/npx_install_test.go.
const fakeNpx = `#!/bin/sh
case "$2" in
--package=*)
  read line < "$NPX_RELEASE"
  d="$npm_config_cache/_npx/0123456789abcdef/node_modules/fake-server"
  mkdir -p "$d" && echo '{"name":"fake-server","version":"1.0.0","bin":"server.js"}' > "$d/package.json"
  exit 0;;
esac
exec "$NPX_SERVER"
`

// The first use of an npx server shows what it waits for, on a terminal
// (the CLI runs under script(1), which gives it one) as a line redrawn with
// the seconds waited, off one (or with NO_COLOR) as plain lines, and the
// call then succeeds: the install is not cut by the startup deadline.
func TestNpxInstallIsShown(t *testing.T) {
	t.Parallel()
	scriptCmd, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	for _, c := range []struct{ terminal, noColor bool }{{true, false}, {false, false}, {true, true}} {
		terminal := c.terminal
		dir := t.TempDir()
		npx, release := filepath.Join(dir, "npx"), filepath.Join(dir, "release")
		if err := os.WriteFile(npx, []byte(fakeNpx), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(release, 0o600); err != nil {
			t.Fatal(err)
		}
		env := testenv.TestServerEnv("--stdio", "NPX_RELEASE="+release, "NPX_SERVER="+testenv.Self(t), "npm_config_cache="+filepath.Join(dir, "cache"))
		var envJSON []string
		for k, v := range env {
			envJSON = append(envJSON, compact(k)+":"+compact(v))
		}
		sort.Strings(envJSON)
		cfg := filepath.Join(dir, "mcp.json")
		writeFile(t, cfg, `{"mcpServers":{"fake":{"command":`+compact(npx)+`,"args":["-y","fake-server@latest"],"startupTimeoutMs":1000,"env":{`+strings.Join(envJSON, ",")+`}}}}`)
		ctx := testkit.Ctx(t) // a hang guard only
		line := shellQuote(binary(t)) + " list fake --config " + shellQuote(cfg)
		cmd := exec.CommandContext(ctx, "sh", "-c", line+" 2>&1")
		if terminal {
			cmd = exec.CommandContext(ctx, scriptCmd, "-qfec", line, "/dev/null")
		}
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "MCPRT_AGENT_DIR="+dir, "NO_COLOR=")
		if c.noColor {
			cmd.Env = append(cmd.Env, "NO_COLOR=1")
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var seen strings.Builder
		rd := bufio.NewReader(out)
		for !strings.Contains(seen.String(), "installing fake-server@latest with npm") {
			b, err := rd.ReadByte()
			if err != nil {
				t.Fatalf("terminal %v: no install notice before the end of output: %q", terminal, seen.String())
			}
			seen.WriteByte(b)
		}
		if err := os.WriteFile(release, []byte("go\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		rest, _ := readAll(rd)
		seen.WriteString(rest)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("terminal %v: %v\n%s", terminal, err, seen.String())
		}
		text := seen.String()
		if !strings.Contains(text, "installed fake-server@latest") || !strings.Contains(text, "- echo") {
			t.Fatalf("terminal %v:\n%q", terminal, text)
		}
		if redraw := strings.Contains(text, "\r\x1b[K"); redraw != (terminal && !c.noColor) {
			t.Fatalf("terminal %v, NO_COLOR %v: the line redraws: %v\n%q", terminal, c.noColor, redraw, text)
		}
	}
}

func readAll(r *bufio.Reader) (string, error) {
	var b strings.Builder
	_, err := r.WriteTo(&b)
	return b.String(), err
}
