package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// The snapshot data sources on a blue/green deployment (issue 46): the
// transition savepoints, the active child's checkpoints, a replica of the
// application's store.

// blueGreenStore is blueGreenConfig with the store under a prefix of the
// test's own (the data sources read S3 by directory, and other tests write
// to flink/orders), and extra after the resource.
func blueGreenStore(ns, prefix, image, extra string) string {
	return strings.Replace(blueGreenConfig(ns, image, ""), "acme-flink-state/flink/orders", "acme-flink-state/"+prefix, 1) + extra
}

// flinkstate_latest_savepoint with blue_green_deployment_name finds the
// savepoint the operator took of blue to start green from, which is no
// FlinkStateSnapshot (BlueGreenUtils.triggerSavepoint) and is recorded only
// as green's job.initialSavepointPath: the same path as the resource's
// transition_savepoint_path, said to be a transition savepoint of
// orders-blue's job that the operator's cleanup never disposes of. Before
// any transition there is none.
func TestAccBlueGreen_latestSavepointFindsTransitionSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgsp-")
	const ds = "data.flinkstate_latest_savepoint.orders"
	latest := fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace                  = %q
  blue_green_deployment_name = flinkstate_blue_green_deployment.orders.name
  depends_on                 = [flinkstate_blue_green_deployment.orders]
}
`, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", latest),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(false)),
				},
			},
			{
				Config: blueGreenStore(ns, prefix, "flink:2.2.1-java21", latest),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(true)),
					statecheck.CompareValuePairs(ds, tfjsonPath("path"), bgAddr, tfjsonPath("transition_savepoint_path"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(ds, tfjsonPath("path"),
						knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/`+prefix+`/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`))),
					statecheck.ExpectKnownValue(ds, tfjsonPath("trigger_type"), knownString(kube.TriggerBlueGreenTransition)),
					statecheck.ExpectKnownValue(ds, tfjsonPath("source_deployment_name"), knownString("orders-blue")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("name"), knownvalue.Null()),
					statecheck.ExpectKnownValue(ds, tfjsonPath("picked_by"), knownString(kube.RuleTransition)),
					statecheck.ExpectKnownValue(ds, tfjsonPath("operator_cleanup"), knownString("none")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("format"), knownvalue.NotNull()),
				},
			},
		},
	})
}

// A change the operator patches into the only child (a kubernetes.operator.*
// key: PATCH_CHILD) rewrites the child from the template, whose
// job.initialSavepointPath is empty (prepareFlinkDeployment with one child
// uses the template's path, not the carried-over savepoint): from then on
// the transition savepoint is recorded nowhere in Kubernetes, and the data
// source, which reads that record, finds none. The real operator does the
// same (TestAccRealOperator_blueGreenDataSources).
func TestAccBlueGreen_latestSavepointForgottenAfterPatch(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgsp-")
	const ds = "data.flinkstate_latest_savepoint.orders"
	latest := fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace                  = %q
  blue_green_deployment_name = flinkstate_blue_green_deployment.orders.name
  depends_on                 = [flinkstate_blue_green_deployment.orders]
}
`, ns)
	patched := strings.Replace(blueGreenConfig(ns, "flink:2.2.1-java21", `  flink_configuration = {
    "kubernetes.operator.savepoint.history.max.count" = "7"
  }`), "acme-flink-state/flink/orders", "acme-flink-state/"+prefix, 1) + latest
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", latest)},
			{
				Config:            blueGreenStore(ns, prefix, "flink:2.2.1-java21", latest),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(true))},
			},
			{
				Config: patched,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("transition_savepoint_path"), knownvalue.Null()),
					statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(false)),
				},
			},
		},
	})
}

// Once the blue/green deployment is destroyed (its active child stopped
// with a final savepoint, kept as a FlinkStateSnapshot <child>-final-*),
// the data source still finds that savepoint by the resource's name: what
// a restore of the application elsewhere starts from. (The operator's own
// UPGRADE snapshot of the stop records the same path, and may be the one
// named.)
func TestAccBlueGreen_latestSavepointAfterDestroy(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgsp-")
	const ds = "data.flinkstate_latest_savepoint.orders"
	latest := fmt.Sprintf(`
data "flinkstate_latest_savepoint" "orders" {
  namespace                  = %q
  blue_green_deployment_name = "orders"
}
`, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", "")},
			{Config: latest, Check: checkBlueGreenGone(t, ns)},
			{
				Config: latest,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(ds, tfjsonPath("source_deployment_name"), knownString("orders-blue")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("path"), knownvalue.StringFunc(func(p string) error {
						sps := finalSavepoints(t, ns, "orders-blue")
						if len(sps) != 1 || sps[0].Path != p {
							return fmt.Errorf("path %s, want the final savepoint of orders-blue (%+v)", p, sps)
						}
						return nil
					})),
				},
			},
		},
	})
}

// A savepoint of the active child taken after the transition (a
// flinkstate_snapshot of orders-green) is newer than the transition
// savepoint, and is the one returned, with orders-green as its source.
func TestAccBlueGreen_latestSavepointNewerSnapshotOfActiveChild(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgsp-")
	const ds = "data.flinkstate_latest_savepoint.orders"
	snapshot := fmt.Sprintf(`
resource "flinkstate_snapshot" "after" {
  namespace       = %q
  deployment_name = flinkstate_blue_green_deployment.orders.active_deployment_name
}

data "flinkstate_latest_savepoint" "orders" {
  namespace                  = %[1]q
  blue_green_deployment_name = flinkstate_blue_green_deployment.orders.name
  depends_on                 = [flinkstate_snapshot.after]
}
`, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", "")},
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java21", "")},
			{
				Config: blueGreenStore(ns, prefix, "flink:2.2.1-java21", snapshot),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs(ds, tfjsonPath("path"), "flinkstate_snapshot.after", tfjsonPath("path"), compare.ValuesSame()),
					statecheck.CompareValuePairs(ds, tfjsonPath("name"), "flinkstate_snapshot.after", tfjsonPath("name"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(ds, tfjsonPath("source_deployment_name"), knownString("orders-green")),
					statecheck.ExpectKnownValue(ds, tfjsonPath("trigger_type"), knownString("MANUAL")),
				},
			},
		},
	})
}

// flinkstate_latest_checkpoint with blue_green_deployment_name searches
// the active child's job only. Both children write to the same checkpoint
// directory, each job under its own id: a job directory with a newer
// checkpoint (here planted, as the new child of an aborted transition, or
// the other child during the overlap, leaves one) is what the lookup
// without a job returns, not the job that serves.
func TestAccBlueGreen_latestCheckpointOfActiveChild(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgchk-")
	const other = "0123456789abcdef0123456789abcdef"
	lookups := fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "active" {
  store_id                   = "acme-flink-state/%[1]s"
  namespace                  = %[2]q
  blue_green_deployment_name = flinkstate_blue_green_deployment.orders.name
  depends_on                 = [flinkstate_blue_green_deployment.orders]
}

data "flinkstate_latest_checkpoint" "newest" {
  store_id   = "acme-flink-state/%[1]s"
  depends_on = [flinkstate_blue_green_deployment.orders]
}
`, prefix, ns)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", "")},
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java21", "")},
			{
				PreConfig: func() {
					putBytes(t, "acme-flink-state", prefix+"/checkpoints/"+other+"/chk-99/_metadata", []byte("planted"))
				},
				Config: blueGreenStore(ns, prefix, "flink:2.2.1-java21", lookups),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.active", tfjsonPath("found"), knownvalue.Bool(true)),
					statecheck.CompareValuePairs("data.flinkstate_latest_checkpoint.active", tfjsonPath("job_id"), bgAddr, tfjsonPath("job_id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.active", tfjsonPath("active_deployment_name"), knownString("orders-green")),
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.active", tfjsonPath("path"),
						knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/`+prefix+`/checkpoints/[0-9a-f]{32}/chk-\d+$`))),
					statecheck.ExpectKnownValue("data.flinkstate_latest_checkpoint.newest", tfjsonPath("job_id"), knownString(other)),
				},
			},
		},
	})
}

// Until the active child's job completes a checkpoint, the blue/green
// lookup finds none (found = false, with the job it searched), even when
// another job's checkpoint is in the directory: it never falls back to
// another job's state.
func TestAccBlueGreen_latestCheckpointNoneBeforeActiveJobCheckpoints(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	op.SetFaults(func(f *testbed.Faults) { f.NoCheckpoints = true })
	prefix := randName("bgchk-")
	lookup := fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "active" {
  store_id                   = "acme-flink-state/%[1]s"
  namespace                  = %[2]q
  blue_green_deployment_name = flinkstate_blue_green_deployment.orders.name
  depends_on                 = [flinkstate_blue_green_deployment.orders]
}
`, prefix, ns)
	const ds = "data.flinkstate_latest_checkpoint.active"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", "")},
			{
				PreConfig: func() {
					putBytes(t, "acme-flink-state", prefix+"/checkpoints/0123456789abcdef0123456789abcdef/chk-1/_metadata", []byte("planted"))
				},
				Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", lookup),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(ds, tfjsonPath("path"), knownvalue.Null()),
					statecheck.CompareValuePairs(ds, tfjsonPath("job_id"), bgAddr, tfjsonPath("job_id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(ds, tfjsonPath("active_deployment_name"), knownString("orders-blue")),
				},
			},
		},
	})
}

// flinkstate_restorable_snapshot on a copy of a blue/green application's
// store in another bucket (a replica) returns the newest snapshot that
// restores from there, whichever child wrote it: both children write to the
// template's directories. After blue → green → blue, that is the savepoint
// the operator took of green's job for the second transition (named for
// green's job id), the one blue runs from; the children's checkpoints,
// incremental and naming their shared files in the source bucket, are
// passed over as not relocatable. It reads no Kubernetes object.
func TestAccBlueGreen_restorableSnapshotOnReplica(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("bgdr-")
	replica := testCheckpointBucket(t)
	var greenJob, transition string
	dr := fmt.Sprintf(`
data "flinkstate_restorable_snapshot" "dr" {
  savepoint_dir  = "s3://%[1]s/%[2]s/savepoints"
  checkpoint_dir = "s3://%[1]s/%[2]s/checkpoints"
}
`, replica, prefix)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", "")},
			{
				Config:            blueGreenStore(ns, prefix, "flink:2.2.1-java21", ""),
				ConfigStateChecks: []statecheck.StateCheck{recordAttr(bgAddr, "job_id", &greenJob)},
			},
			{
				Config: blueGreenStore(ns, prefix, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("active_child"), knownString("blue")),
					recordAttr(bgAddr, "transition_savepoint_path", &transition),
				},
			},
			{
				PreConfig: func() { copyPrefix(t, "acme-flink-state", replica, prefix+"/") },
				Config:    blueGreenStore(ns, prefix, "flink:2.2.1-java17", dr),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonPath("found"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonPath("type"), knownString("savepoint")),
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonPath("path"), knownvalue.StringFunc(func(v string) error {
						want := strings.Replace(transition, "s3://acme-flink-state/", "s3://"+replica+"/", 1)
						if v != want || !strings.Contains(v, "/savepoint-"+greenJob[:6]+"-") {
							return fmt.Errorf("path %s, want %s, the savepoint of green's job %s", v, want, greenJob)
						}
						return nil
					})),
					statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.dr", tfjsonPath("skipped"),
						knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringRegexp(regexpMust(`/checkpoints/[0-9a-f]{32}/chk-\d+: not relocatable`))})),
				},
			},
		},
	})
}

// A blue/green lookup names its job itself: blue_green_deployment_name with
// job_id, or without its namespace, fails validate naming the attributes.
func TestAccBlueGreen_latestCheckpointLookupNamesItsJob(t *testing.T) {
	cfg := func(body string) string {
		return `
data "flinkstate_latest_checkpoint" "x" {
  store_id                   = "acme-flink-state/flink/orders"
  blue_green_deployment_name = "orders"
` + body + `}
`
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      cfg("  namespace = \"data\"\n  job_id = \"0123456789abcdef0123456789abcdef\"\n"),
				PlanOnly:    true,
				ExpectError: errorRE("Invalid Attribute Combination", "job_id", "blue_green_deployment_name"),
			},
			{
				Config:      cfg(""),
				PlanOnly:    true,
				ExpectError: errorRE("Invalid Attribute Combination", "namespace", "blue_green_deployment_name"),
			},
		},
	})
}

// copyPrefix copies every object under prefix from one bucket to another
// in the order they were written, a second apart where their times differ
// (S3 dates objects to the second, and a copy is dated when it is made), so
// the copies are ordered as the originals: what a finished replication
// leaves.
func copyPrefix(t *testing.T, from, to, prefix string) {
	t.Helper()
	ctx, c := context.Background(), testAWS(t).S3
	var objs []s3types.Object
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(from), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, page.Contents...)
	}
	if len(objs) == 0 {
		t.Fatalf("nothing under s3://%s/%s to copy", from, prefix)
	}
	sort.SliceStable(objs, func(i, j int) bool { return aws.ToTime(objs[i].LastModified).Before(aws.ToTime(objs[j].LastModified)) })
	for i, o := range objs {
		if i > 0 && aws.ToTime(o.LastModified).After(aws.ToTime(objs[i-1].LastModified)) {
			time.Sleep(1100 * time.Millisecond)
		}
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(to), Key: o.Key,
			CopySource: aws.String(from + "/" + aws.ToString(o.Key))}); err != nil {
			t.Fatalf("copying %s: %v", aws.ToString(o.Key), err)
		}
	}
}
