package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

// Building and starting the AWS front (package awsfront, cmd/awsproxy) as
// one of the test bed's processes.

// buildAWSProxy builds cmd/awsproxy into the test bed's folder (go's build
// cache makes a rebuild of unchanged sources quick).
func buildAWSProxy(ctx context.Context, root, state string) (string, error) {
	bin := filepath.Join(state, "bin", "awsproxy")
	cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", bin, "./internal/testbed/cmd/awsproxy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the test bed's AWS front: %w\n%s", err, out)
	}
	return bin, nil
}

// stsListenAddress finds a loopback address whose port 443 is free (binding
// it needs root or CAP_NET_BIND_SERVICE), or "" when there is none. It
// skips the addresses in taken: another test bed starting at the same
// moment may have found the same one free and bound it first.
func stsListenAddress(taken map[string]bool) string {
	for i := 2; i < 255; i++ {
		addr := fmt.Sprintf("127.0.0.%d", i)
		if taken[addr] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(addr, "443"))
		if err != nil {
			if errors.Is(err, syscall.EACCES) {
				return ""
			}
			continue
		}
		l.Close()
		return addr
	}
	return ""
}

// startAWSProxy starts the AWS front on port in front of the emulator at
// target, and sets the env's endpoint, request log and STS address.
func startAWSProxy(ctx context.Context, state string, bins Binaries, env *Env, target string, port int) error {
	env.AWSEndpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
	env.S3RequestLog = filepath.Join(state, "s3-requests.jsonl")
	taken := map[string]bool{}
	for {
		args := []string{"-listen", fmt.Sprintf("127.0.0.1:%d", port), "-target", target, "-log", env.S3RequestLog,
			"-dir-markers=" + strconv.FormatBool(env.backend() == BackendKumo),
			"-data", filepath.Join(state, "awsfront.json"), "-region", env.AWSRegion}
		addr := stsListenAddress(taken)
		env.STSAddress, env.AWSCAFile = "", ""
		if addr != "" {
			caFile, certFile, keyFile, err := writeServingCA(filepath.Join(state, "pki"), awsfront.HostNames(env.AWSRegion))
			if err != nil {
				return err
			}
			env.STSAddress, env.AWSCAFile = addr, caFile
			args = append(args, "-sts", net.JoinHostPort(addr, "443"), "-cert", certFile, "-key", keyFile)
		}
		pid, err := spawn(bins.AWSProxy, args, nil, filepath.Join(state, "logs", "awsproxy.log"))
		if err != nil {
			return err
		}
		// Ready, or exited: a front that exits at once with an STS address
		// lost the race for its port 443 to another test bed (CI runs two
		// side by side), and the next free address is tried.
		deadline := time.Now().Add(120 * time.Second)
		for {
			err = waitHTTP(ctx, env.awsHealthURL(), "", time.Second)
			if err == nil || ctx.Err() != nil || !alive(pid) || time.Now().After(deadline) {
				break
			}
		}
		if err == nil {
			env.PIDs = append(env.PIDs, pid)
			return writePIDs(state, env.PIDs)
		}
		logPath := filepath.Join(state, "logs", "awsproxy.log")
		lostSTS := false
		if addr != "" && !alive(pid) {
			b, _ := os.ReadFile(logPath)
			lostSTS = bytes.Contains(b, []byte("STS listener: listen tcp "+net.JoinHostPort(addr, "443")))
		}
		if !lostSTS || len(taken) >= 8 {
			stopPIDs([]int{pid})
			return fmt.Errorf("the AWS front did not become ready: %w (see %s)", err, logPath)
		}
		taken[addr] = true
	}
}
