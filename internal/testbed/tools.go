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

// BuildTools builds every pinned tool once into the cache. A tool's folder in
// the cache is keyed by a hash of its go.mod, go.sum, main sources and the Go
// version, so changing a pin rebuilds it and nothing else does.
func BuildTools(ctx context.Context, root string, logf func(string, ...any)) (Binaries, error) {
	cache := CacheDir(root)
	paths := map[string]string{}
	for _, m := range toolModules {
		modDir := filepath.Join(root, "tools", m.dir)
		key, err := moduleKey(modDir)
		if err != nil {
			return Binaries{}, err
		}
		outDir := filepath.Join(cache, "tools", m.dir+"-"+key)
		missing := false
		for name := range m.packages {
			paths[name] = filepath.Join(outDir, name)
			if _, err := os.Stat(paths[name]); err != nil {
				missing = true
			}
		}
		if !missing {
			continue
		}
		if logf != nil {
			logf("building test bed tools from tools/%s into %s (a few minutes on a fresh machine, once)", m.dir, outDir)
		}
		tmp := outDir + ".tmp"
		_ = os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return Binaries{}, err
		}
		args := []string{"build", "-trimpath", "-o", tmp + string(os.PathSeparator)}
		for _, pkg := range m.packages {
			args = append(args, pkg)
		}
		cmd := exec.CommandContext(ctx, goCommand(), args...)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return Binaries{}, fmt.Errorf("building tools/%s: %w\n%s", m.dir, err, out)
		}
		_ = os.RemoveAll(outDir)
		if err := os.Rename(tmp, outDir); err != nil {
			return Binaries{}, err
		}
	}
	return Binaries{
		Etcd:          paths["etcd"],
		KubeAPIServer: paths["kube-apiserver"],
		Kubectl:       paths["kubectl"],
		Kumo:          paths["kumo"],
	}, nil
}

func goCommand() string {
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
		return g
	}
	return "go"
}

func moduleKey(modDir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "tools.go", filepath.Join("etcd", "main.go")} {
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
