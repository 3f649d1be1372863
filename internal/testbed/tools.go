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
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/proc"
)

// toolModule is one pinned module under tools/ and the commands built from it.
type toolModule struct {
	dir      string            // folder under tools/
	cache    string            // folder name in the cache (default: dir)
	packages map[string]string // binary name -> package path (relative to the module or absolute)
	ldflags  string            // go build -ldflags beside -s -w, if any (part of the cache key)
	onDemand bool              // built by Tool when something asks for it, not by BuildTools
	// unoptimized builds with -gcflags=all=-N -l: about 30% less compile
	// time (tfplugindocs: 45 s -> 31 s cold on 2 cores), for tools whose
	// own speed does not matter here; never for the test bed's services.
	unoptimized bool
}

var toolModules = []toolModule{
	{
		dir: "kube",
		packages: map[string]string{
			"kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
			"etcd":           "./etcd",
		},
	},
	{
		// kubectl, for a developer's shell (. .testbed/env) and for the
		// adoption tests, which apply the operator's examples with it as
		// people do (built on their first use, once).
		dir:      "kube",
		cache:    "kubectl",
		packages: map[string]string{"kubectl": "k8s.io/kubernetes/cmd/kubectl"},
		onDemand: true,
	},
	{
		// The real kube-controller-manager of the same Kubernetes release,
		// for its garbage collector (foreground deletions finish as on a
		// cluster: the operator deletes the JobManager Deployment with
		// propagationPolicy Foreground). Built on the first use by the real
		// operator's test bed (make test-operator, make demo with the
		// operator's jars), never by CI, which runs the model.
		dir:      "kcm",
		packages: map[string]string{"kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager"},
		onDemand: true,
	},
	{
		dir:      "kumo",
		packages: map[string]string{"kumo": "github.com/sivchari/kumo/cmd/kumo"},
	},
	{
		// An IAM policy engine this project did not write, run as a program
		// by the least-privilege tests (see tools/policycheck/go.mod).
		dir:         "policycheck",
		packages:    map[string]string{"policycheck": "."},
		onDemand:    true,
		unoptimized: true,
	},
	{
		// Release tooling: goreleaser check and the snapshot build in CI.
		dir:         "goreleaser",
		packages:    map[string]string{"goreleaser": "github.com/goreleaser/goreleaser/v2"},
		onDemand:    true,
		unoptimized: true,
	},
	{
		// The GitHub workflow linter: make actionlint, in CI.
		dir:         "actionlint",
		packages:    map[string]string{"actionlint": "github.com/rhysd/actionlint/cmd/actionlint"},
		onDemand:    true,
		unoptimized: true,
	},
	{
		// golangci-lint, for make golangci (see tools/golangci/go.mod).
		// Built optimized: the lint run's speed is what CI waits on, and
		// the build happens once, in CI's background.
		dir:      "golangci",
		packages: map[string]string{"golangci-lint": "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"},
		onDemand: true,
	},
	{
		// OpenTofu's CLI, for make testacc-tofu (see tools/tofu/go.mod).
		dir:      "tofu",
		packages: map[string]string{"tofu": "github.com/opentofu/opentofu/cmd/tofu"},
		// What OpenTofu's release build sets, so `tofu version` reports
		// the release (v1.10.10) rather than v1.10.10-dev
		// (opentofu version/version.go: dev).
		ldflags:  "-X github.com/opentofu/opentofu/version.dev=no",
		onDemand: true,
		// The CLI's own speed is a small part of an acceptance test (the
		// provider, the test bed and the waits are the rest).
		unoptimized: true,
	},
	{
		// The terraform CLI, which .ci/run builds when a machine has none
		// on its PATH (see tools/terraform/go.mod).
		dir:      "terraform",
		packages: map[string]string{"terraform": "github.com/hashicorp/terraform"},
		// What terraform's release build sets, so `terraform version`
		// reports v1.11.4 rather than v1.11.4-dev (terraform
		// version/version.go: dev; .github/scripts/get_product_version.sh).
		ldflags:     "-X github.com/hashicorp/terraform/version.dev=no",
		onDemand:    true,
		unoptimized: true,
	},
	{
		// terraform 1.8.5, the oldest CLI the docs claim, for make
		// testacc-oldest in CI (see tools/terraform-1.8/go.mod). Named apart
		// from the terraform above so that both can be on hand.
		dir:         "terraform-1.8",
		packages:    map[string]string{"terraform-1.8": "github.com/hashicorp/terraform"},
		ldflags:     "-X github.com/hashicorp/terraform/version.dev=no",
		onDemand:    true,
		unoptimized: true,
	},
}

// Binaries holds the absolute paths of the test bed's commands.
type Binaries struct {
	Etcd, KubeAPIServer, Kubectl, Kumo string
	AWSProxy                           string // built from this repository (cmd/awsproxy), not a pinned tool
	// LocalStackPython is the python of the LocalStack virtualenv
	// (localstack.go), when the test bed uses LocalStack.
	LocalStackPython string
}

// CacheDir is where built tools are kept: $FLINKSTATE_CACHE_DIR, else
// <repo>/.cache (git-ignored).
func CacheDir(root string) string { return proc.CacheDir(root) }

// BuildTools builds every pinned tool of the test bed once into the cache.
func BuildTools(ctx context.Context, root string, logf func(string, ...any)) (Binaries, error) {
	// The modules build side by side: while one downloads its modules or
	// links (mostly one core), the other compiles.
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		paths = map[string]string{}
		errs  []error
	)
	for _, m := range toolModules {
		if m.onDemand {
			continue // built by Tool for what uses it
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := buildModule(ctx, root, m, logf)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			for k, v := range p {
				paths[k] = v
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Binaries{}, err
	}
	return Binaries{
		Etcd:          paths["etcd"],
		KubeAPIServer: paths["kube-apiserver"],
		Kubectl:       builtTool(root, "kubectl"),
		Kumo:          paths["kumo"],
	}, nil
}

// Tool builds (once) the named command of one pinned tool module and returns its path.
// "localstack" installs tools/localstack into a virtualenv and returns its python.
func Tool(ctx context.Context, root, name string) (string, error) {
	if name == BackendLocalStack {
		return LocalStackPython(ctx, root, nil)
	}
	for _, m := range toolModules {
		if _, ok := m.packages[name]; ok {
			paths, err := buildModule(ctx, root, m, nil)
			if err != nil {
				return "", err
			}
			return paths[name], nil
		}
	}
	return "", fmt.Errorf("no pinned tool named %q", name)
}

// buildModule builds a tool module's commands into the cache unless they
// are there (see paths).
func buildModule(ctx context.Context, root string, m toolModule, logf func(string, ...any)) (map[string]string, error) {
	paths, missing, err := m.paths(root)
	if err != nil || !missing {
		return paths, err
	}
	modDir := filepath.Join(root, "tools", m.dir)
	outDir := filepath.Dir(paths[m.names()[0]])
	if logf != nil {
		logf("building test bed tools from tools/%s into %s (a few minutes on a fresh machine, once)", m.dir, outDir)
	}
	tmp := fmt.Sprintf("%s.tmp%d", outDir, os.Getpid())
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// One go build for all of a module's commands: the go command then
	// links one while it still compiles another's packages. -s -w leaves
	// out the symbol table and DWARF, which nobody debugs here and which
	// are much of the link time of kube-apiserver and tofu.
	args := []string{"build", "-trimpath", "-ldflags", strings.TrimSpace("-s -w " + m.ldflags)}
	if m.unoptimized {
		args = append(args, "-gcflags=all=-N -l")
	}
	args = append(args, "-o")
	names := m.names()
	if len(names) == 1 {
		args = append(args, filepath.Join(tmp, names[0]), m.packages[names[0]])
	} else {
		// -o DIR/ names each binary after its package's last element.
		args = append(args, tmp+string(filepath.Separator))
		for _, n := range names {
			if p := m.packages[n]; filepath.Base(p) != n {
				return nil, fmt.Errorf("tools/%s: %s would be built as %s", m.dir, p, filepath.Base(p))
			}
			args = append(args, m.packages[n])
		}
	}
	cmd := exec.CommandContext(ctx, goCommand(), args...)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building %s from tools/%s: %w\n%s", strings.Join(names, ", "), m.dir, err, out)
	}
	_ = os.RemoveAll(outDir)
	if err := os.Rename(tmp, outDir); err != nil {
		return nil, err
	}
	return paths, nil
}

// names lists the module's commands in a stable order.
func (m toolModule) names() []string {
	names := make([]string, 0, len(m.packages))
	for n := range m.packages {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// paths gives where the module's commands are (or would be) cached, and
// whether any is missing. The folder is keyed by a hash of the module's
// go.mod, go.sum, main sources, build flags and the Go version, so
// changing a pin rebuilds it and nothing else does.
func (m toolModule) paths(root string) (map[string]string, bool, error) {
	key, err := moduleKey(filepath.Join(root, "tools", m.dir), m.ldflags, m.unoptimized)
	if err != nil {
		return nil, false, err
	}
	cache := m.cache
	if cache == "" {
		cache = m.dir
	}
	outDir := filepath.Join(CacheDir(root), "tools", cache+"-"+key)
	paths, missing := map[string]string{}, false
	for name := range m.packages {
		paths[name] = filepath.Join(outDir, name)
		if !fileExists(paths[name]) {
			missing = true
		}
	}
	return paths, missing, nil
}

// builtTool is the cached path of a command when it has been built, else "".
func builtTool(root, name string) string {
	for _, m := range toolModules {
		if _, ok := m.packages[name]; ok {
			if paths, _, err := m.paths(root); err == nil && fileExists(paths[name]) {
				return paths[name]
			}
		}
	}
	return ""
}

// goCommand is the go command of the toolchain that built this program: the
// test bed's commands run through go run and go test, built without
// -trimpath, so runtime.GOROOT is that toolchain's root.
func goCommand() string {
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) { //nolint:staticcheck // SA1019: see above
		return g
	}
	return "go"
}

func moduleKey(modDir, ldflags string, unoptimized bool) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "ldflags\x00-s -w %s\x00unoptimized\x00%t\x00", ldflags, unoptimized)
	for _, f := range []string{"go.mod", "go.sum", "tools.go", "main.go", filepath.Join("etcd", "main.go")} {
		b, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%s\x00", f, b)
	}
	ver, err := exec.Command(goCommand(), "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	h.Write([]byte(strings.TrimSpace(string(ver))))
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func fileExists(p string) bool { return proc.FileExists(p) }
