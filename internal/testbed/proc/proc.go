// Package proc starts and watches the test bed's processes (the API
// server, the emulators, the Flink and operator JVMs): each in a process
// group of its own that outlives the command that started it, with its
// output appended to a log file, and with none of the starter's inherited
// descriptors. The test bed's packages share it; it stands in for nothing.
package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Spawn starts bin with exactly env, its output appended to logPath.
func Spawn(bin string, args, env []string, logPath string) (int, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	closeInheritedOnExec()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = env
	// Its own process group: it outlives `testbed up`, and is stopped as a group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", filepath.Base(bin), err)
	}
	pid := cmd.Process.Pid
	// Reap it when it exits so it never lingers as a zombie of a long-lived parent.
	go func() { _ = cmd.Wait() }()
	return pid, nil
}

// closeInheritedOnExec keeps the descriptors this process was started with
// (beyond stdin, stdout and stderr), or opened without close-on-exec since,
// out of what it spawns; it runs at every spawn, as such a descriptor may
// come after the first one. Go opens its own
// files close-on-exec, but one inherited without that flag is passed on to
// every child (syscall.forkExec closes only close-on-exec ones), and a
// daemon spawned here outlives the test: a lock a wrapper such as
// `flock FILE go test …` holds through such a descriptor (flock(1) keeps
// it open for the command) was held on by kube-controller-manager after
// the test ended, so every later `flock FILE …` waited for ever.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return // not Linux: nothing known to leak
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// Alive says whether the process pid runs (a zombie does not).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie still answers signal 0; /proc tells the truth.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b))
	return len(fields) < 3 || fields[2] != "Z"
}

// FileExists says whether p exists.
func FileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Tail is the last n lines of a log's text s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
