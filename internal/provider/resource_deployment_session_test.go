package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// sessionConfig is deploymentConfig without a job: a session cluster.
func sessionConfig(ns, extra string) string {
	cfg := deploymentConfig(ns, "flink:2.2.1-java17", extra)
	return cfg[:strings.Index(cfg, "  job {")] + cfg[strings.Index(cfg, "  state {"):]
}

// createSessionJob writes a FlinkSessionJob on session cluster "orders",
// with the finalizers given (the operator's own is left out: the model
// does not run session jobs).
func createSessionJob(t *testing.T, ns, name string, finalizers ...string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkSessionJob",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"deploymentName": "orders",
			"job":            map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "parallelism": int64(1), "upgradeMode": "stateless"},
		},
	}}
	obj.SetFinalizers(finalizers)
	if _, err := testKube(t).Dynamic.Resource(kube.FlinkSessionJobGVR).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating FlinkSessionJob %s/%s: %v", ns, name, err)
	}
}

func deleteSessionJob(t *testing.T, ns, name string) {
	t.Helper()
	if err := testKube(t).Dynamic.Resource(kube.FlinkSessionJobGVR).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting FlinkSessionJob %s/%s: %v", ns, name, err)
	}
}

// expectNotDeleting: the session cluster is still there and not marked for
// deletion (a delete cannot be undone).
func expectNotDeleting(t *testing.T, ns string) statecheck.StateCheck {
	return expectAPI(func() error {
		obj, err := getDeployment(t, ns, "orders")
		if err != nil {
			return err
		}
		if obj.GetDeletionTimestamp() != nil {
			return fmt.Errorf("FlinkDeployment %s/orders was marked for deletion at %s", ns, obj.GetDeletionTimestamp())
		}
		return nil
	})
}

// The operator does not delete a session cluster with session jobs on it
// (SessionReconciler.cleanupInternal); the destroy is refused at once with
// the operator's words and nothing is marked for deletion. Once the session
// job is deleted, the destroy goes through.
func TestAccDeployment_sessionClusterDestroyRefusedWithSessionJobs(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cfg := sessionConfig(ns, "")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:   func() { createSessionJob(t, ns, "orders-b"); createSessionJob(t, ns, "orders-a") },
				Config:      cfg,
				Destroy:     true,
				ExpectError: errorRE("The session jobs [orders-a, orders-b] should be deleted first", "Nothing was deleted"),
			},
			{
				Config:            cfg,
				ConfigStateChecks: []statecheck.StateCheck{expectNotDeleting(t, ns)},
			},
			{
				PreConfig: func() { deleteSessionJob(t, ns, "orders-a"); deleteSessionJob(t, ns, "orders-b") },
				Config:    cfg,
			},
		},
	})
}

// A session job of another session cluster, or one being deleted (here held
// by a finalizer that goes a few seconds into the destroy), does not block
// it: the destroy waits for the terminating one and then deletes.
func TestAccDeployment_sessionClusterDestroyWaitsForTerminatingSessionJobs(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cfg := sessionConfig(ns, "")
	const hold = "flinkstate.test/hold"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					createSessionJob(t, ns, "orders-going", hold)
					deleteSessionJob(t, ns, "orders-going")
					other := testKube(t).Dynamic.Resource(kube.FlinkSessionJobGVR).Namespace(ns)
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkSessionJob",
						"metadata": map[string]any{"name": "elsewhere", "namespace": ns},
						"spec":     map[string]any{"deploymentName": "other-cluster", "job": map[string]any{"jarURI": "local:///x.jar", "upgradeMode": "stateless"}},
					}}
					if _, err := other.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					go func() {
						time.Sleep(4 * time.Second)
						patch := []byte(`{"metadata":{"finalizers":null}}`)
						if _, err := other.Patch(context.Background(), "orders-going", ktypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
							t.Errorf("releasing FlinkSessionJob orders-going: %v", err)
						}
					}()
				},
				Config:  cfg,
				Destroy: true,
			},
		},
	})
}

// With the operator's block turned off in the deployment's configuration
// (kube.SessionBlockKey = false), the destroy is not refused.
func TestAccDeployment_sessionClusterDestroyUnblocked(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cfg := sessionConfig(ns, `  flink_configuration = {
    "`+kube.SessionBlockKey+`" = "false"
  }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{Config: cfg},
			{PreConfig: func() { createSessionJob(t, ns, "orders-a") }, Config: cfg, Destroy: true},
		},
	})
}
