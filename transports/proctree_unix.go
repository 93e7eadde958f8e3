//go:build unix

package transports

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// secretShell runs a secret's command: sh -c COMMAND.
var secretShell = []string{"/bin/sh", "-c"}

// ownGroup makes cmd start in a process group of its own, so the whole
// tree it starts (npx's node, a shell's children) can be signalled at once.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// procTree is a started child and everything it starts: on Unix, its
// process group.
type procTree struct{ pgid int }

// adoptTree takes charge of a started child's tree.
func adoptTree(p *os.Process) procTree { return procTree{pgid: p.Pid} }

// terminate asks the whole tree to end (SIGTERM).
func (t procTree) terminate() { _ = syscall.Kill(-t.pgid, syscall.SIGTERM) }

// kill ends the whole tree at once (SIGKILL); anything of it still
// running, grandchildren included, does not survive.
func (t procTree) kill() { _ = syscall.Kill(-t.pgid, syscall.SIGKILL) }

// release frees what the tree holds (nothing on Unix).
func (t procTree) release() {}

// killedBy names the signal that ended a process, if one did.
func killedBy(ee *exec.ExitError) (string, bool) {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("%d (%s)", int(ws.Signal()), ws.Signal()), true
	}
	return "", false
}

// isExecutable tells whether a file's mode lets it run.
func isExecutable(path string, mode os.FileMode) bool { return mode&0o111 != 0 }

// executableNames are the names a command given without a directory may
// have on PATH.
func executableNames(command string) []string { return []string{command} }
