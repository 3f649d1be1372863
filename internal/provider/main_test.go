package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// testTarget says where the acceptance tests run: "testbed" (started here,
// or one started earlier with make testbed-up) or "external" (kind,
// LocalStack, or real EKS/AWS, named by FLINKSTATE_TEST_KUBECONFIG and/or
// FLINKSTATE_TEST_AWS_ENDPOINT).
var testTarget string

// testProviderFactories serves the provider in-process to the terraform CLI.
var testProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"flinkstate": NewProtocol6WithError("test"),
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run()
	}
	// Never fall back to the EC2 metadata endpoint for credentials.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	if err := findTerraform(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := providerHostForCLI(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubeconfig, awsEndpoint := os.Getenv("FLINKSTATE_TEST_KUBECONFIG"), os.Getenv("FLINKSTATE_TEST_AWS_ENDPOINT")
	if kubeconfig != "" || awsEndpoint != "" {
		testTarget = "external"
		if kubeconfig != "" {
			os.Setenv("KUBECONFIG", kubeconfig)
		}
		if awsEndpoint != "" {
			os.Setenv("AWS_ENDPOINT_URL", awsEndpoint)
		}
		fmt.Fprintf(os.Stderr, "acceptance tests against external targets: KUBECONFIG=%s AWS_ENDPOINT_URL=%s\n",
			os.Getenv("KUBECONFIG"), os.Getenv("AWS_ENDPOINT_URL"))
		return runCheckingPermissions(m)
	}
	testTarget = "testbed"
	root, err := testbed.FindRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	env, started, err := testbed.Up(ctx, root, func(f string, a ...any) { fmt.Fprintf(os.Stderr, "testbed: "+f+"\n", a...) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test bed:", err)
		return 1
	}
	if started {
		// Started for this run only: stop it afterwards, leaving no process.
		defer func() {
			if err := testbed.Down(root); err != nil {
				fmt.Fprintln(os.Stderr, "stopping the test bed:", err)
			}
		}()
	}
	for _, kv := range env.Vars() {
		os.Setenv(kv[0], kv[1])
	}
	// Ambient settings of the developer's machine must not leak in.
	for _, v := range []string{"AWS_PROFILE", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_IAM", "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL_EKS",
		"AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
		"KUBE_CONFIG_PATH", "KUBE_CONFIG_PATHS", "KUBE_CTX", "KUBE_HOST", "KUBE_TOKEN", "KUBE_CLUSTER_CA_CERT_DATA",
		"KUBE_CLIENT_CERT_DATA", "KUBE_CLIENT_KEY_DATA", "KUBE_INSECURE", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"} {
		os.Unsetenv(v)
	}
	return runCheckingPermissions(m)
}

// runCheckingPermissions runs the acceptance tests recording every AWS
// operation and Kubernetes request the provider makes (its own call log,
// and the S3 requests the test bed's AWS front logged with the provider's
// User-Agent), and fails the run
// when one is not covered by the runner permissions the docs give
// (examples/runner-permissions, docs/guides/runner-permissions.md).
func runCheckingPermissions(m *testing.M) int {
	calls := recordAPICalls()
	code := m.Run()
	if err := calls.recordS3Log(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: reading the AWS front's S3 request log:", err)
		return 1
	}
	if missing := calls.uncovered(); len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: the documented runner permissions do not cover calls the provider made in this run:\n  "+
			strings.Join(missing, "\n  "))
		return 1
	}
	return code
}

// findTerraform makes sure terraform-plugin-testing finds a terraform CLI
// instead of trying to download one (which fails without network).
func findTerraform() error {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("TF_ACC_TERRAFORM_PATH=%s: %w", p, err)
		}
		return nil
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		return fmt.Errorf("acceptance tests need the terraform CLI (>= 1.0): put terraform on PATH or set TF_ACC_TERRAFORM_PATH=/path/to/terraform")
	}
	os.Setenv("TF_ACC_TERRAFORM_PATH", p)
	return nil
}

// providerHostForCLI registers the in-process provider under OpenTofu's
// registry host when TF_ACC_TERRAFORM_PATH is OpenTofu: terraform-plugin-testing
// names it <host>/-/flinkstate, and OpenTofu refuses the "-" namespace on
// terraform's default host. An explicit TF_ACC_PROVIDER_HOST wins.
func providerHostForCLI() error {
	if os.Getenv("TF_ACC_PROVIDER_HOST") != "" {
		return nil
	}
	cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", os.Getenv("TF_ACC_TERRAFORM_PATH"), err)
	}
	if strings.HasPrefix(string(out), "OpenTofu") {
		os.Setenv("TF_ACC_PROVIDER_HOST", strings.Join([]string{"registry", "opentofu", "org"}, "."))
	}
	return nil
}

// skipUnlessAcc skips tests that need real services when TF_ACC is unset.
func skipUnlessAcc(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc)")
	}
}
