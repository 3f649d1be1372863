package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// examples/cross-region-dr applied on the test bed, in two steps as the
// guide's runbook has it: before failover (region A's stack, the replica
// bucket in us-west-2 and the replication), then with failover = true (the
// standby restores from the newest savepoint that has arrived).
//
// Region B's provider is the alias "dr" in the example; the test serves it
// under a second local name, flinkstatedr (replProviderFactories says why:
// terraform-plugin-testing reattaches one provider server per name, so an
// alias cannot have its own region there, while a real terraform run starts
// one plugin process per provider configuration). The two clusters become
// two namespaces of the test bed's one (each region's kubernetes block is
// dropped), and the names are the test's own.
func TestAccExample_crossRegionDR(t *testing.T) {
	skipUnlessAcc(t)
	nsA, nsB := testNamespace(t), testNamespace(t)
	startOperator(t, nsA)
	// Region B's operator reads the replica in us-west-2.
	startOperatorWith(t, nsB, func(op *testbed.Operator) { op.S3 = testAWSIn(t, testbed.SecondRegion).S3 })
	src, dst := randName("ex-dr-"), randName("ex-dr-replica-")
	roleA, roleB, replRole := randName("ex-dr-"), randName("ex-dr-b-"), randName("ex-dr-repl-")
	cfg := example(t, "cross-region-dr/main.tf",
		`terraform {
  required_providers {
    flinkstate = {
      source = "flinkstate/flinkstate"
    }
  }
}`, "",
		"  kubernetes {\n    config_context = \"flink-us-east-1\"\n  }\n", "",
		"  kubernetes {\n    config_context = \"flink-us-west-2\"\n  }\n", "",
		"provider \"flinkstate\" {\n  alias = \"dr\"\n", "provider \"flinkstatedr\" {\n",
		"flinkstate.dr", "flinkstatedr",
		`"acme-flink-state-dr"`, fmt.Sprintf("%q", dst),
		`"acme-flink-state"`, fmt.Sprintf("%q", src),
		`name = "flink-orders"`, fmt.Sprintf("name = %q", roleA),
		`name     = "flink-orders-dr"`, fmt.Sprintf("name     = %q", roleB),
		`role_name          = "flink-orders-replication"`, fmt.Sprintf("role_name          = %q", replRole),
		`namespace = "data-processing"`, fmt.Sprintf("namespace = %q", nsA),
		// The test writes a savepoint: buckets and stores may be
		// destroyed non-empty.
		"  versioning = true\n}", "  versioning = true\n  force_destroy = true\n}",
		"  prefix = local.prefix\n}", "  prefix = local.prefix\n  force_destroy = true\n}",
		"  prefix   = \"flink/orders-dr\"\n}", "  prefix   = \"flink/orders-dr\"\n  force_destroy = true\n}")
	// Region B's objects go to the other namespace.
	a, b, ok := strings.Cut(cfg, "# Region B:")
	if !ok {
		t.Fatal(`examples/cross-region-dr/main.tf no longer has "# Region B:": update this test with it`)
	}
	cfg = a + "# Region B:" + strings.ReplaceAll(b, "local.namespace", fmt.Sprintf("%q", nsB))
	oidc := testOIDCProvider(t)
	vars := func(failover bool) config.Variables {
		return config.Variables{"oidc_provider_arn_primary": config.StringVariable(oidc), "oidc_provider_arn_dr": config.StringVariable(oidc),
			"failover": config.BoolVariable(failover)}
	}
	meta, file, size := realSavepoint(t)
	sp := "flink/orders/savepoints/savepoint-2d6fb8-00000000000a"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return replFixture{role: replRole}.roleGone(t)
		},
		Steps: []resource.TestStep{
			{
				Config:          cfg,
				ConfigVariables: vars(false),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("flinkstate_bucket_replication.state", tfjsonPath("destination_region"), knownvalue.StringExact(testbed.SecondRegion)),
					// No failover yet: no standby, nothing passed over.
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
				// Region A took a savepoint (the test writes a real one
				// into its savepoint dir); replication brings it to the
				// replica, and the failover restores from it there.
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
				},
				Config:          cfg,
				ConfigVariables: vars(true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("restored_from", knownvalue.StringExact("s3://"+dst+"/"+sp)),
					statecheck.ExpectKnownValue("flinkstate_deployment.orders_dr[0]", tfjsonPath("namespace"), knownvalue.StringExact(nsB)),
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
