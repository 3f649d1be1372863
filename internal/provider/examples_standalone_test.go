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
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "resources" || e.Name() == "data-sources" || e.Name() == "provider" ||
			e.Name() == "runner-permissions" { // IAM policies and RBAC YAML, no configuration (runner_permissions_test.go)
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			work := filepath.Join(dir, e.Name())
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			tfs, _ := filepath.Glob(filepath.Join(root, "examples", e.Name(), "*.tf"))
			if len(tfs) == 0 {
				t.Fatalf("examples/%s has no .tf file", e.Name())
			}
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
					t.Fatalf("terraform %s in examples/%s: %v\n%s", strings.Join(args, " "), e.Name(), err, out)
				}
			}
		})
	}
	if n < 3 {
		t.Fatalf("found %d runnable examples, want at least 3 (complete, restore-from-latest-checkpoint, rollback-to-savepoint)", n)
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
