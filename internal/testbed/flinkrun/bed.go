package flinkrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/proc"
)

// Bed is what the Flink runner and the node stand-in need of the test bed
// (package testbed gives it from its Env).
type Bed struct {
	Kubeconfig  string
	AWSEndpoint string
	AWSRegion   string
	// STSAddress is the loopback address whose port 443 answers for the
	// STS and S3 host names over TLS, trusted through AWSCAFile ("" when
	// the test bed could not listen there).
	STSAddress, AWSCAFile string
	// KubeletCertFile and KubeletKeyFile are the serving certificate the
	// API server trusts for kubelets (--kubelet-certificate-authority):
	// the node stand-in's log endpoint presents it ("" on a test bed
	// started without one).
	KubeletCertFile, KubeletKeyFile string
	// Vars are the environment variables a client sets to use the test bed.
	Vars [][2]string
}

// newBedAWS builds AWS clients for the test bed from its variables
// (credentials included, so the SDK never looks elsewhere).
func newBedAWS(ctx context.Context, tb Bed) (*awsclient.Clients, error) {
	for _, kv := range tb.Vars {
		os.Setenv(kv[0], kv[1])
	}
	return awsclient.New(ctx, awsclient.Config{Region: tb.AWSRegion, Endpoint: tb.AWSEndpoint})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// The test bed's process helpers (package proc), under the names this
// package's code was written with.

func fileExists(p string) bool             { return proc.FileExists(p) }
func alive(pid int) bool                   { return proc.Alive(pid) }
func stopPIDs(pids []int)                  { proc.Stop(pids) }
func lockFile(path string) (func(), error) { return proc.Lock(path) }
func freePorts(n int) ([]int, error)       { return proc.FreePorts(n) }
func cacheDir(root string) string          { return proc.CacheDir(root) }
func spawnWithEnv(bin string, args, env []string, logPath string) (int, error) {
	return proc.Spawn(bin, args, env, logPath)
}

func waitHTTP(ctx context.Context, url, token string, timeout time.Duration) error {
	return proc.WaitHTTP(ctx, url, token, timeout)
}
