package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// TestAccRealOperator_sessionClusterDestroy: a session cluster (no job)
// with a FlinkSessionJob on it, on the real operator 1.15.0.
//   - The provider's destroy is refused at once with the operator's words,
//     and nothing is marked for deletion.
//   - The differential proof: the same delete made directly (kube's
//     DeleteOwnedAndWait, which the destroy would have run) is held by the
//     real operator, which says why in a CleanupFailed Event
//     (SessionReconciler.cleanupInternal) with the message the refusal
//     quotes; the wait ends with it instead of the timeout.
//
// TestAccRealOperator_sessionClusterDestroyAfterSessionJobs is the way the
// refusal names: the session job deleted first, then the destroy.
func TestAccRealOperator_sessionClusterDestroy(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns := fx.ns
	ctx := context.Background()
	c := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, ns, "", "")
	c = c[:strings.Index(c, "  job {")] + c[strings.Index(c, "  state {"):]
	c = strings.Replace(c, `wait_for          = "running"`, `wait_for          = "deployed"`, 1)
	dyn := testKube(t).Dynamic
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: c},
			{
				PreConfig: func() {
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkSessionJob",
						"metadata": map[string]any{"name": "counts-job", "namespace": ns},
						"spec": map[string]any{"deploymentName": "counts", "job": map[string]any{
							"jarURI": "local:///opt/flink/usrlib/flinkstate-testjob.jar", "parallelism": int64(1), "upgradeMode": "stateless"}},
					}}
					if _, err := dyn.Resource(kube.FlinkSessionJobGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
						t.Fatalf("creating the FlinkSessionJob: %v", err)
					}
				},
				Config:      c,
				Destroy:     true,
				ExpectError: errorRE("The session jobs [counts-job] should be deleted first", "Nothing was deleted"),
			},
			{
				PreConfig: func() {
					if obj, err := getDeployment(t, ns, "counts"); err != nil || obj.GetDeletionTimestamp() != nil {
						t.Fatalf("after the refused destroy the session cluster must be there and not marked for deletion: %v", err)
					}
					start := time.Now()
					err := kube.DeleteOwnedAndWait(ctx, dyn, kube.FlinkDeploymentGVR, ns, "counts", "", 3*time.Minute)
					if !errors.Is(err, kube.ErrCleanupRefused) || !strings.Contains(err.Error(), "The session jobs [counts-job] should be deleted first") {
						t.Fatalf("the real operator's answer to the delete: got %v, want %v with the session jobs message", err, kube.ErrCleanupRefused)
					}
					t.Logf("the real operator refused the cleanup after %s: %v", time.Since(start).Round(time.Second), err)
					// Deleting the session job now, with the cluster already
					// marked for deletion, may leave its Flink job running
					// (SessionJobReconciler.cleanupInternal skips the cancel
					// of a session cluster that is DELETING or not ready),
					// and the operator then refuses for that job instead
					// ("non terminated jobs"): why the destroy refuses before
					// it deletes anything. Either outcome is logged; the
					// cluster is released by hand if it stays.
					if err := dyn.Resource(kube.FlinkSessionJobGVR).Namespace(ns).Delete(ctx, "counts-job", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					err = kube.DeleteOwnedAndWait(ctx, dyn, kube.FlinkDeploymentGVR, ns, "counts", "", 3*time.Minute)
					switch {
					case err == nil:
						t.Log("after the session job was deleted the operator finished the delete")
					case errors.Is(err, kube.ErrCleanupRefused) && strings.Contains(err.Error(), "non terminated jobs"):
						t.Logf("after the session job was deleted its job kept running and the operator refused again: %v", err)
						if _, err := dyn.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Patch(ctx, "counts", ktypes.MergePatchType,
							[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
							t.Fatal(err)
						}
						if err := kube.DeleteOwnedAndWait(ctx, dyn, kube.FlinkDeploymentGVR, ns, "counts", "", time.Minute); err != nil {
							t.Fatal(err)
						}
					default:
						t.Fatalf("after the session job was deleted: %v", err)
					}
				},
				Config:             c,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

func TestAccRealOperator_sessionClusterDestroyAfterSessionJobs(t *testing.T) {
	fx := newRealOperatorFixture(t)
	ns := fx.ns
	ctx := context.Background()
	c := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, ns, "", "")
	c = c[:strings.Index(c, "  job {")] + c[strings.Index(c, "  state {"):]
	c = strings.Replace(c, `wait_for          = "running"`, `wait_for          = "deployed"`, 1)
	jobs := testKube(t).Dynamic.Resource(kube.FlinkSessionJobGVR).Namespace(ns)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNamedDeploymentGone(t, ns, "counts"),
		Steps: []resource.TestStep{
			{Config: c},
			{
				PreConfig: func() {
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkSessionJob",
						"metadata": map[string]any{"name": "counts-job", "namespace": ns},
						"spec": map[string]any{"deploymentName": "counts", "job": map[string]any{
							"jarURI": "local:///opt/flink/usrlib/flinkstate-testjob.jar", "parallelism": int64(1), "upgradeMode": "stateless"}},
					}}
					if _, err := jobs.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					// Let the operator submit it, then delete it while the
					// cluster is healthy: the operator cancels its job.
					time.Sleep(20 * time.Second)
					if err := jobs.Delete(ctx, "counts-job", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:  c,
				Destroy: true,
			},
		},
	})
}

func checkNamedDeploymentGone(t *testing.T, ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := getDeployment(t, ns, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("FlinkDeployment %s/%s still exists after the destroy (%v)", ns, name, err)
		}
		return nil
	}
}
