package provider

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

func needAWSEndpoint(t *testing.T) string {
	t.Helper()
	skipUnlessAcc(t)
	ep := os.Getenv("AWS_ENDPOINT_URL")
	if ep == "" {
		t.Skip("needs an AWS endpoint (test bed or FLINKSTATE_TEST_AWS_ENDPOINT)")
	}
	return ep
}

func bucketGone(t *testing.T, bucket string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := testAWS(t).S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)}); !isNotFound(err) {
			return fmt.Errorf("bucket %s still exists after destroy (%v)", bucket, err)
		}
		return nil
	}
}

func bucketExists(t *testing.T, bucket string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := testAWS(t).S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)})
		return err
	}
}

// bucketWithAWS is a configuration of one flinkstate_bucket with the given
// body of the provider's aws block.
func bucketWithAWS(awsBody, bucket string) string {
	return fmt.Sprintf(`
provider "flinkstate" {
  aws {
%s
  }
}

resource "flinkstate_bucket" "state" {
  bucket = %q
}
`, awsBody, bucket)
}

// roleToAssume creates an IAM role with the given trust policy for the
// test's duration and returns its ARN.
func roleToAssume(t *testing.T, prefix, trust string) string {
	t.Helper()
	ctx := context.Background()
	role := randName(prefix)
	out, err := testAWS(t).IAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		t.Fatalf("creating the role to assume: %v", err)
	}
	t.Cleanup(func() { _, _ = testAWS(t).IAM.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(role)}) })
	return aws.ToString(out.Role.Arn)
}

// assume_role: the provider assumes a role through the emulator's STS and
// creates a bucket with the role's credentials.
func TestAccProviderAWS_assumeRole(t *testing.T) {
	endpoint := needAWSEndpoint(t)
	t.Parallel()
	roleARN := roleToAssume(t, "fs-assumed-",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}`)
	bucket := randName("fs-ar-")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             bucketGone(t, bucket),
		Steps: []resource.TestStep{{
			Config: bucketWithAWS(fmt.Sprintf(`
    endpoint = %q
    assume_role {
      role_arn     = %q
      session_name = "flinkstate-acc"
      external_id  = "ext-1"
      duration     = "1h"
      tags         = { purpose = "test" }
    }`, endpoint, roleARN), bucket),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("flinkstate_bucket.state", "id", bucket),
				bucketExists(t, bucket),
			),
		}},
	})
}

// allowed_account_ids / forbidden_account_ids: the account the credentials
// belong to (sts:GetCallerIdentity) decides, and nothing is created.
func TestAccProviderAWS_accountNotAllowed(t *testing.T) {
	endpoint := needAWSEndpoint(t)
	t.Parallel()
	id, err := testAWS(t).STS.GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	account := aws.ToString(id.Account)
	other := "000000000001"
	if account == other {
		other = "000000000002"
	}
	for name, tc := range map[string]struct{ attr, want string }{
		"forbidden":   {fmt.Sprintf("forbidden_account_ids = [%q]", account), `AWS account ` + account + ` is in\s+aws.forbidden_account_ids`},
		"not allowed": {fmt.Sprintf("allowed_account_ids = [%q]", other), `AWS account ` + account + ` is not in\s+aws.allowed_account_ids`},
	} {
		t.Run(name, func(t *testing.T) {
			bucket := randName("fs-acct-")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy:             bucketGone(t, bucket),
				Steps: []resource.TestStep{{
					Config:      bucketWithAWS(fmt.Sprintf("    endpoint = %q\n    %s", endpoint, tc.attr), bucket),
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// kubeTarget is the test cluster's address, token and CA, from the
// kubeconfig the tests use.
func kubeTarget(t *testing.T) (host, token string, ca []byte) {
	t.Helper()
	rest := testKube(t).REST
	if rest.BearerToken == "" {
		t.Skip("the cluster's kubeconfig has no bearer token")
	}
	ca = rest.CAData
	if len(ca) == 0 && rest.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(rest.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	return rest.Host, rest.BearerToken, ca
}

func serviceAccountGone(t *testing.T, ns, name string) resource.TestCheckFunc {
	typed := testTyped(t)
	return func(*terraform.State) error {
		if _, err := typed.CoreV1().ServiceAccounts(ns).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("service account %s/%s still exists after destroy (%v)", ns, name, err)
		}
		return nil
	}
}

func serviceAccountExists(t *testing.T, ns, name string) resource.TestCheckFunc {
	typed := testTyped(t)
	return func(*terraform.State) error {
		_, err := typed.CoreV1().ServiceAccounts(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err
	}
}

// The KUBE_* variables instead of a kubernetes block.
func TestAccProviderKube_environment(t *testing.T) {
	skipUnlessAcc(t)
	host, token, ca := kubeTarget(t)
	ns := testNamespace(t)
	gone, exists := serviceAccountGone(t, ns, "flink-env"), serviceAccountExists(t, ns, "flink-env")
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBE_HOST", host)
	t.Setenv("KUBE_TOKEN", token)
	if len(ca) > 0 {
		t.Setenv("KUBE_CLUSTER_CA_CERT_DATA", string(ca))
	} else {
		t.Setenv("KUBE_INSECURE", "true")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             gone,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "flinkstate" {}

resource "flinkstate_service_account" "sa" {
  namespace = %q
  name      = "flink-env"
}
`, ns),
			Check: exists,
		}},
	})
}

// In a pod: nothing configured, the service account token and CA mounted,
// KUBERNETES_SERVICE_HOST/PORT set. The mount directory is a stand-in (the
// real path needs root), pointed at through kube.ServiceAccountDir.
func TestAccProviderKube_inCluster(t *testing.T) {
	skipUnlessAcc(t)
	host, token, ca := kubeTarget(t)
	if len(ca) == 0 {
		t.Skip("the cluster's kubeconfig has no CA to mount")
	}
	ns := testNamespace(t)
	gone, exists := serviceAccountGone(t, ns, "flink-pod"), serviceAccountExists(t, ns, "flink-pod")
	u, err := url.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	old := kube.ServiceAccountDir
	kube.ServiceAccountDir = dir
	t.Cleanup(func() { kube.ServiceAccountDir = old })
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", u.Hostname())
	t.Setenv("KUBERNETES_SERVICE_PORT", u.Port())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             gone,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "flinkstate_service_account" "sa" {
  namespace = %q
  name      = "flink-pod"
}
`, ns),
			Check: exists,
		}},
	})
}

// aws.default_tags: added to the bucket's and the role's tags, the
// resource's own tag wins on the same key, tags_all shows the merged set,
// and a second plan is empty (reading splits the tags back).
func TestAccProviderAWS_defaultTags(t *testing.T) {
	endpoint := needAWSEndpoint(t)
	t.Parallel()
	ctx := context.Background()
	bucket := randName("fs-dt-")
	role := randName("fs-dt-")
	cfg := fmt.Sprintf(`
provider "flinkstate" {
  aws {
    endpoint = %q
    default_tags {
      tags = { team = "data", env = "dev" }
    }
  }
}

resource "flinkstate_bucket" "state" {
  bucket = %q
  tags   = { env = "prod", app = "orders" }
}

resource "flinkstate_iam_role" "job" {
  name            = %q
  state_store_ids = ["${flinkstate_bucket.state.bucket}/flink/orders"]
  tags            = { env = "prod" }
  pod_identity {
    cluster_name    = "c"
    namespace       = "ns"
    service_account = "sa"
  }
}
`, endpoint, bucket, role)
	want := map[string]string{"team": "data", "env": "prod", "app": "orders"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             bucketGone(t, bucket),
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("flinkstate_bucket.state", "tags_all.%", "3"),
				resource.TestCheckResourceAttr("flinkstate_bucket.state", "tags_all.env", "prod"),
				resource.TestCheckResourceAttr("flinkstate_bucket.state", "tags_all.team", "data"),
				resource.TestCheckResourceAttr("flinkstate_bucket.state", "tags.%", "2"),
				resource.TestCheckResourceAttr("flinkstate_iam_role.job", "tags_all.%", "2"),
				resource.TestCheckResourceAttr("flinkstate_iam_role.job", "tags_all.team", "data"),
				resource.TestCheckResourceAttr("flinkstate_iam_role.job", "tags_all.env", "prod"),
				func(*terraform.State) error {
					out, err := testAWS(t).S3.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
					if err != nil {
						return err
					}
					got := map[string]string{}
					for _, tag := range out.TagSet {
						got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						return fmt.Errorf("bucket tags in S3 %v, want %v", got, want)
					}
					r, err := testAWS(t).IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
					if err != nil {
						return err
					}
					if len(r.Role.Tags) != 2 {
						return fmt.Errorf("role tags in IAM %v, want team=data env=prod", r.Role.Tags)
					}
					return nil
				},
			),
		}, {
			Config:   cfg,
			PlanOnly: true,
		}},
	})
}

// client_certificate / client_key: the test bed's API server trusts a
// client CA (--client-ca-file) and issued a certificate from it; the
// provider authenticates with that certificate alone, no token.
func TestAccProviderKube_clientCertificate(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	if testTarget != "testbed" {
		t.Skip("needs the test bed's client certificate")
	}
	_, env := loadTestbed(t)
	if env.KubeClientCertFile == "" {
		t.Skip("the running test bed predates client certificates: make testbed-down && make testbed-up")
	}
	host, _, ca := kubeTarget(t)
	ns := testNamespace(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             serviceAccountGone(t, ns, "flink-cert"),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "flinkstate" {
  kubernetes {
    host                   = %q
    cluster_ca_certificate = %q
    client_certificate     = file(%q)
    client_key             = file(%q)
  }
}

resource "flinkstate_service_account" "sa" {
  namespace = %q
  name      = "flink-cert"
}
`, host, string(ca), env.KubeClientCertFile, env.KubeClientKeyFile, ns),
			Check: serviceAccountExists(t, ns, "flink-cert"),
		}},
	})
}
