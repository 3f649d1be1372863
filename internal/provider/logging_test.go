package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// The provider's DEBUG log, as a user gets it (TF_LOG_PROVIDER=DEBUG,
// TF_LOG_PATH, the provider binary run by the terraform CLI through a
// dev_overrides block): it holds the AWS and Kubernetes API calls of an
// apply and a destroy, and neither the Kubernetes token nor the AWS secret
// key nor any signature.
func TestAccProviderLog_apiCallsWithoutSecrets(t *testing.T) {
	skipUnlessAcc(t)
	// Its own build, directories and CLI configuration (cmd.Env, not the
	// process environment): nothing it does touches another test.
	t.Parallel()
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Skip("needs an AWS endpoint (test bed or FLINKSTATE_TEST_AWS_ENDPOINT) that accepts any credentials")
	}
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "terraform-provider-flinkstate"), ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "flinkstate/flinkstate" = %q
  }
  direct {}
}
`, filepath.Join(dir, "bin"))), 0o600); err != nil {
		t.Fatal(err)
	}
	rest := testKube(t).REST
	token := rest.BearerToken
	if token == "" {
		t.Skip("the cluster's kubeconfig has no bearer token to look for")
	}
	secretKey := randName("secret-key-")
	ns := testNamespace(t)
	bucket := randName("fs-log-")
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(fmt.Sprintf(`
terraform {
  required_providers {
    flinkstate = { source = "flinkstate/flinkstate" }
  }
}

provider "flinkstate" {
  aws {
    endpoint = %q
  }
  kubernetes {
    host     = %q
    token    = %q
    insecure = true
  }
}

resource "flinkstate_bucket" "state" {
  bucket = %q
}

resource "flinkstate_service_account" "sa" {
  namespace = %q
  name      = "flink-log"
}
`, os.Getenv("AWS_ENDPOINT_URL"), rest.Host, token, bucket, ns)), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "provider.log")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_LOG_PROVIDER=DEBUG", "TF_LOG_PATH="+logFile,
			"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "AWS_SECRET_ACCESS_KEY="+secretKey, "AWS_ACCESS_KEY_ID=AKIDLOGTEST")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(cmd.Path), strings.Join(args, " "), err, out)
		}
	}
	run("apply", "-auto-approve", "-input=false", "-no-color")
	run("destroy", "-auto-approve", "-input=false", "-no-color")

	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	// Fields come in any order: a line must hold every part.
	for _, want := range [][]string{
		{"API request:", "@module=flinkstate.aws", "aws.operation=CreateBucket", "http.method=PUT"},
		{"API response:", "@module=flinkstate.aws", "aws.operation=CreateBucket", "http.status=200"},
		{"API request:", "@module=flinkstate.aws", "aws.operation=GetCallerIdentity"},
		{"API request:", "@module=flinkstate.aws", "aws.operation=DeleteBucket"},
		// A create is a POST to the collection (it never adopts an existing object).
		{"API request:", "@module=flinkstate.kubernetes", "http.method=POST", "/serviceaccounts?"},
		{"API response:", "@module=flinkstate.kubernetes", "http.status=201", "/serviceaccounts?"},
		{"API request:", "@module=flinkstate.kubernetes", "http.method=DELETE", "serviceaccounts/flink-log"},
	} {
		if !hasLineWithAll(log, want...) {
			t.Errorf("the provider's DEBUG log has no line with all of %q", want)
		}
	}
	for name, secret := range map[string]string{"Kubernetes token": token, "AWS secret key": secretKey,
		"AWS signature": "Signature=", "bearer header": "Bearer "} {
		if strings.Contains(log, secret) {
			t.Errorf("the provider's DEBUG log contains the %s", name)
		}
	}
	if t.Failed() {
		t.Logf("log: %d bytes", len(b))
		lines := strings.Split(log, "\n")
		for _, l := range lines {
			if strings.Contains(l, "API re") {
				t.Log(l)
			}
		}
	}
}

func hasLineWithAll(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
