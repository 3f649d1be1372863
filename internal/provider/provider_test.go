package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// The provider's own client construction, without terraform: a bucket in
// the AWS emulator (or LocalStack/AWS) and a ConfigMap in the cluster, each
// created, read back and removed.
func TestProviderClients_createAndRemove(t *testing.T) {
	skipUnlessAcc(t)
	ctx := context.Background()

	aws3, err := awsclient.New(ctx, awsclient.Config{UserAgent: "flinkstate-test"})
	if err != nil {
		t.Fatalf("awsclient.New: %v", err)
	}
	bucket := randName("fs-client-")
	if _, err := aws3.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := aws3.S3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("HeadBucket after create: %v", err)
	}
	if _, err := aws3.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if _, err := aws3.S3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); !isNotFound(err) {
		t.Fatalf("HeadBucket after delete: want not found, got %v", err)
	}

	kc, err := kube.New(kube.Config{ConfigPath: os.Getenv("KUBECONFIG")})
	if err != nil {
		t.Fatalf("kube.New: %v", err)
	}
	typed, err := kubernetes.NewForConfig(kc.REST)
	if err != nil {
		t.Fatalf("typed client from kube.New's configuration: %v", err)
	}
	cms := typed.CoreV1().ConfigMaps("default")
	name := randName("fs-client-")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ConfigMap: %v", err)
	}
	got, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("reading ConfigMap back: %v %v", got, err)
	}
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting ConfigMap: %v", err)
	}
	if _, err := cms.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap after delete: want NotFound, got %v", err)
	}
}

// The provider configured from HCL, both blocks explicit, against the test
// bed (or the external targets): one AWS and one Kubernetes resource.
func TestAccProvider_configuredFromHCL(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	bucket := randName("fs-hcl-")
	cfg := fmt.Sprintf(`
provider "flinkstate" {
  aws {
    region                      = %q
    endpoint                    = %q
    s3_use_path_style           = true
    skip_credentials_validation = false
  }
  kubernetes {
    config_path = %q
  }
}

resource "flinkstate_bucket" "state" {
  bucket = %q
}

resource "flinkstate_service_account" "sa" {
  namespace = %q
  name      = "flink-hcl"
}
`, os.Getenv("AWS_REGION"), os.Getenv("AWS_ENDPOINT_URL"), os.Getenv("KUBECONFIG"), bucket, ns)
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Skip("needs an AWS endpoint (test bed or FLINKSTATE_TEST_AWS_ENDPOINT)")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := testAWS(t).S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)}); !isNotFound(err) {
				return fmt.Errorf("bucket %s still exists after destroy (%v)", bucket, err)
			}
			if _, err := testTyped(t).CoreV1().ServiceAccounts(ns).Get(context.Background(), "flink-hcl", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("service account still exists after destroy (%v)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("flinkstate_bucket.state", tfjsonPath("id"), knownvalue.StringExact(bucket)),
				statecheck.ExpectKnownValue("flinkstate_service_account.sa", tfjsonPath("id"), knownvalue.StringExact(ns+"/flink-hcl")),
				expectAPI(func() error {
					if _, err := testAWS(t).S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
						return fmt.Errorf("bucket not in the emulator: %v", err)
					}
					_, err := testTyped(t).CoreV1().ServiceAccounts(ns).Get(context.Background(), "flink-hcl", metav1.GetOptions{})
					return err
				}),
			},
		}},
	})
}

// countingServer answers every request with 503 and counts them.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		t.Logf("unexpected request during plan: %s %s", r.Method, r.URL)
		http.Error(w, "no requests expected during plan", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Planning creates needs no API: with the cluster's host unknown (it comes
// from a resource in the same configuration) the plan succeeds, and with
// known endpoints that count requests, none is made.
func TestAccProvider_planWithoutAPICalls(t *testing.T) {
	skipUnlessAcc(t)
	kubeSrv, kubeCalls := countingServer(t)
	awsSrv, awsCalls := countingServer(t)
	resources := `
resource "flinkstate_bucket" "state" {
  bucket = "fs-plan-only"
}

resource "flinkstate_service_account" "sa" {
  namespace     = "data-processing"
  name          = "flink-orders"
  irsa_role_arn = "arn:aws:iam::123456789012:role/flink-orders"
  role_binding {
    role_name = "flink"
  }
}

resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = "flink/orders"
}

resource "flinkstate_deployment" "orders" {
  namespace       = "data-processing"
  name            = "orders"
  image           = "flink:2.2.1-java17"
  flink_version   = "2.2.1"
  service_account = flinkstate_service_account.sa.name
  identity        = "irsa"
  job_manager {
    memory = "2048m"
    cpu    = 1
  }
  task_manager {
    memory     = "2048m"
    cpu        = 1
    task_slots = 2
  }
  job {
    jar_uri      = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
    parallelism  = 2
    upgrade_mode = "last-state"
  }
  state {
    store_id = flinkstate_state_store.orders.id
  }
}

resource "flinkstate_snapshot" "before_upgrade" {
  namespace       = "data-processing"
  deployment_name = flinkstate_deployment.orders.name
  triggers        = { image = flinkstate_deployment.orders.image }
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// The cluster does not exist yet: its endpoint is unknown until apply.
				Config: `
resource "terraform_data" "cluster" {
  input = "pretend this creates an EKS cluster"
}

provider "flinkstate" {
  aws {
    region   = "us-east-1"
    endpoint = "` + awsSrv.URL + `"
  }
  kubernetes {
    host  = "https://${terraform_data.cluster.id}.eks.invalid"
    token = "unknown-until-apply"
  }
}
` + resources,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// Known endpoints that would count every request.
				Config: `
provider "flinkstate" {
  aws {
    region   = "us-east-1"
    endpoint = "` + awsSrv.URL + `"
  }
  kubernetes {
    host     = "` + kubeSrv.URL + `"
    token    = "t"
  }
}
` + resources,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
	if n := kubeCalls.Load(); n != 0 {
		t.Errorf("planning creates made %d Kubernetes API requests, want 0", n)
	}
	if n := awsCalls.Load(); n != 0 {
		t.Errorf("planning creates made %d AWS API requests, want 0", n)
	}
}

// Contradictory or malformed provider settings are refused at plan time,
// naming the attribute.
func TestProvider_invalidSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, block string
		want        string
	}{
		{"token and exec", `kubernetes {
    host  = "https://example.invalid"
    token = "t"
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", "c"]
    }
  }`, `(?s)kubernetes\.exec.*token|token.*kubernetes\.exec`},
		{"insecure and CA", `kubernetes {
    host                   = "https://example.invalid"
    insecure               = true
    cluster_ca_certificate = "-----BEGIN CERTIFICATE-----"
  }`, `(?s)cluster_ca_certificate.*insecure`},
		{"exec without command", `kubernetes {
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
    }
  }`, `(?s)kubernetes\.exec.*command`},
		{"bad exec api_version", `kubernetes {
    exec {
      api_version = "v1"
      command     = "aws"
    }
  }`, `(?s)kubernetes\.exec\.api_version`},
		{"endpoint not a URL", `aws {
    endpoint = "localhost:4566"
  }`, `(?s)aws\.endpoint.*http`},
		{"host not a URL", `kubernetes {
    host = "not a url"
  }`, `(?s)kubernetes\.host`},
		{"both assume_role blocks", `aws {
    assume_role {
      role_arn = "arn:aws:iam::123456789012:role/a"
    }
    assume_role_with_web_identity {
      role_arn                = "arn:aws:iam::123456789012:role/b"
      web_identity_token_file = "/var/run/secrets/token"
    }
  }`, `(?s)aws\.assume_role.*assume_role_with_web_identity|assume_role_with_web_identity.*aws\.assume_role`},
		{"assume_role without role_arn", `aws {
    assume_role {
      session_name = "s"
    }
  }`, `(?s)aws\.assume_role.*role_arn`},
		{"assume_role bad duration", `aws {
    assume_role {
      role_arn = "arn:aws:iam::123456789012:role/a"
      duration = "5m"
    }
  }`, `(?s)aws\.assume_role\.duration.*between 15m and 12h`},
		{"assume_role bad role_arn", `aws {
    assume_role {
      role_arn = "arn:aws:iam::123456789012:user/a"
    }
  }`, `(?s)aws\.assume_role\.role_arn`},
		{"web identity without token file", `aws {
    assume_role_with_web_identity {
      role_arn = "arn:aws:iam::123456789012:role/b"
    }
  }`, `(?s)aws\.assume_role_with_web_identity.*web_identity_token_file`},
		{"unknown retry mode", `aws {
    retry_mode = "legacy"
  }`, `(?s)aws\.retry_mode.*standard.*adaptive`},
		{"max_retries zero", `aws {
    max_retries = 0
  }`, `(?s)aws\.max_retries`},
		{"allowed and forbidden accounts", `aws {
    allowed_account_ids   = ["123456789012"]
    forbidden_account_ids = ["210987654321"]
  }`, `(?s)allowed_account_ids.*forbidden_account_ids`},
		{"account id not 12 digits", `aws {
    allowed_account_ids = ["1234"]
  }`, `(?s)aws\.allowed_account_ids.*12-digit`},
		{"endpoints.s3 not a URL", `aws {
    endpoints {
      s3 = "localhost:4566"
    }
  }`, `(?s)aws\.endpoints\.s3`},
		{"client_certificate without key", `kubernetes {
    host               = "https://example.invalid"
    client_certificate = "-----BEGIN CERTIFICATE-----"
  }`, `(?s)kubernetes\.client_key`},
		{"config_path and config_paths", `kubernetes {
    config_path  = "a"
    config_paths = ["b"]
  }`, `(?s)kubernetes\.config_paths?.*config_paths?`},
		{"proxy_url not a URL", `kubernetes {
    host      = "https://example.invalid"
    proxy_url = "ftp://proxy"
  }`, `(?s)kubernetes\.proxy_url`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config: "provider \"flinkstate\" {\n  " + tc.block + "\n}\n" + `
resource "flinkstate_service_account" "sa" {
  namespace = "ns"
  name      = "sa"
}`,
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// The EKS case: exec.args and exec.env are known collections holding one
// element that is unknown until apply (the cluster is created in the same
// run). The plan succeeds and makes no API request.
func TestProvider_planUnknownExecElements(t *testing.T) {
	t.Parallel()
	kubeSrv, kubeCalls := countingServer(t)
	awsSrv, awsCalls := countingServer(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "cluster" {
  input = "pretend this creates an EKS cluster"
}

provider "flinkstate" {
  aws {
    region   = "us-east-1"
    endpoint = "` + awsSrv.URL + `"
  }
  kubernetes {
    host = "` + kubeSrv.URL + `"
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", terraform_data.cluster.id]
      env         = { AWS_PROFILE = "p", CLUSTER = terraform_data.cluster.id }
    }
  }
}

resource "flinkstate_bucket" "state" {
  bucket = "fs-plan-unknown-exec"
}

resource "flinkstate_service_account" "sa" {
  namespace = "data-processing"
  name      = "flink-orders"
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
	if n := kubeCalls.Load(); n != 0 {
		t.Errorf("planning creates made %d Kubernetes API requests, want 0", n)
	}
	if n := awsCalls.Load(); n != 0 {
		t.Errorf("planning creates made %d AWS API requests, want 0", n)
	}
}

// The same audit for every other collection in the provider block: a
// known list, set or map with one element unknown until apply plans
// without error and without API requests.
func TestProvider_planUnknownCollectionElements(t *testing.T) {
	t.Parallel()
	kubeSrv, kubeCalls := countingServer(t)
	awsSrv, awsCalls := countingServer(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "later" {
  input = "known only after apply"
}

provider "flinkstate" {
  aws {
    region                   = "us-east-1"
    endpoint                 = "` + awsSrv.URL + `"
    shared_config_files      = ["/dev/null", "/tmp/${terraform_data.later.id}"]
    shared_credentials_files = ["/tmp/${terraform_data.later.id}"]
    allowed_account_ids      = ["123456789012", substr("${terraform_data.later.id}000000000000", 0, 12)]
    assume_role {
      role_arn = "arn:aws:iam::123456789012:role/r"
      tags     = { run = terraform_data.later.id }
    }
  }
  kubernetes {
    config_paths = ["/dev/null", "/tmp/${terraform_data.later.id}"]
    host         = "` + kubeSrv.URL + `"
  }
}

resource "flinkstate_bucket" "state" {
  bucket = "fs-plan-unknown-elems"
}

resource "flinkstate_service_account" "sa" {
  namespace = "data-processing"
  name      = "flink-orders"
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
	if n := kubeCalls.Load(); n != 0 {
		t.Errorf("planning creates made %d Kubernetes API requests, want 0", n)
	}
	if n := awsCalls.Load(); n != 0 {
		t.Errorf("planning creates made %d AWS API requests, want 0", n)
	}
}
