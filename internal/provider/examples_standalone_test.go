package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Every example a user runs as it is (the top-level directories under
// examples/ other than the Registry's resources/, data-sources/ and
// provider/ snippets) passes terraform init and terraform validate exactly as
// written, with the provider built from this tree installed from a local
// filesystem mirror (no network): the tests that
// apply the examples inline them and would miss a missing required_providers
// block or a reference to something that does not exist.
func TestAccExamples_validateStandalone(t *testing.T) {
	skipUnlessAcc(t)
	// Its own build, directories and CLI configuration (cmd.Env, not the
	// process environment): nothing it does touches another test.
	t.Parallel()
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// An unpacked filesystem mirror (Terraform CLI docs, "Provider
	// Installation": HOSTNAME/NAMESPACE/TYPE/VERSION/TARGET/) holding the
	// provider built from this tree under the examples' source address; the
	// host is the default one that address resolves to.
	addr, err := tfaddr.ParseProviderSource("flinkstate/flinkstate")
	if err != nil {
		t.Fatal(err)
	}
	// The provider is installed as the version CHANGELOG.md releases last,
	// which is what the examples' version constraints must accept.
	version := releasedVersion(t, root)
	mirror := filepath.Join(dir, "mirror")
	bin := filepath.Join(mirror, addr.Hostname.String(), addr.Namespace, addr.Type, version, runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-flinkstate_v"+version)
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+version, "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"flinkstate/flinkstate\"]\n  }\n}\n",
		mirror)), 0o600); err != nil {
		t.Fatal(err)
	}
	modules := runnableExamples(t, root)
	n := 0
	for _, m := range modules {
		n++
		t.Run(m, func(t *testing.T) {
			work := filepath.Join(dir, m)
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			tfs, _ := filepath.Glob(filepath.Join(root, "examples", m, "*.tf"))
			for _, f := range tfs {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(work, filepath.Base(f)), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"init", "-backend=false", "-input=false", "-no-color"}, {"validate", "-no-color"}} {
				cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), args...)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %s in examples/%s: %v\n%s", strings.Join(args, " "), m, err, out)
				}
			}
		})
	}
	if n < 3 {
		t.Fatalf("found %d runnable examples, want at least 3 (complete, restore-from-latest-checkpoint, rollback-to-savepoint)", n)
	}
}

// runnableExamples are the root modules under examples/ a user runs as they
// are: a top-level directory with .tf files, or each subdirectory with .tf
// files of one that has none (cross-region-dr/primary and
// cross-region-dr/dr, applied independently); not the Registry's
// resources/, data-sources/ and provider/ snippets.
func runnableExamples(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var modules []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "resources" || e.Name() == "data-sources" || e.Name() == "provider" ||
			e.Name() == "runner-permissions" { // IAM policies and RBAC YAML, no configuration (runner_permissions_test.go)
			continue
		}
		if tfs, _ := filepath.Glob(filepath.Join(root, "examples", e.Name(), "*.tf")); len(tfs) > 0 {
			modules = append(modules, e.Name())
			continue
		}
		subs, _ := filepath.Glob(filepath.Join(root, "examples", e.Name(), "*", "*.tf"))
		if len(subs) == 0 {
			t.Errorf("examples/%s has no .tf file, nor a subdirectory with one", e.Name())
		}
		for _, f := range subs {
			if m := filepath.Join(e.Name(), filepath.Base(filepath.Dir(f))); len(modules) == 0 || modules[len(modules)-1] != m {
				modules = append(modules, m)
			}
		}
	}
	return modules
}

// Every runnable example says in its opening comment what it assumes
// exists, so a user knows what to have before applying it as written.
func TestExamples_sayWhatTheyAssume(t *testing.T) {
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	modules := runnableExamples(t, root)
	if len(modules) < 3 {
		t.Fatalf("found %d runnable examples, want at least 3", len(modules))
	}
	for _, m := range modules {
		b, err := os.ReadFile(filepath.Join(root, "examples", m, "main.tf"))
		if err != nil {
			t.Errorf("examples/%s: %v (a root module opens with main.tf)", m, err)
			continue
		}
		// The opening comment: the lines up to the first that is not one.
		var head []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			head = append(head, line)
		}
		if !strings.Contains(strings.Join(head, "\n"), "# Assumes: ") {
			t.Errorf("examples/%s/main.tf does not say in its opening comment what it assumes exists (a line starting \"# Assumes: \")", m)
		}
	}
}

// releasedVersion is the version of CHANGELOG.md's first release heading
// ("## 0.1.0 (December 2, 2026)"), the Registry providers' form.
func releasedVersion(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## (\d+\.\d+\.\d+) \(`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`CHANGELOG.md has no release heading "## X.Y.Z (Month D, YYYY)"`)
	}
	return string(m[1])
}
