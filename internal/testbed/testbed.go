// Package testbed starts the real services the acceptance tests run against on
// a machine without Docker: etcd and kube-apiserver (built from the pinned
// tools/kube module) with the Flink operator's CRDs installed, and kumo, an
// AWS API emulator (tools/kumo), or with FLINKSTATE_TESTBED_AWS=localstack
// LocalStack (tools/localstack, localstack.go). It runs them in the
// background, writes a kubeconfig and a shell env file, and stops them again.
//
// It is the test bed's core: Env, Up/Down, the tools it builds, the
// operator's CRDs and files, the PKI, kube-controller-manager and the faults
// tests inject. The parts it stands in with are packages of their own, which
// never import it (it hands each what it needs): awsfront (the AWS front),
// opmodel (the operator model), flinkrun (the Flink runner and the node
// stand-in), realop (the real-operator runner); proc holds the process
// helpers they share. RealFlink, which runs the model's jobs on the Flink
// runner, and make demo's compositions are here; so are the names the
// provider's tests use, as aliases and thin wrappers (TESTBED.md, "The test
// bed's packages").
//
// Nothing here imports Terraform; the provider's tests and the testbed command
// (make testbed-up / testbed-down) share it.
package testbed

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/proc"
)

// Env is what a client needs to use a running test bed.
type Env struct {
	Kubeconfig string `json:"kubeconfig"`
	KubeHost   string `json:"kube_host"`
	KubeToken  string `json:"kube_token"`
	KubeCAFile string `json:"kube_ca_file"`
	// A client certificate the API server accepts (--client-ca-file).
	KubeClientCertFile string `json:"kube_client_cert_file,omitempty"`
	KubeClientKeyFile  string `json:"kube_client_key_file,omitempty"`
	// The serving certificate of the node stand-in's kubelet endpoint,
	// which the API server verifies (--kubelet-certificate-authority).
	KubeletCertFile string `json:"kubelet_cert_file,omitempty"`
	KubeletKeyFile  string `json:"kubelet_key_file,omitempty"`
	AWSEndpoint     string `json:"aws_endpoint"`
	// AWSBackend is what the AWS front forwards to: kumo or localstack
	// (FLINKSTATE_TESTBED_AWS when the test bed started).
	AWSBackend string `json:"aws_backend"`
	AWSRegion  string `json:"aws_region"`
	AccessKey  string `json:"access_key"`
	// S3RequestLog is the AWS front's log of S3 requests (package awsfront).
	S3RequestLog string `json:"s3_request_log"`
	// STSAddress is the loopback address whose port 443 answers for the
	// STS host names over TLS, trusted through AWSCAFile ("" when the
	// test bed could not listen there: then real Flink cannot use IRSA).
	STSAddress string `json:"sts_address,omitempty"`
	AWSCAFile  string `json:"aws_ca_file,omitempty"`
	SecretKey  string `json:"secret_key"`
	Kubectl    string `json:"kubectl"`
	PIDs       []int  `json:"pids"`
}

// Vars returns the environment variables a shell or a test process sets to
// use the test bed.
func (e Env) Vars() [][2]string {
	return [][2]string{
		{"KUBECONFIG", e.Kubeconfig},
		{"AWS_ENDPOINT_URL", e.AWSEndpoint},
		{"AWS_REGION", e.AWSRegion},
		{"AWS_ACCESS_KEY_ID", e.AccessKey},
		{"AWS_SECRET_ACCESS_KEY", e.SecretKey},
		{"FLINKSTATE_TESTBED_KUBECTL", e.Kubectl},
		{"FLINKSTATE_S3_REQUEST_LOG", e.S3RequestLog},
		{"FLINKSTATE_TESTBED_AWS", e.backend()},
		// The second region (buckets there: CreateBucket with its
		// LocationConstraint, signed for it) and the control of the
		// front's S3 replication (awsfront/s3replication.go, ReplicationControl).
		{"FLINKSTATE_SECOND_REGION", SecondRegion},
		{"FLINKSTATE_REPLICATION_CONTROL", e.AWSEndpoint + awsfront.ReplicationControlPath},
		// Never ask the EC2 metadata endpoint for credentials: nothing here runs on EC2.
		{"AWS_EC2_METADATA_DISABLED", "true"},
	}
}

// StateDir is where a running test bed keeps its data, logs and env file.
func StateDir(root string) string {
	if d := os.Getenv("FLINKSTATE_TESTBED_DIR"); d != "" {
		return d
	}
	return filepath.Join(root, ".testbed")
}

// FindRoot walks up from the working directory to the repository root (the
// folder whose go.mod declares this provider's module).
func FindRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/flinkstate/terraform-provider-flinkstate\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbed: repository root (go.mod of terraform-provider-flinkstate) not found above the working directory")
		}
		dir = parent
	}
}

// Up makes sure a test bed is running and returns how to reach it. It is
// idempotent: a running, healthy test bed is reused. started tells whether
// this call started it.
func Up(ctx context.Context, root string, logf func(string, ...any)) (env Env, started bool, err error) {
	state := StateDir(root)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return Env{}, false, err
	}
	unlock, err := lockFile(filepath.Join(state, "lock"))
	if err != nil {
		return Env{}, false, err
	}
	defer unlock()

	backend, err := AWSBackendFromEnv()
	if err != nil {
		return Env{}, false, err
	}
	if env, err := Load(root); err == nil && env.healthy(ctx) {
		if env.backend() != backend {
			return Env{}, false, fmt.Errorf("a test bed with %s as its AWS backend is running (%s), not %s (FLINKSTATE_TESTBED_AWS): stop it first (make testbed-down)",
				env.backend(), state, backend)
		}
		if k := builtTool(root, "kubectl"); env.Kubectl == "" && k != "" {
			// kubectl was built after this bed started (make testbed-up).
			env.Kubectl = k
			if err := writeEnvFiles(state, env); err != nil {
				return env, false, err
			}
		}
		return env, false, nil
	}
	// The operator's CRDs are read before anything is built or started, so
	// a checkout without them fails at once, naming the path.
	if _, err := readCRDs(root); err != nil {
		return Env{}, false, err
	}
	// Anything left from a dead or half-started bed goes first.
	stopPIDs(readPIDs(state))
	cleanData(state)

	bins, err := BuildTools(ctx, root, logf)
	if err != nil {
		return Env{}, false, err
	}
	if bins.AWSProxy, err = buildAWSProxy(ctx, root, state); err != nil {
		return Env{}, false, err
	}
	if backend == BackendLocalStack {
		if bins.LocalStackPython, err = LocalStackPython(ctx, root, logf); err != nil {
			return Env{}, false, err
		}
	}
	env, err = start(ctx, root, state, bins, logf)
	if err != nil {
		stopPIDs(env.PIDs)
		return Env{}, false, err
	}
	return env, true, nil
}

// Down stops a running test bed and removes its data. Stopping one that is
// not running is not an error.
func Down(root string) error {
	state := StateDir(root)
	if !fileExists(state) {
		return nil
	}
	unlock, err := lockFile(filepath.Join(state, "lock"))
	if err != nil {
		return err
	}
	stopPIDs(readPIDs(state))
	unlock()
	return os.RemoveAll(state)
}

// Load reads the env of a test bed started earlier.
func Load(root string) (Env, error) {
	b, err := os.ReadFile(filepath.Join(StateDir(root), "env.json"))
	if err != nil {
		return Env{}, err
	}
	var env Env
	return env, json.Unmarshal(b, &env)
}

func start(ctx context.Context, root, state string, bins Binaries, logf func(string, ...any)) (Env, error) {
	env := Env{AWSRegion: "us-east-1", AccessKey: "test", SecretKey: "test", Kubectl: bins.Kubectl, AWSBackend: BackendKumo}
	if bins.LocalStackPython != "" {
		env.AWSBackend = BackendLocalStack
	}
	logs := filepath.Join(state, "logs")
	for _, d := range []string{logs, filepath.Join(state, "etcd"), filepath.Join(state, "pki")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return env, err
		}
	}
	ports, err := freePorts(5)
	if err != nil {
		return env, err
	}
	etcdClient, etcdPeer, apiPort, awsPort, proxyPort := ports[0], ports[1], ports[2], ports[3], ports[4]

	// etcd
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	pid, err := spawn(bins.Etcd, []string{
		"--name=testbed",
		"--data-dir=" + filepath.Join(state, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testbed=" + peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	}, nil, filepath.Join(logs, "etcd.log"))
	if err != nil {
		return env, err
	}
	env.PIDs = append(env.PIDs, pid)
	if err := writePIDs(state, env.PIDs); err != nil {
		return env, err
	}

	// kumo or LocalStack, behind the AWS front (package awsfront) on the advertised port.
	if env.AWSBackend == BackendLocalStack {
		pid, err = startLocalStack(state, bins.LocalStackPython, awsPort)
	} else {
		pid, err = spawn(bins.Kumo, []string{"--host", "127.0.0.1", "--port", strconv.Itoa(awsPort)},
			[]string{"KUMO_LOG_LEVEL=warn"}, filepath.Join(logs, "kumo.log"))
	}
	if err != nil {
		return env, err
	}
	env.PIDs = append(env.PIDs, pid)
	if err := writePIDs(state, env.PIDs); err != nil {
		return env, err
	}
	if err := startAWSProxy(ctx, state, bins, &env, fmt.Sprintf("http://127.0.0.1:%d", awsPort), proxyPort); err != nil {
		return env, err
	}

	if err := waitHTTP(ctx, clientURL+"/health", "", 60*time.Second); err != nil {
		return env, fmt.Errorf("etcd did not become healthy (log: %s): %w", filepath.Join(logs, "etcd.log"), err)
	}

	// kube-apiserver
	pki := filepath.Join(state, "pki")
	saKey := filepath.Join(pki, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return env, err
	}
	env.KubeToken = randomHex(24)
	tokenFile := filepath.Join(pki, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(env.KubeToken+",testbed-admin,testbed-admin,system:masters\n"), 0o600); err != nil {
		return env, err
	}
	clientCA, certFile, keyFile, err := writeClientCA(pki)
	if err != nil {
		return env, err
	}
	env.KubeClientCertFile, env.KubeClientKeyFile = certFile, keyFile
	kubeletCA, kubeletCert, kubeletKey, err := writeKubeletCA(pki)
	if err != nil {
		return env, err
	}
	env.KubeletCertFile, env.KubeletKeyFile = kubeletCert, kubeletKey
	pid, err = spawn(bins.KubeAPIServer, []string{
		"--etcd-servers=" + clientURL,
		"--client-ca-file=" + clientCA,
		"--cert-dir=" + pki,
		"--secure-port=" + strconv.Itoa(apiPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--token-auth-file=" + tokenFile,
		// pods/log reaches the node stand-in's kubelet endpoint
		// (flinkrun.ServeKubelet) at the Node's InternalIP.
		"--kubelet-certificate-authority=" + kubeletCA,
		"--kubelet-preferred-address-types=InternalIP",
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--enable-priority-and-fairness=false",
		"--v=0",
	}, nil, filepath.Join(logs, "kube-apiserver.log"))
	if err != nil {
		return env, err
	}
	env.PIDs = append(env.PIDs, pid)
	if err := writePIDs(state, env.PIDs); err != nil {
		return env, err
	}
	env.KubeHost = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	if err := waitHTTP(ctx, env.KubeHost+"/readyz", env.KubeToken, 120*time.Second); err != nil {
		return env, fmt.Errorf("kube-apiserver did not become ready (log: %s): %w", filepath.Join(logs, "kube-apiserver.log"), err)
	}
	if err := waitHTTP(ctx, env.awsHealthURL(), "", 120*time.Second); err != nil {
		return env, fmt.Errorf("%s did not become healthy (log: %s): %w", env.AWSBackend, filepath.Join(logs, env.AWSBackend+".log"), err)
	}

	env.KubeCAFile = filepath.Join(pki, "apiserver.crt")
	env.Kubeconfig = filepath.Join(state, "kubeconfig")
	if err := writeKubeconfig(env); err != nil {
		return env, err
	}
	if logf != nil {
		logf("test bed up: kube-apiserver %s, AWS emulator %s; installing Flink operator CRDs", env.KubeHost, env.AWSEndpoint)
	}
	if err := InstallCRDs(ctx, root, env); err != nil {
		return env, err
	}
	if err := writeEnvFiles(state, env); err != nil {
		return env, err
	}
	return env, nil
}

// healthy tells whether every process of a loaded env still answers.
func (e Env) healthy(ctx context.Context) bool {
	for _, pid := range e.PIDs {
		if !alive(pid) {
			return false
		}
	}
	// A test bed started before the kubelet certificate existed cannot
	// serve pods/log (kube-apiserver's --kubelet-certificate-authority).
	return len(e.PIDs) == 4 && e.KubeletCertFile != "" &&
		waitHTTP(ctx, e.KubeHost+"/readyz", e.KubeToken, 2*time.Second) == nil &&
		waitHTTP(ctx, e.awsHealthURL(), "", 2*time.Second) == nil
}

// backend is the test bed's AWS backend (kumo for an env written before
// there was a choice).
func (e Env) backend() string {
	if e.AWSBackend == "" {
		return BackendKumo
	}
	return e.AWSBackend
}

// awsHealthURL is the backend's readiness check, through the AWS front:
// kumo's /health, LocalStack's /_localstack/health (localstack/services/
// internal.py, HealthResource), which its gateway serves only after the
// services were loaded (EAGER_SERVICE_LOADING: localstack.go).
func (e Env) awsHealthURL() string {
	if e.backend() == BackendLocalStack {
		return e.AWSEndpoint + "/_localstack/health"
	}
	return e.AWSEndpoint + "/health"
}

func spawn(bin string, args, extraEnv []string, logPath string) (int, error) {
	return spawnWithEnv(bin, args, append(os.Environ(), extraEnv...), logPath)
}

// spawnWithEnv starts bin with exactly env (proc.Spawn).
func spawnWithEnv(bin string, args, env []string, logPath string) (int, error) {
	return proc.Spawn(bin, args, env, logPath)
}

func alive(pid int) bool { return proc.Alive(pid) }

// stopPIDs stops the process groups pids (proc.Stop).
func stopPIDs(pids []int) { proc.Stop(pids) }

func writePIDs(state string, pids []int) error {
	var b strings.Builder
	for _, p := range pids {
		fmt.Fprintf(&b, "%d\n", p)
	}
	return os.WriteFile(filepath.Join(state, "pids"), []byte(b.String()), 0o644)
}

func readPIDs(state string) []int {
	b, err := os.ReadFile(filepath.Join(state, "pids"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

func cleanData(state string) {
	for _, d := range []string{"etcd", "pki", "logs", "env", "env.json", "kubeconfig", "pids", "bin", "s3-requests.jsonl", "localstack", "kcm.pid"} {
		_ = os.RemoveAll(filepath.Join(state, d))
	}
}

func lockFile(path string) (func(), error) { return proc.Lock(path) }

func freePorts(n int) ([]int, error) { return proc.FreePorts(n) }

func waitHTTP(ctx context.Context, url, token string, timeout time.Duration) error {
	return proc.WaitHTTP(ctx, url, token, timeout)
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der := x509.MarshalPKCS1PrivateKey(key)
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeKubeconfig(env Env) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: testbed-admin
  user:
    token: %s
contexts:
- name: testbed
  context:
    cluster: testbed
    user: testbed-admin
current-context: testbed
`, env.KubeHost, env.KubeCAFile, env.KubeToken)
	return os.WriteFile(env.Kubeconfig, []byte(cfg), 0o600)
}

func writeEnvFiles(state string, env Env) error {
	var b strings.Builder
	b.WriteString("# Written by the flinkstate test bed: . .testbed/env to use it from a shell.\n")
	for _, kv := range env.Vars() {
		fmt.Fprintf(&b, "export %s=%q\n", kv[0], kv[1])
	}
	if env.Kubectl != "" { // built by make testbed-up, not by make test
		fmt.Fprintf(&b, "export PATH=%q:\"$PATH\"\n", filepath.Dir(env.Kubectl))
	}
	if err := os.WriteFile(filepath.Join(state, "env"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(state, "env.json"), j, 0o600)
}
