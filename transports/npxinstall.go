package transports

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// DefaultNpxInstallTimeout is the budget of an npx package's first
// install (Dialer.NpxInstallTimeout; settings.npxInstallTimeoutMs).
const DefaultNpxInstallTimeout = 5 * time.Minute

// npx installs. The first `npx -y PACKAGE` downloads the package, which on
// a slow network or a large package takes minutes: far more than a
// server's startup deadline, which would kill npx every time and restart
// the download at the next call. So before starting such a server the
// dialer installs the package on its own, into npm's npx cache, with
// `npx --yes --package=PACKAGE -c true` (the same cache entry `npx -y
// PACKAGE` uses), under a budget of its own; the dial reports
// DialProgress so the server actor holds its startup deadline meanwhile.
// One install per package runs at a time, shared by every dial that needs
// it, and is not stopped when a dial gives up: the next dial joins it. It
// stops at its budget or when the dialer shuts down.

// install is one package install, shared by the dials that wait for it.
type install struct {
	done chan struct{} // closed when it has ended
	err  error         // set before done closes
}

// installs is a dialer's installs in progress, by package and cache.
type installs struct {
	mu     sync.Mutex
	m      map[string]*install
	ctx    context.Context
	cancel context.CancelFunc
}

// npxPackage returns the package spec of an `npx -y PACKAGE ...` command
// (with --yes or -y: without it npx would ask, and a server cannot
// answer), or ok false.
func npxPackage(command string, args []string) (spec string, ok bool) {
	if base := filepath.Base(command); base != "npx" && base != "npx.cmd" {
		return "", false
	}
	yes := false
	for _, a := range args {
		switch {
		case a == "-y" || a == "--yes":
			yes = true
		case a == "-q" || a == "--quiet" || a == "--":
		case strings.HasPrefix(a, "-"):
			return "", false // an option we do not interpret
		default:
			return a, yes
		}
	}
	return "", false
}

// npxInstalled reports whether spec is in the npx cache: at its exact
// version when it names one, else at any version (npx then runs the
// cached one without downloading it).
func npxInstalled(cache, spec string) bool {
	if cache == "" {
		return false
	}
	name, version, ok := splitSpec(spec)
	if !ok {
		name, version = spec, ""
	}
	if exactVersion.MatchString(version) {
		_, found := cachedBin(cache, name, version)
		return found
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", filepath.FromSlash(name), "package.json"))
	return len(dirs) > 0
}

// ensureNpx installs the package of an npx server first if it is not in
// the cache yet, reporting the wait through sink. It returns when the
// package is installed, the install failed or ran out of its budget, or
// ctx (the dial) ended.
func (d *Dialer) ensureNpx(ctx context.Context, req messages.DialRequest, env []string, sink messages.Sink) *messages.Error {
	ep := req.Endpoint
	spec, ok := npxPackage(ep.Command, ep.Args)
	if !ok || npxInstalled(npxCacheDir(env), spec) {
		return nil
	}
	npx, err := lookPath(ep.Command, ep.Cwd, env)
	if err != nil {
		return nil // startProcess reports it
	}
	what := "installing " + spec + " with npm"
	sink(messages.DialProgress{Server: req.Server, Gen: req.Gen, Installing: true, What: what})
	if d.Notify != nil {
		d.Notify(req.Server, what+" (first use; budget "+d.npxBudget().String()+", settings.npxInstallTimeoutMs)")
	}
	in := d.startInstall(npx, spec, ep.Cwd, env)
	select {
	case <-in.done:
	case <-ctx.Done():
		return messages.Errorf(messages.KindAborted, req.Server, "connect cancelled while %s (it goes on)", what)
	}
	if in.err != nil {
		if d.Notify != nil {
			d.Notify(req.Server, "install of "+spec+" failed")
		}
		return messages.Errorf(messages.KindConnectFailed, req.Server, "%s", in.err.Error())
	}
	if d.Notify != nil {
		d.Notify(req.Server, "installed "+spec)
	}
	sink(messages.DialProgress{Server: req.Server, Gen: req.Gen, What: "starting " + spec})
	return nil
}

func (d *Dialer) npxBudget() time.Duration {
	if d.NpxInstallTimeout > 0 {
		return d.NpxInstallTimeout
	}
	return DefaultNpxInstallTimeout
}

// startInstall joins the install of spec in progress, or starts it.
func (d *Dialer) startInstall(npx, spec, cwd string, env []string) *install {
	d.installs.mu.Lock()
	defer d.installs.mu.Unlock()
	if d.installs.m == nil {
		d.installs.m = map[string]*install{}
		d.installs.ctx, d.installs.cancel = context.WithCancel(context.Background())
	}
	key := npx + "\x00" + npxCacheDir(env) + "\x00" + spec
	if in, ok := d.installs.m[key]; ok {
		return in
	}
	in := &install{done: make(chan struct{})}
	d.installs.m[key] = in
	ctx := d.installs.ctx
	d.spawn(func() {
		in.err = d.runInstall(ctx, npx, spec, cwd, env)
		d.installs.mu.Lock()
		delete(d.installs.m, key) // a failed install may be tried again
		d.installs.mu.Unlock()
		close(in.done)
	})
	return in
}

// runInstall runs npx to put spec into the npx cache, within the budget.
func (d *Dialer) runInstall(ctx context.Context, npx, spec, cwd string, env []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := d.npxBudget()
	timedOut := make(chan struct{})
	t := d.clock().AfterFunc(budget, func() {
		close(timedOut)
		cancel()
	})
	defer t.Stop()
	cmd := exec.Command(npx, "--yes", "--package="+spec, "-c", "true")
	cmd.Env, cmd.Dir = env, cwd
	cmd.Stdin, cmd.Stdout = nil, nil
	stderr := newRing(stderrKeep, nil)
	cmd.Stderr = stderr
	ownGroup(cmd)
	cmd.WaitDelay = termGrace
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("npx could not be started to install %s", spec)
	}
	tree := adoptTree(cmd.Process)
	defer tree.release()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		tree.kill()
		<-exited
		select {
		case <-timedOut:
			return fmt.Errorf("installing %s with npm did not finish within %s; raise settings.npxInstallTimeoutMs, or run npx -y %s once yourself", spec, budget, spec)
		default:
			return errors.New("installing " + spec + " was stopped: the runtime closed")
		}
	}
	tree.kill() // nothing of its group outlives it
	if err != nil {
		return fmt.Errorf("installing %s with npm failed (%s); run npx -y %s yourself to see why", spec, exitText(err), spec)
	}
	return nil
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return "it could not run"
}

// Shutdown stops the installs in progress (their dials fail); call it
// when the runtime closes, before Wait.
func (d *Dialer) Shutdown() {
	d.installs.mu.Lock()
	defer d.installs.mu.Unlock()
	if d.installs.cancel != nil {
		d.installs.cancel()
	}
}
