package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Issue 37: what a replacement, an upgrade and a snapshot start from.

// breakFinalSavepoint deletes, as soon as the final savepoint of deployment
// name in ns completes, every file its _metadata references (the model's
// canonical savepoint references one state file of its own directory), and
// reports the s3:// URIs it deleted. It runs until the test ends.
func breakFinalSavepoint(t *testing.T, ns, name string) func() []string {
	t.Helper()
	var mu sync.Mutex
	var removed []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for _, sp := range finalSavepoints(t, ns, name) {
				if sp.State != kube.SnapshotCompleted || sp.Path == "" {
					continue
				}
				c, err := checkpoint.CheckComplete(ctx, testAWS(t).S3, sp.Path)
				if err != nil || c.Metadata == nil {
					t.Errorf("reading the final savepoint %s: %v", sp.Path, err)
					return
				}
				bucket, key, _ := checkpoint.ParseS3URI(sp.Path)
				out, err := testAWS(t).S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key + "/")})
				if err != nil {
					t.Errorf("listing %s: %v", sp.Path, err)
					return
				}
				for _, o := range out.Contents {
					if strings.HasSuffix(*o.Key, "/"+checkpoint.MetadataFile) {
						continue
					}
					if _, err := testAWS(t).S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
						t.Errorf("deleting %s: %v", *o.Key, err)
						return
					}
					mu.Lock()
					removed = append(removed, "s3://"+bucket+"/"+*o.Key)
					mu.Unlock()
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), removed...)
	}
}

// A replacement does not start from a final savepoint a file of which is
// missing: the final savepoint passes the same check as
// job.initial_savepoint_path (every referenced file, not only _metadata),
// the create is refused naming the file, and no FlinkDeployment is created.
func TestAccDeployment_replaceRefusesIncompleteFinalSavepoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("carry-")
	orders := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", `  wait_for = "running"`)
	renamed := strings.Replace(orders, `name            = "orders"`, `name            = "orders-v2"`, 1)
	rec := &diagRecorder{}
	var removed func() []string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: orders},
			{
				PreConfig: func() { removed = breakFinalSavepoint(t, ns, "orders") },
				Config:    renamed,
				ExpectError: errorRE("Creating FlinkDeployment "+ns+"/orders-v2 failed", "Restore target is incomplete",
					"the final savepoint of the deployment it replaces cannot be restored", "1 of the 1 files", "Nothing was created"),
			},
			{
				PreConfig: func() {
					gone := removed()
					if len(gone) != 1 {
						t.Fatalf("deleted %v from the final savepoint, want its one state file", gone)
					}
					if ds := rec.find("ApplyResourceChange", false, "Restore target is incomplete", gone[0]); len(ds) != 1 {
						t.Errorf("the refused create does not name the missing file %s:\n%s", gone[0], rec.dump())
					}
					if _, err := getDeployment(t, ns, "orders-v2"); !apierrors.IsNotFound(err) {
						t.Errorf("FlinkDeployment %s/orders-v2 after a refused create: %v (want it not to exist)", ns, err)
					}
				},
				Config:             renamed,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// upgradeSavepoints lists the savepoints taken before upgrades of
// deployment name.
func upgradeSavepoints(t *testing.T, ns, name string) map[string]kube.SnapshotStatus {
	t.Helper()
	list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: kube.UpgradeOfLabel + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kube.SnapshotStatus{}
	for i := range list.Items {
		out[list.Items[i].GetName()] = kube.ReadSnapshotStatus(&list.Items[i])
	}
	return out
}

// A deployment destroyed and created again under its name starts at
// generation 1 again; the same upgrade as its predecessor's then takes a
// fresh savepoint of the running job, and never takes the predecessor's
// kept upgrade savepoint (same name, target spec and generation) for its
// own. The predecessor's is left alone.
func TestAccDeployment_upgradeSavepointOfANewIncarnation(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("again-")
	extra := `  wait_for = "running"
  savepoint_before_upgrade {}`
	java17 := restoreConfig(ns, prefix, "flink:2.2.1-java17", "", extra)
	java21 := restoreConfig(ns, prefix, "flink:2.2.1-java21", "", extra)
	var oldName, oldPath string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: java17},
			{
				// The first incarnation's upgrade, at generation 1.
				Config: java21,
				Check: func(s *terraform.State) error {
					oldPath = attrOf(s, depAddr, "upgrade_savepoint_path")
					for name, st := range upgradeSavepoints(t, ns, "orders") {
						if st.Path == oldPath {
							oldName = name
						}
					}
					if oldPath == "" || oldName == "" {
						return fmt.Errorf("no upgrade savepoint of the first incarnation (path %q)", oldPath)
					}
					return nil
				},
			},
			{Config: java21, Destroy: true},
			{Config: java17},
			{
				Config: java21,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("upgrade_savepoint_path"),
						knownvalue.StringRegexp(regexpMust(`^s3://acme-flink-state/`+prefix+`/savepoints/savepoint-`))),
				},
				Check: func(s *terraform.State) error {
					path := attrOf(s, depAddr, "upgrade_savepoint_path")
					if path == oldPath {
						return fmt.Errorf("upgrade_savepoint_path %q is the first incarnation's savepoint (FlinkStateSnapshot %s)", path, oldName)
					}
					live, err := getDeployment(t, ns, "orders")
					if err != nil {
						return err
					}
					sps := upgradeSavepoints(t, ns, "orders")
					if _, kept := sps[oldName]; !kept || len(sps) != 2 {
						return fmt.Errorf("upgrade savepoints %v: want the first incarnation's %s (kept) and one new one", sps, oldName)
					}
					for name, st := range sps {
						if name == oldName {
							continue
						}
						obj, err := getSnapshot(t, ns, name)
						if err != nil {
							return err
						}
						if st.State != kube.SnapshotCompleted || st.Path != path {
							return fmt.Errorf("the new upgrade savepoint %s is %s at %q, want COMPLETED at upgrade_savepoint_path %q", name, st.State, st.Path, path)
						}
						a := obj.GetAnnotations()
						if a[kube.ForUIDAnnotation] != string(live.GetUID()) || a[kube.ForJobAnnotation] == "" {
							return fmt.Errorf("the new upgrade savepoint %s records object %q and job %q, want the running deployment's %s and its job",
								name, a[kube.ForUIDAnnotation], a[kube.ForJobAnnotation], live.GetUID())
						}
					}
					return nil
				},
			},
		},
	})
}

// savepointsOfJob counts the savepoint directories (their _metadata) of
// job jobID under the fixtures' savepoint dir: Flink names them
// savepoint-<first 6 of the job id>-<random>.
func savepointsOfJob(t *testing.T, dir, jobID string) int {
	t.Helper()
	bucket, key, err := checkpoint.ParseS3URI(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := testAWS(t).S3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket),
		Prefix: aws.String(key + "/savepoint-" + jobID[:6] + "-")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range out.Contents {
		if strings.HasSuffix(*o.Key, "/"+checkpoint.MetadataFile) {
			n++
		}
	}
	return n
}

// A FlinkStateSnapshot that an apply killed while its create waited left
// behind (never saved in Terraform's state, still marked by the provider)
// is taken over by the next apply's create of the same configuration,
// which waits for it instead of triggering a second savepoint: one
// FlinkStateSnapshot, one savepoint.
func TestAccSnapshot_interruptedCreateTakenOver(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	live := runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": snapSavepointDir})
	jobID := kube.ReadDeploymentStatus(live).JobID
	cfg := snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", "")
	rec := &diagRecorder{}
	var left string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				// What the killed apply's create had made when it died: the
				// object, as that create writes it for this configuration
				// (the schema's defaults, the deployment's UID), before the
				// operator got to it.
				op.SetFaults(func(f *testbed.Faults) { f.Down = true })
				want := kube.SnapshotCreate{Namespace: ns, GenerateName: "orders-before-upgrade-",
					Spec:     kube.SnapshotSpec{DeploymentName: "orders", Type: "savepoint", FormatType: "CANONICAL", BackoffLimit: 1},
					Triggers: map[string]string{"image": "flink:2.2.1-java17"}, DeploymentUID: string(live.GetUID())}
				obj, err := kube.CreateSnapshot(context.Background(), testKube(t).Dynamic, ns, want.Object("the-killed-apply"))
				if err != nil {
					t.Fatal(err)
				}
				left = obj.GetName()
				op.SetFaults(func(f *testbed.Faults) { f.Down = false })
			},
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact(kube.SnapshotCompleted)),
				expectAPI(func() error {
					if got := rec.find("ApplyResourceChange", true, "Snapshot of an interrupted apply taken over", left); len(got) != 1 {
						return fmt.Errorf("no warning that %s was taken over:\n%s", left, rec.dump())
					}
					return nil
				}),
			},
			Check: func(s *terraform.State) error {
				if name := attrOf(s, snapAddr, "name"); name != left {
					return fmt.Errorf("state holds FlinkStateSnapshot %q, want %s, the one the killed apply left", name, left)
				}
				list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return err
				}
				if len(list.Items) != 1 {
					return fmt.Errorf("%d FlinkStateSnapshots in %s, want exactly one", len(list.Items), ns)
				}
				if _, marked := list.Items[0].GetLabels()[kube.PendingCreateLabel]; marked {
					return fmt.Errorf("FlinkStateSnapshot %s, now in state, still carries the pending-create mark", left)
				}
				if n := savepointsOfJob(t, snapSavepointDir, jobID); n != 1 {
					return fmt.Errorf("%d savepoints of job %s, want exactly one", n, jobID)
				}
				return nil
			},
		}},
	})
}

// The same, end to end: terraform is killed (SIGKILL: no state saved, no
// chance to clean up) while the create waits for a snapshot the operator
// has not taken yet; the next apply takes that object over and waits for
// it. One FlinkStateSnapshot, one savepoint. Serial: it kills the one
// terraform apply this test process runs (interruptApply's rule).
func TestAccSnapshot_killedCreateTakenOver(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	live := runningJob(t, ns, "orders", map[string]any{"execution.checkpointing.savepoint-dir": snapSavepointDir})
	jobID := kube.ReadDeploymentStatus(live).JobID
	cfg := snapshotBeforeUpgrade(ns, "flink:2.2.1-java17", "")
	snapshots := func() []string {
		list, err := testKube(t).Dynamic.Resource(kube.FlinkStateSnapshotGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i := range list.Items {
			names = append(names, list.Items[i].GetName())
		}
		return names
	}
	var left []string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.Down = true })
					go func() {
						deadline := time.Now().Add(2 * time.Minute)
						for len(snapshots()) == 0 {
							if time.Now().After(deadline) {
								t.Errorf("the apply never created its FlinkStateSnapshot")
								return
							}
							time.Sleep(100 * time.Millisecond)
						}
						time.Sleep(500 * time.Millisecond) // into the wait
						pid := childApply(t)
						if pid == 0 {
							t.Errorf("no terraform apply process to kill")
							return
						}
						if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
							t.Errorf("killing terraform (pid %d): %v", pid, err)
						}
					}()
				},
				Config:      cfg,
				ExpectError: regexpMust(`signal: killed|killed`),
			},
			{
				PreConfig: func() {
					left = snapshots()
					if len(left) != 1 {
						t.Fatalf("FlinkStateSnapshots %v after the kill, want the one the killed create made", left)
					}
					op.SetFaults(func(f *testbed.Faults) { f.Down = false })
				},
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact(kube.SnapshotCompleted)),
				},
				Check: func(s *terraform.State) error {
					if name := attrOf(s, snapAddr, "name"); name != left[0] {
						return fmt.Errorf("state holds FlinkStateSnapshot %q, want %s, the one the killed apply left", name, left[0])
					}
					if all := snapshots(); len(all) != 1 {
						return fmt.Errorf("FlinkStateSnapshots %v, want exactly one", all)
					}
					if n := savepointsOfJob(t, snapSavepointDir, jobID); n != 1 {
						return fmt.Errorf("%d savepoints of job %s, want exactly one", n, jobID)
					}
					return nil
				},
			},
		},
	})
}
