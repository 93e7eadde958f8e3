//go:build unix

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// Ctrl-C exits 130, and only once the server processes are gone.
func TestInterruptExits130AfterStoppingServers(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	server := "sh -c " + shellQuote(`echo $$ > `+shellQuote(pidFile)+`; exec "$0" "$@"`) + " " +
		shellQuote(binary(t)) + " demo-server --root " + shellQuote(t.TempDir())
	ctx := testkit.Ctx(t) // a hang guard only
	cmd := exec.CommandContext(ctx, binary(t), "events", "subscribe", "--stdio", server, "adhoc", "clock.tick", `{"seconds":60}`)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MCPRT_AGENT_DIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The subscription's acknowledgement: the server is running.
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "active") {
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("after Ctrl-C: %v, want exit %d; stderr %q", err, exitInterrupted, stderr.String())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the server process %d outlived the CLI (kill 0: %v)", pid, err)
	}
}
