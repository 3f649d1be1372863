package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A checkpoint copied to another bucket (a cross-region replica) still
// names its shared files in the bucket it was written to: a
// FlinkDeployment is not created from the copy. The apply fails before
// anything is created, naming the absolute paths into the other bucket and
// saying to use a savepoint; no FlinkDeployment exists after it. The
// source bucket still holds every file (as while region A is up), so the
// refusal is not a missing file: the copy would silently read the source.
// Real Flink 2.2.1 fails to restore such a copy once the source is gone
// (TestRealFlink_relocation, internal/testbed).
func TestAccDeployment_restoreFromCopiedCheckpointRefused(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	replica := testCheckpointBucket(t)
	for k, size := range cp.files {
		putBytes(t, replica, k, make([]byte, size))
	}
	putBytes(t, replica, cp.jobDir()+"/chk-3/_metadata", cp.meta)
	copyPath := strings.Replace(cp.chk(3), "s3://"+cp.bucket+"/", "s3://"+replica+"/", 1)
	cfg := restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", copyPath), `  wait_for = "running"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ExpectError: errorRE("Restore target cannot restore from where it is", "initial_savepoint_path", "was not changed",
					copyPath+" names 1 of its 1 files by absolute path in another bucket", cp.uri(cp.sharedKey()), "savepoint"),
			},
			{
				PreConfig: func() {
					if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
						t.Fatalf("FlinkDeployment %s/orders after a refused restore: %v (want it not to exist)", ns, err)
					}
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// The same copy set as the restore path of a running deployment: the
// redeploy is refused naming the path in the source bucket, and the
// FlinkDeployment keeps its spec (no restore path, no nonce).
func TestAccDeployment_redeployFromCopiedCheckpointRefused(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	replica := testCheckpointBucket(t)
	for k, size := range cp.files {
		putBytes(t, replica, k, make([]byte, size))
	}
	putBytes(t, replica, cp.jobDir()+"/chk-3/_metadata", cp.meta)
	copyPath := strings.Replace(cp.chk(3), "s3://"+cp.bucket+"/", "s3://"+replica+"/", 1)
	wait := `  wait_for = "running"`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", "", wait)},
			{
				Config: restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", copyPath), wait),
				ExpectError: errorRE("Restore target cannot restore from where it is", "FlinkDeployment "+ns+"/orders was not changed",
					cp.uri(cp.sharedKey())),
			},
			{
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatal(err)
					}
					p, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
					_, hasNonce, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "job", "savepointRedeployNonce")
					if p != "" || hasNonce {
						t.Fatalf("deployment changed by a refused redeploy: initialSavepointPath %q, nonce set %t", p, hasNonce)
					}
				},
				Config:   restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", "", wait),
				PlanOnly: true,
			},
		},
	})
}
