package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// examples/cross-region-dr applied on the test bed as the guide's runbook
// has it, each root module on its own: primary/ (region A's stack, the
// replica bucket in us-west-2 and the replication) is applied; region A
// takes a savepoint, which replication brings to the replica; dr/, in a
// terraform run and state of its own, is applied in peace time
// (failover = false: the standby's store, role and ServiceAccount); then
// region A is lost (its AWS endpoint and its API server stop answering) and
// dr/ is applied with failover = true: it creates the standby deployment
// only, which restores from the savepoint in the replica.
//
// Region A is what primary/'s region-A provider reaches through two
// testbed.FaultProxy: one in front of the AWS endpoint, one in front of the
// API server; Stop makes both unreachable. primary/'s region-B provider (the
// replica bucket: an alias in the example, served here under a second local
// name, flinkstatedr, as replProviderFactories says why) and dr/ reach the
// AWS endpoint and the API server without them. The two clusters become two
// namespaces of the test bed's one, and the names are the test's own.
//
// dr/ may not need region A: its AWS requests go through a recording proxy
// that refuses (and the test reports) any request signed for another region
// than us-west-2, except IAM's, and any naming region A's bucket. IAM is
// global, its control plane in us-east-1 (AWS whitepaper "AWS Fault
// Isolation Boundaries", "Global services"): the test bed serves it on its
// one endpoint, and dr/'s role goes there, not through region A's proxy; it
// is created in peace time, as the guide says. Region A's two proxies count the
// connections they refuse while stopped, and the test requires none from
// dr/'s failover.
func TestAccExample_crossRegionDR(t *testing.T) {
	skipUnlessAcc(t)
	if testTarget != "testbed" {
		t.Skip("region A's loss is simulated with fault proxies in front of the local test bed")
	}
	_, env := loadTestbed(t)
	kubeA, err := testbed.NewFaultProxy(env.KubeHost)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kubeA.Close() })
	kubeconfigA := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.KubeconfigVia(kubeA.URL("https"), kubeconfigA); err != nil {
		t.Fatal(err)
	}
	awsA, err := testbed.NewFaultProxy(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = awsA.Close() })

	nsA, nsB := testNamespace(t), testNamespace(t)
	startOperator(t, nsA)
	// Region B's operator reads the replica in us-west-2.
	startOperatorWith(t, nsB, func(op *testbed.Operator) { op.S3 = testAWSIn(t, testbed.SecondRegion).S3 })
	src, dst := randName("ex-dr-"), randName("ex-dr-replica-")
	roleA, roleB, replRole := randName("ex-dr-"), randName("ex-dr-b-"), randName("ex-dr-repl-")
	oidc := testOIDCProvider(t)

	// Each module's required_providers block names the published source;
	// the test serves the provider under its local names instead.
	primary := example(t, "cross-region-dr/primary/main.tf", exampleTerraformBlock, "",
		"    region = \"us-east-1\"\n", fmt.Sprintf("    region   = \"us-east-1\"\n    endpoint = %q\n", awsA.URL("http")),
		"    config_context = \"flink-us-east-1\"\n", fmt.Sprintf("    config_path = %q\n", kubeconfigA),
		"provider \"flinkstate\" {\n  alias = \"replica\"\n", "provider \"flinkstatedr\" {\n",
		"flinkstate.replica", "flinkstatedr",
		`name = "flink-orders"`, fmt.Sprintf("name = %q", roleA),
		`role_name          = "flink-orders-replication"`, fmt.Sprintf("role_name          = %q", replRole),
		`namespace = "data-processing"`, fmt.Sprintf("namespace = %q", nsA),
		// The test writes a savepoint: buckets and the store may be
		// destroyed non-empty.
		"  versioning = true\n}", "  versioning = true\n  force_destroy = true\n}",
		"  prefix = local.prefix\n}", "  prefix = local.prefix\n  force_destroy = true\n}")
	// dr/ reaches AWS through a proxy that refuses what is not region B's:
	// a request signed for another region (IAM's excepted), or one naming
	// region A's bucket.
	drAWS := newFaultProxy(t)
	var mu sync.Mutex
	seen := map[string]int{} // "phase service region"
	phase := "peace"
	var outside []string
	intercept := func(w http.ResponseWriter, r *http.Request) bool {
		service, region := sigV4Scope(r)
		mu.Lock()
		defer mu.Unlock()
		seen[phase+" "+service+" "+region]++
		// Path-style S3 (a custom endpoint's default) names the bucket
		// first.
		namesA := service == "s3" && (r.URL.Path == "/"+src || strings.HasPrefix(r.URL.Path, "/"+src+"/"))
		if (region == testbed.SecondRegion || service == "iam") && !namesA {
			return false
		}
		outside = append(outside, fmt.Sprintf("%s %s (%s, signed for %q)", r.Method, r.URL.Path, service, region))
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	drAWS.intercept.Store(&intercept)
	dr := example(t, "cross-region-dr/dr/main.tf", exampleTerraformBlock, "",
		"    region = \"us-west-2\"\n", fmt.Sprintf("    region   = \"us-west-2\"\n    endpoint = %q\n", drAWS.URL),
		"  kubernetes {\n    config_context = \"flink-us-west-2\"\n  }\n", "",
		`name = "flink-orders-dr"`, fmt.Sprintf("name = %q", roleB),
		`namespace = "data-processing"`, fmt.Sprintf("namespace = %q", nsB),
		"  prefix = \"flink/orders-dr\"\n}", "  prefix = \"flink/orders-dr\"\n  force_destroy = true\n}")

	meta, file, size := realSavepoint(t)
	sp := "flink/orders/savepoints/savepoint-2d6fb8-00000000000a"
	primaryVars := config.Variables{"bucket_name": config.StringVariable(src), "replica_bucket_name": config.StringVariable(dst),
		"oidc_provider_arn": config.StringVariable(oidc)}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return replFixture{role: replRole}.roleGone(t)
		},
		Steps: []resource.TestStep{
			{
				Config:          primary,
				ConfigVariables: primaryVars,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_bucket_replication.state", tfjsonPath("destination_region"), knownvalue.StringExact(testbed.SecondRegion)),
					// What dr/ is given.
					statecheck.ExpectKnownOutputValue("replica_bucket", knownvalue.StringExact(dst)),
					statecheck.ExpectKnownOutputValue("replica_prefix", knownvalue.StringExact("flink/orders")),
					// Region A went through its proxies.
					expectAPI(func() error {
						if awsA.ClientBytes() == 0 || kubeA.ClientBytes() == 0 {
							return fmt.Errorf("primary/ did not reach region A through its proxies (AWS %d bytes, API server %d bytes)", awsA.ClientBytes(), kubeA.ClientBytes())
						}
						return nil
					}),
				},
			},
			{
				// Region A took a savepoint (the test writes a real one
				// into its savepoint dir); replication brings it to the
				// replica. dr/, a terraform configuration and state of its
				// own, is applied in peace time (failover = false); then
				// region A is lost and dr/ fails over (and is destroyed at
				// its end, region A still gone). Region A comes back for
				// primary/'s last plan and its destroy.
				PreConfig: func() {
					ctx := context.Background()
					for k, body := range map[string][]byte{sp + "/" + file: make([]byte, size), sp + "/_metadata": meta} {
						if _, err := testAWS(t).S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(src), Key: aws.String(k), Body: strings.NewReader(string(body))}); err != nil {
							t.Fatal(err)
						}
					}
					if err := waitReplicationIdle(t); err != nil {
						t.Fatal(err)
					}
					wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					defer cancel()
					if err := waitArrived(wctx, testAWSIn(t, testbed.SecondRegion).S3, dst, []string{sp + "/" + file, sp + "/_metadata"}, 30*time.Second); err != nil {
						t.Fatal(err)
					}
					drVars := func(failover bool) config.Variables {
						return config.Variables{"replica_bucket": config.StringVariable(dst), "replica_prefix": config.StringVariable("flink/orders"),
							"oidc_provider_arn": config.StringVariable(oidc), "failover": config.BoolVariable(failover)}
					}
					var refusedBefore int64
					var failedOver time.Time
					ok := t.Run("dr", func(t *testing.T) {
						resource.Test(t, resource.TestCase{
							ProtoV6ProviderFactories: testProviderFactories,
							CheckDestroy: func(*terraform.State) error {
								if _, err := testAWS(t).IAM.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(roleB)}); !isNotFound(err) {
									return fmt.Errorf("role %s exists (%v)", roleB, err)
								}
								return nil
							},
							Steps: []resource.TestStep{
								{
									// Peace time: the standby's store, role and
									// ServiceAccount, no deployment.
									Config:          dr,
									ConfigVariables: drVars(false),
									ConfigStateChecks: []statecheck.StateCheck{
										statecheck.ExpectKnownOutputValue("passed_over", knownvalue.ListSizeExact(0)),
										expectAPI(func() error {
											if _, err := getDeployment(t, nsB, "orders"); err == nil {
												return fmt.Errorf("a standby FlinkDeployment %s/orders exists before failover", nsB)
											}
											return nil
										}),
									},
								},
								{
									// Region A is lost; the failover creates the
									// deployment only.
									PreConfig: func() {
										awsA.Stop()
										kubeA.Stop()
										refusedBefore = awsA.Refused() + kubeA.Refused()
										failedOver = time.Now()
										mu.Lock()
										phase = "failover"
										mu.Unlock()
									},
									Config:          dr,
									ConfigVariables: drVars(true),
									ConfigPlanChecks: resource.ConfigPlanChecks{
										PreApply: []plancheck.PlanCheck{
											plancheck.ExpectResourceAction("flinkstate_deployment.orders[0]", plancheck.ResourceActionCreate),
											plancheck.ExpectResourceAction("flinkstate_iam_role.orders_dr", plancheck.ResourceActionNoop),
											plancheck.ExpectResourceAction("flinkstate_service_account.orders_dr", plancheck.ResourceActionNoop),
											plancheck.ExpectResourceAction("flinkstate_state_store.orders_dr", plancheck.ResourceActionNoop),
										},
									},
									ConfigStateChecks: []statecheck.StateCheck{
										statecheck.ExpectKnownOutputValue("restored_from", knownvalue.StringExact("s3://"+dst+"/"+sp)),
										statecheck.ExpectKnownValue("flinkstate_deployment.orders[0]", tfjsonPath("job").AtMapKey("initial_savepoint_path"), knownvalue.StringExact("s3://"+dst+"/"+sp)),
										statecheck.ExpectKnownValue("flinkstate_deployment.orders[0]", tfjsonPath("namespace"), knownvalue.StringExact(nsB)),
										expectAPI(func() error {
											dep, err := getDeployment(t, nsB, "orders")
											if err != nil {
												return err
											}
											got, _, _ := unstructured.NestedString(dep.Object, "spec", "job", "initialSavepointPath")
											if want := "s3://" + dst + "/" + sp; got != want {
												return fmt.Errorf("the standby FlinkDeployment's initialSavepointPath is %q, want %s", got, want)
											}
											return nil
										}),
									},
								},
							},
						})
					})
					mu.Lock()
					if !failedOver.IsZero() {
						t.Logf("dr/'s failover (plan, apply, checks, destroy) took %s with region A gone", time.Since(failedOver).Round(time.Second))
					}
					t.Logf("dr/'s AWS requests by phase, service and signing region: %v", seen)
					if len(outside) > 0 {
						t.Errorf("dr/ sent %d AWS requests outside region B: %v", len(outside), outside)
					}
					mu.Unlock()
					if n := awsA.Refused() + kubeA.Refused() - refusedBefore; !failedOver.IsZero() && n != 0 {
						t.Errorf("dr/'s failover tried %d connections to region A's endpoints", n)
					}
					awsA.Start()
					kubeA.Start()
					if !ok {
						t.Fatal("dr/ failed: in peace time, or at failover with region A gone")
					}
				},
				// Region A is back: primary/ is as it was.
				Config:          primary,
				ConfigVariables: primaryVars,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// sigV4Scope is the service and region a request is signed for (its
// credential scope, from the Authorization header or a presigned URL's
// X-Amz-Credential: AWS General Reference, "Signature Version 4").
func sigV4Scope(r *http.Request) (service, region string) {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if a := r.Header.Get("Authorization"); cred == "" && a != "" {
		if _, after, ok := strings.Cut(a, "Credential="); ok {
			cred, _, _ = strings.Cut(after, ",")
		}
	}
	// AKID/20261202/us-west-2/s3/aws4_request
	parts := strings.Split(cred, "/")
	if len(parts) < 5 {
		return "", ""
	}
	return parts[3], parts[2]
}

// waitArrived polls the replica until every key has arrived.
func waitArrived(ctx context.Context, s3B *s3.Client, replica string, keys []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, k := range keys {
		for {
			_, err := s3B.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(replica), Key: aws.String(k)})
			if err == nil {
				break
			}
			if !isNotFound(err) {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("s3://%s/%s has not arrived after %s", replica, k, timeout)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// listKeys lists the keys under prefix.
func listKeys(ctx context.Context, c *s3.Client, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}
