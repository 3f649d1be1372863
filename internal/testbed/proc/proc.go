// Package proc starts and watches the test bed's processes (the API
// server, the emulators, the Flink and operator JVMs): each in a process
// group of its own that outlives the command that started it, with its
// output appended to a log file, and with none of the starter's inherited
// descriptors. The test bed's packages share it; it stands in for nothing.
package proc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// Stop sends SIGTERM to each process group, then SIGKILL to what is
// still alive after a grace period. API server first, etcd last.
func Stop(pids []int) {
	for i := len(pids) - 1; i >= 0; i-- {
		if Alive(pids[i]) {
			_ = syscall.Kill(-pids[i], syscall.SIGTERM)
			// A frozen process (Node.Freeze) gets its SIGTERM once it
			// runs again.
			_ = syscall.Kill(-pids[i], syscall.SIGCONT)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range pids {
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if Alive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			for i := 0; i < 50 && Alive(pid); i++ {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// Lock takes an exclusive flock on path until the returned func is called.
func Lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// FreePorts finds n free TCP ports on 127.0.0.1.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		a, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("listener address %v is not TCP", l.Addr())
		}
		ports = append(ports, a.Port)
	}
	return ports, nil
}

// WaitHTTP waits until url answers 200 OK (with token as a bearer token
// when set), for at most timeout.
func WaitHTTP(ctx context.Context, url, token string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // readiness probe of our own self-signed server only
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s answered %s", url, resp.Status)
		} else {
			last = err
		}
		if time.Now().After(deadline) {
			return last
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// CacheDir is where built tools are kept: $FLINKSTATE_CACHE_DIR, else
// <repo>/.cache (git-ignored).
func CacheDir(root string) string {
	if d := os.Getenv("FLINKSTATE_CACHE_DIR"); d != "" {
		return d
	}
	return filepath.Join(root, ".cache")
}
