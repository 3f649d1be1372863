package testbed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// LocalStack as the test bed's second AWS backend (FLINKSTATE_TESTBED_AWS=
// localstack): LocalStack's open-source Python package, localstack-core,
// run on the host as a plain process (no Docker, no auth token), behind the
// same AWS front as kumo.
//
// It is installed once into a virtualenv in the cache from
// tools/localstack/requirements.txt, where every package is pinned with ==
// and its hashes (pip --require-hashes). localstack-core 2026.3.0 needs
// Python 3.13 (its own dependency pins resolve only there), which these
// machines have through pyenv; FLINKSTATE_LOCALSTACK_PYTHON names another
// interpreter.

// Backend names of FLINKSTATE_TESTBED_AWS.
const (
	BackendKumo       = "kumo"
	BackendLocalStack = "localstack"
)

// localstackPython is the Python minor version tools/localstack is pinned for.
const localstackPython = "3.13"

// AWSBackendFromEnv reads FLINKSTATE_TESTBED_AWS: kumo (the default) or localstack.
func AWSBackendFromEnv() (string, error) {
	switch b := os.Getenv("FLINKSTATE_TESTBED_AWS"); b {
	case "", BackendKumo:
		return BackendKumo, nil
	case BackendLocalStack:
		return b, nil
	default:
		return "", fmt.Errorf("FLINKSTATE_TESTBED_AWS=%q: want %q (the default) or %q", b, BackendKumo, BackendLocalStack)
	}
}

// findLocalStackPython finds a Python 3.13 interpreter and its version:
// FLINKSTATE_LOCALSTACK_PYTHON, else the first that runs of python3.13 on
// the PATH (a pyenv shim there fails unless 3.13 is selected) and pyenv's.
func findLocalStackPython(ctx context.Context) (string, string, error) {
	var candidates []string
	if p := os.Getenv("FLINKSTATE_LOCALSTACK_PYTHON"); p != "" {
		candidates = []string{p}
	} else {
		if p, err := exec.LookPath("python" + localstackPython); err == nil {
			candidates = append(candidates, p)
		}
		pyenv := os.Getenv("PYENV_ROOT")
		if pyenv == "" {
			if home, err := os.UserHomeDir(); err == nil {
				pyenv = filepath.Join(home, ".pyenv")
			}
		}
		matches, _ := filepath.Glob(filepath.Join(pyenv, "versions", localstackPython+".*", "bin", "python"+localstackPython))
		sort.Sort(sort.Reverse(sort.StringSlice(matches)))
		candidates = append(candidates, matches...)
	}
	var tried []string
	for _, p := range candidates {
		out, err := exec.CommandContext(ctx, p, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])").Output()
		ver := strings.TrimSpace(string(out))
		switch {
		case err != nil:
			tried = append(tried, fmt.Sprintf("%s: %v", p, err))
		case !strings.HasPrefix(ver, localstackPython+"."):
			tried = append(tried, fmt.Sprintf("%s is Python %s", p, ver))
		default:
			return p, ver, nil
		}
	}
	return "", "", fmt.Errorf("LocalStack (tools/localstack) needs Python %s: none found on the PATH or in pyenv (%s); set FLINKSTATE_LOCALSTACK_PYTHON",
		localstackPython, strings.Join(tried, "; "))
}

// LocalStackPython installs (once, cached) the pinned LocalStack into a
// virtualenv under the cache and returns the virtualenv's python, which
// runs it as `python -m localstack.runtime.main`.
func LocalStackPython(ctx context.Context, root string, logf func(string, ...any)) (string, error) {
	base, ver, err := findLocalStackPython(ctx)
	if err != nil {
		return "", err
	}
	reqs := filepath.Join(root, "tools", "localstack", "requirements.txt")
	b, err := os.ReadFile(reqs)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "python\x00%s\x00requirements.txt\x00%s", ver, b)
	dir := filepath.Join(CacheDir(root), "tools", "localstack-"+hex.EncodeToString(h.Sum(nil))[:12])
	python := filepath.Join(dir, "bin", "python")
	done := filepath.Join(dir, ".installed")
	if fileExists(done) {
		return python, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	// Two processes may ask at once (make test starts packages in parallel).
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if fileExists(done) {
		return python, nil
	}
	if logf != nil {
		logf("installing LocalStack from tools/localstack into %s (a few minutes, once)", dir)
	}
	// A virtualenv is not relocatable (its scripts name its folder), so it
	// is made in place; .installed, written last, says it is whole.
	_ = os.RemoveAll(dir)
	steps := [][]string{
		{base, "-m", "venv", dir},
		{python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet",
			"--require-hashes", "-r", reqs},
	}
	for _, s := range steps {
		cmd := exec.CommandContext(ctx, s[0], s[1:]...)
		// Never into the user site (PIP_USER in a developer's environment).
		cmd.Env = append(os.Environ(), "PIP_USER=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("installing LocalStack (%s): %w\n%s", strings.Join(s[1:3], " "), err, out)
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", err
	}
	return python, nil
}

// localstackEnv is LocalStack's environment: the services the provider
// uses, on one loopback port, with nothing reaching out of the machine.
// Each setting is one of LocalStack's own (localstack/config.py).
func localstackEnv(state string, port int) []string {
	var env []string
	for _, kv := range os.Environ() {
		// A developer's AWS settings (or .testbed/env's) are not LocalStack's.
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"OVERRIDE_IN_DOCKER=0", // host mode: not in a container
		"GATEWAY_LISTEN=127.0.0.1:"+strconv.Itoa(port),
		"SERVICES=s3,iam,sts,kms", // kms: flinkstate_bucket's kms_key_arn
		// The services load before the gateway answers at all, not on the
		// first request (localstack/services/plugins.py: an on_infra_start
		// hook; localstack/runtime/runtime.py runs those hooks first).
		"EAGER_SERVICE_LOADING=1",
		// Its files (state kept only in memory: PERSISTENCE is off) under
		// the test bed's folder rather than inside the package.
		"FILESYSTEM_ROOT="+filepath.Join(state, "localstack"),
		"DNS_ADDRESS=0",            // no DNS server of its own
		"DISABLE_EVENTS=1",         // no analytics
		"SKIP_SSL_CERT_DOWNLOAD=1", // no download of its TLS certificate: the front speaks HTTP to it
		"SKIP_INFRA_DOWNLOADS=1",   // nor of any service's binaries
	)
}

// startLocalStack starts LocalStack on port and returns its process id.
func startLocalStack(state, python string, port int) (int, error) {
	if python == "" {
		return 0, errors.New("LocalStack is not installed (testbed tool localstack)")
	}
	if err := os.MkdirAll(filepath.Join(state, "localstack"), 0o755); err != nil {
		return 0, err
	}
	return spawnWithEnv(python, []string{"-m", "localstack.runtime.main"}, localstackEnv(state, port),
		filepath.Join(state, "logs", "localstack.log"))
}
