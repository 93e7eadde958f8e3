package transports

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// inheritedEnv lists the variables a stdio server inherits from the host;
// everything else it gets comes from its configured env. A server sees the
// host's whole environment only if someone configures it to.
var inheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE",
	"TMPDIR", "TZ", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// childEnv builds a stdio server's environment: the inherited minimum, then
// the configured env on top, in a deterministic order.
func childEnv(ep messages.Endpoint, lookup func(string) (string, bool)) []string {
	env := make([]string, 0, len(inheritedEnv)+len(ep.Env))
	for _, k := range inheritedEnv {
		if _, set := ep.Env[k]; set {
			continue
		}
		if v, ok := lookup(k); ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	return append(env, ep.SortedEnv()...)
}

// process is a stdio server's child process in its own process group.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *ring

	tree procTree // the child and what it starts
	// envValues are the values of the environment the child was given,
	// masked in the stderr lines shown to the person.
	envValues []string

	exited  chan struct{} // closed once Wait has returned
	waitErr error         // set before exited closes

	killOnce sync.Once
	// signalled is set before the runtime signals the process group: an
	// exit after that is the runtime's doing, not the server's.
	signalled atomic.Bool
}

// startProcess spawns the endpoint's command with its own process group.
func startProcess(ep messages.Endpoint, mirror func(line string)) (*process, error) {
	env := childEnv(ep, os.LookupEnv)
	if node, args, ok := resolveNpx(ep.Command, ep.Args, env); ok {
		ep.Command, ep.Args = node, args // the cached package's bin, without npm as its parent
	}
	path, err := lookPath(ep.Command, ep.Cwd, env)
	if err != nil {
		return nil, err
	}
	if ep.Cwd != "" {
		if st, err := os.Stat(ep.Cwd); err != nil || !st.IsDir() {
			return nil, errors.New("working directory (field cwd) does not exist or is not a directory")
		}
	}
	cmd := exec.Command(path, ep.Args...)
	cmd.Env = env
	cmd.Dir = ep.Cwd
	ownGroup(cmd)
	// Once the child has exited, Wait gives its stderr this long to reach
	// end of file: a helper that left the process group (setsid) may hold
	// it open for ever, and must not keep the child from being reaped.
	cmd.WaitDelay = termGrace
	// Our own pipe, not cmd.StdinPipe: the line codec writes to it without
	// blocking when it can (see lineconn_write.go), which needs the file.
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	cmd.Stdin = stdinR
	// Our own pipe, not cmd.StdoutPipe: Wait closes that one as soon as the
	// child exits, which would race the reader out of the child's last
	// lines and turn its end of file into "file already closed".
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		_ = stdin.Close()
		_ = stdinR.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	cmd.Stdout = stdoutW
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, stderr: newRing(stderrKeep, mirror), exited: make(chan struct{}), envValues: envValues(env)}
	cmd.Stderr = p.stderr
	err = cmd.Start()
	_ = stdoutW.Close() // the child has its copies
	_ = stdinR.Close()
	if err != nil {
		_ = stdout.Close()
		_ = stdin.Close()
		return nil, startError(err)
	}
	p.tree = adoptTree(cmd.Process)
	go func() {
		defer close(p.exited)
		defer func() {
			if r := recovered("process reaper", recover()); r != nil {
				p.waitErr = r
			}
		}()
		p.waitErr = cmd.Wait()
	}()
	return p, nil
}

// envValues lists the values of env worth masking (four bytes or more:
// shorter ones would mask ordinary words), longest first so that a value
// containing another is masked whole.
func envValues(env []string) []string {
	var out []string
	for _, kv := range env {
		if _, v, ok := strings.Cut(kv, "="); ok && len(v) >= 4 {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// mask replaces every environment value the child was given in s.
func (p *process) mask(s string) string {
	for _, v := range p.envValues {
		s = strings.ReplaceAll(s, v, "<redacted>")
	}
	return s
}

// lookPath resolves a command with the child's PATH, not the host's. A
// relative path with a slash is relative to cwd, as exec runs it.
func lookPath(command, cwd string, env []string) (string, error) {
	if strings.Contains(command, "/") || strings.ContainsRune(command, filepath.Separator) {
		if !filepath.IsAbs(command) && cwd != "" {
			command = filepath.Join(cwd, command)
		}
		st, err := os.Stat(command)
		switch {
		case err != nil:
			return "", errors.New("command (field command) not found")
		case st.IsDir() || !isExecutable(command, st.Mode()):
			return "", errors.New("command (field command) is not an executable file")
		}
		return command, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		for _, name := range executableNames(command) {
			candidate := filepath.Join(dir, name)
			if st, err := os.Stat(candidate); err == nil && !st.IsDir() && isExecutable(candidate, st.Mode()) {
				return candidate, nil
			}
		}
	}
	return "", errors.New("command (field command) not found on PATH")
}

func startError(err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return errors.New("command (field command) is not executable")
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return errors.New("command (field command) not found")
	}
	return errors.New("command (field command) could not be started")
}

// exitDescription says how the process ended, once it has.
func (p *process) exitDescription() string {
	select {
	case <-p.exited:
	default:
		return "server closed its stdout"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if sig, ok := killedBy(ee); ok {
			return "server process was killed by signal " + sig
		}
		return fmt.Sprintf("server process exited with status %d", ee.ExitCode())
	}
	return "server process exited"
}

// exitedByItself reports whether the process has exited without the
// runtime signalling it.
func (p *process) exitedByItself() bool {
	select {
	case <-p.exited:
		return !p.signalled.Load()
	default:
		return false
	}
}

// terminate ends the process and its group: stdin is already closed (or is
// closed now); the leader gets stdinGrace to exit, then the group gets
// SIGTERM and termGrace, then SIGKILL. Whatever the leader does, the rest of
// the group is signalled too, so grandchildren (npx's node, a shell's
// children) do not survive. It returns once the leader is reaped.
func (p *process) terminate(clk clock.Clock) {
	p.killOnce.Do(func() {
		_ = p.stdin.Close()
		if !waitClosed(clk, p.exited, stdinGrace) {
			p.signalled.Store(true)
			p.tree.terminate()
			if !waitClosed(clk, p.exited, termGrace) {
				p.tree.kill()
				<-p.exited
			}
		}
		// The leader is gone; make sure nothing else of its group lingers.
		p.tree.kill()
		p.tree.release()
		_ = p.stdout.Close()
	})
}

// waitClosed waits up to d for ch to close, on the injected clock.
func waitClosed(clk clock.Clock, ch <-chan struct{}, d time.Duration) bool {
	timeout := make(chan struct{})
	t := clk.AfterFunc(d, func() { close(timeout) })
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-timeout:
		return false
	}
}
