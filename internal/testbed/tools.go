package testbed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// toolModule is one pinned module under tools/ and the commands built from it.
type toolModule struct {
	dir      string            // folder under tools/
	packages map[string]string // binary name -> package path (relative to the module or absolute)
	ldflags  string            // go build -ldflags, if any (part of the cache key)
}

var toolModules = []toolModule{
	{
		dir: "kube",
		packages: map[string]string{
			"kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
			"kubectl":        "k8s.io/kubernetes/cmd/kubectl",
			"etcd":           "./etcd",
		},
	},
	{
		dir:      "kumo",
		packages: map[string]string{"kumo": "github.com/sivchari/kumo/cmd/kumo"},
	},
	{
		// An IAM policy engine this project did not write, run as a program
		// by the least-privilege tests (see tools/policycheck/go.mod).
		dir:      "policycheck",
		packages: map[string]string{"policycheck": "."},
	},
	{
		// Release tooling: goreleaser check and the snapshot build in CI.
		dir:      "goreleaser",
		packages: map[string]string{"goreleaser": "github.com/goreleaser/goreleaser/v2"},
	},
	{
		// OpenTofu's CLI, for make testacc-tofu (see tools/tofu/go.mod).
		dir:      "tofu",
		packages: map[string]string{"tofu": "github.com/opentofu/opentofu/cmd/tofu"},
		// What OpenTofu's release build sets, so `tofu version` reports
		// the release (v1.10.10) rather than v1.10.10-dev
		// (opentofu version/version.go: dev).
		ldflags: "-X github.com/opentofu/opentofu/version.dev=no",
	},
}

// Binaries holds the absolute paths of the test bed's commands.
type Binaries struct {
	Etcd, KubeAPIServer, Kubectl, Kumo string
}

// CacheDir is where built tools are kept: $FLINKSTATE_CACHE_DIR, else
// <repo>/.cache (git-ignored).
func CacheDir(root string) string {
	if d := os.Getenv("FLINKSTATE_CACHE_DIR"); d != "" {
		return d
	}
	return filepath.Join(root, ".cache")
}

// BuildTools builds every pinned tool of the test bed once into the cache.
func BuildTools(ctx context.Context, root string, logf func(string, ...any)) (Binaries, error) {
	paths := map[string]string{}
	for _, m := range toolModules {
		if m.dir == "policycheck" || m.dir == "goreleaser" || m.dir == "tofu" {
			continue // built on demand (Tool) by what uses it
		}
		p, err := buildModule(ctx, root, m, logf)
		if err != nil {
			return Binaries{}, err
		}
		for k, v := range p {
			paths[k] = v
		}
	}
	return Binaries{
		Etcd:          paths["etcd"],
		KubeAPIServer: paths["kube-apiserver"],
		Kubectl:       paths["kubectl"],
		Kumo:          paths["kumo"],
	}, nil
}

// Tool builds (once) the named command of one pinned tool module and returns its path.
func Tool(ctx context.Context, root, name string) (string, error) {
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

// buildModule builds a tool module's commands into the cache unless they are
// there. The folder is keyed by a hash of the module's go.mod, go.sum, main
// sources and the Go version, so changing a pin rebuilds it and nothing
// else does.
func buildModule(ctx context.Context, root string, m toolModule, logf func(string, ...any)) (map[string]string, error) {
	modDir := filepath.Join(root, "tools", m.dir)
	key, err := moduleKey(modDir, m.ldflags)
	if err != nil {
		return nil, err
	}
	outDir := filepath.Join(CacheDir(root), "tools", m.dir+"-"+key)
	paths := map[string]string{}
	missing := false
	for name := range m.packages {
		paths[name] = filepath.Join(outDir, name)
		if !fileExists(paths[name]) {
			missing = true
		}
	}
	if !missing {
		return paths, nil
	}
	if logf != nil {
		logf("building test bed tools from tools/%s into %s (a few minutes on a fresh machine, once)", m.dir, outDir)
	}
	tmp := fmt.Sprintf("%s.tmp%d", outDir, os.Getpid())
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for name, pkg := range m.packages {
		args := []string{"build", "-trimpath", "-o", filepath.Join(tmp, name)}
		if m.ldflags != "" {
			args = append(args, "-ldflags", m.ldflags)
		}
		cmd := exec.CommandContext(ctx, goCommand(), append(args, pkg)...)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s from tools/%s: %w\n%s", name, m.dir, err, out)
		}
	}
	_ = os.RemoveAll(outDir)
	if err := os.Rename(tmp, outDir); err != nil {
		return nil, err
	}
	return paths, nil
}

func goCommand() string {
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
		return g
	}
	return "go"
}

func moduleKey(modDir, ldflags string) (string, error) {
	h := sha256.New()
	if ldflags != "" {
		fmt.Fprintf(h, "ldflags\x00%s\x00", ldflags)
	}
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

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
