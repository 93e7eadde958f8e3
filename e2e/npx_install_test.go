//go:build unix

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/simseam"
)

// fakeNpx is an npx on this machine: `npx --yes --package=SPEC -c true`
// (the runtime's install) logs SPEC, waits until the test writes a line to
// the release FIFO (a slow download, for as long as the test wants), then
// puts the package into the npx cache; `npx -y SPEC` (the server) runs the
// test server. Nothing leaves 127.0.0.1.
const fakeNpx = `#!/bin/sh
case "$2" in
--package=*)
  echo "$2" >> "$NPX_LOG"
  read line < "$NPX_RELEASE"
  d="$npm_config_cache/_npx/0123456789abcdef/node_modules/fake-server"
  mkdir -p "$d" && echo '{"name":"fake-server","version":"1.0.0","bin":"server.js"}' > "$d/package.json"
  exit 0;;
esac
exec "$NPX_SERVER"
`

type npxRig struct {
	*rig
	host         *recHost
	log, release string
}

func newNpxRig(t *testing.T, settings config.Settings) *npxRig {
	t.Helper()
	dir := t.TempDir()
	npx, log, release := filepath.Join(dir, "npx"), filepath.Join(dir, "installs.log"), filepath.Join(dir, "release")
	if err := os.WriteFile(npx, []byte(fakeNpx), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(release, 0o600); err != nil {
		t.Fatal(err)
	}
	startup := int64(1000)
	srv := config.Server{Command: npx, Args: []string{"-y", "fake-server@latest"}, StartupTimeoutMs: &startup,
		Env: testenv.TestServerEnv("--stdio", "NPX_LOG="+log, "NPX_RELEASE="+release, "NPX_SERVER="+testenv.Self(t),
			"npm_config_cache="+filepath.Join(dir, "cache"))}
	r := &rig{t: t, ctx: testCtx(t), clk: newTestClock()}
	host := &recHost{}
	rt, err := mcprt.Start(r.ctx, mcprt.Options{Host: host, Sim: &simseam.Seams{Clock: r.clk},
		Config: &config.File{MCPServers: map[string]config.Server{"fake": srv}, Settings: settings}})
	if err != nil {
		t.Fatal(err)
	}
	r.rt = rt
	r.mcp, _ = rt.Tool(mcprt.MCPToolName)
	t.Cleanup(r.close)
	return &npxRig{rig: r, host: host, log: log, release: release}
}

func (n *npxRig) installs() []string {
	b, _ := os.ReadFile(n.log)
	return strings.Fields(string(b))
}

// An npx package's first install is not bound by the startup deadline: it
// has a budget of its own; a call that gives up does not restart it (the
// next call joins it); the host is told what the server waits for.
func TestNpxFirstInstallHasItsOwnBudget(t *testing.T) {
	t.Parallel()
	n := newNpxRig(t, config.Settings{})
	mark := n.clk.Mark()
	ctxA, cancelA := context.WithCancel(n.ctx)
	a := n.start(ctxA, `{"server":"fake"}`)
	poll(n.ctx, t, "the install to start", func() bool { return len(n.installs()) == 1 })
	n.clk.WaitNotPending(n.ctx, t, mark, time.Second) // the startup deadline is held
	n.clk.Advance(20 * time.Second)                   // 20 times the startup deadline
	if st := n.status("fake"); st.LastError != nil {
		t.Fatalf("the install was cut by the startup deadline: %+v", st.LastError)
	}
	cancelA() // the first caller gives up
	if res := n.recv(a, "the abandoned call"); !res.IsError {
		t.Fatalf("the abandoned call: %q", res.Text)
	}
	b := n.start(n.ctx, `{"server":"fake"}`)
	if err := os.WriteFile(n.release, []byte("go\n"), 0o600); err != nil { // the download ends
		t.Fatal(err)
	}
	res := n.recv(b, "the call after the install")
	if res.IsError || !strings.Contains(res.Text, "echo") {
		t.Fatalf("after the install: %q %v", res.Text, res.Details)
	}
	if got := n.installs(); len(got) != 1 || got[0] != "--package=fake-server@latest" {
		t.Fatalf("installs %v, want exactly one", got)
	}
	n.host.mu.Lock()
	defer n.host.mu.Unlock()
	told := false
	for _, no := range n.host.notices {
		told = told || (no.Server == "fake" && strings.HasPrefix(no.Text, "installing fake-server@latest with npm") && strings.Contains(no.Text, "npxInstallTimeoutMs"))
	}
	if !told {
		t.Fatalf("the host was not told what the server waits for: %+v", n.host.notices)
	}
}

// An install that outlives its budget fails the call with an error that
// names the setting to raise.
func TestNpxInstallBudget(t *testing.T) {
	t.Parallel()
	budget := int64(120000)
	n := newNpxRig(t, config.Settings{NpxInstallTimeoutMs: &budget})
	mark := n.clk.Mark()
	a := n.start(n.ctx, `{"server":"fake"}`)
	poll(n.ctx, t, "the install to start", func() bool { return len(n.installs()) == 1 })
	poll(n.ctx, t, "the install budget to be armed", func() bool { return n.clk.ArmedSince(mark, 2*time.Minute) })
	n.clk.Advance(2*time.Minute + time.Second)
	res := n.recv(a, "the call whose install ran out of time")
	if !res.IsError || !strings.Contains(res.Text, "did not finish within 2m0s") || !strings.Contains(res.Text, "npxInstallTimeoutMs") {
		t.Fatalf("%q", res.Text)
	}
}
