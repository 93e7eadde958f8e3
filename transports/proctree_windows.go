//go:build windows

package transports

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// secretShell runs a secret's command: cmd /C COMMAND.
var secretShell = []string{"cmd.exe", "/C"}

// ownGroup starts cmd in a process group of its own (Windows: a new
// console process group, so a Ctrl-C meant for the host does not reach it).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &windows.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// procTree is a started child and everything it starts: on Windows, a job
// object the child is assigned to right after it starts (its own children
// inherit the job), created to kill every process in it when its last
// handle closes. A child that starts a process before the assignment
// leaves that one outside the job: the window is the few instructions
// between CreateProcess and AssignProcessToJobObject.
type procTree struct {
	job     windows.Handle // 0 when no job could be made: only the child is ended
	process *os.Process
}

// adoptTree takes charge of a started child's tree.
func adoptTree(p *os.Process) procTree {
	t := procTree{process: p}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return t
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return t
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return t
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return t
	}
	t.job = job
	return t
}

// terminate asks the tree to end. Windows has no SIGTERM for a console
// process without a console of ours, so it ends the tree as kill does.
func (t procTree) terminate() { t.kill() }

// kill ends the child and every process of its job.
func (t procTree) kill() {
	if t.job != 0 {
		_ = windows.TerminateJobObject(t.job, 1)
		return
	}
	_ = t.process.Kill()
}

// release closes the job's handle (which kills whatever is left in it).
func (t procTree) release() {
	if t.job != 0 {
		_ = windows.CloseHandle(t.job)
	}
}

// killedBy names the signal that ended a process: never, on Windows.
func killedBy(*exec.ExitError) (string, bool) { return "", false }

// isExecutable tells whether a file can run: its extension is one of
// PATHEXT's (.exe, .cmd, .bat, .com by default).
func isExecutable(path string, _ os.FileMode) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range pathExt() {
		if ext == e {
			return true
		}
	}
	return false
}

// executableNames are the names a command given without a directory may
// have on PATH: itself if it has an executable extension, else itself
// with each of PATHEXT's.
func executableNames(command string) []string {
	if isExecutable(command, 0) {
		return []string{command}
	}
	var names []string
	for _, e := range pathExt() {
		names = append(names, command+e)
	}
	return names
}

func pathExt() []string {
	v := os.Getenv("PATHEXT")
	if v == "" {
		v = ".com;.exe;.bat;.cmd"
	}
	var exts []string
	for _, e := range strings.Split(strings.ToLower(v), ";") {
		if e != "" {
			exts = append(exts, e)
		}
	}
	return exts
}
