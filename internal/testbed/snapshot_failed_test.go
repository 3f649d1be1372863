package testbed

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// A savepoint that Flink fails: the operator records FAILED with the
// failure count and the error (FlinkStateSnapshotController
// .updateErrorStatus → ReconciliationUtils.updateForReconciliationError),
// writes a Warning SavepointError event whose message is status.error,
// and retries after 10 s × 2^(failures-1) only while failures <=
// backoffLimit. It does not update the snapshot.state label on that path
// (reconcile throws before updateLabels), so a snapshot FAILED for good
// keeps the label of its last trigger, IN_PROGRESS. On the real operator the failure is Flink's own: the
// savepoint's target is in a bucket that does not exist, which the
// observer reports as a ReconciliationException
// (StateSnapshotObserver: savepointInfo.getError()); the model has its
// SavepointFailures fault.
func TestDifferential_snapshotFailed(t *testing.T) {
	for _, side := range []string{"model", "real"} {
		t.Run(side, func(t *testing.T) {
			var b *bed
			if side == "model" {
				b = newBed(t)
				b.op.SetFaults(func(f *Faults) { f.SavepointFailures, f.SavepointError = 1000, "NoSuchBucket" })
			} else {
				b = newRealStack(t, nil).bed
			}
			b.createDeployment(t, "orders", modeSavepoint, nil)
			b.runningAt(t, "orders")
			b.createSnapshot(t, "sp", "orders", 1, map[string]any{"path": "s3://flinkstate-no-such-bucket-" + randomHex(4) + "/savepoints"})
			obj := b.until(t, false, "sp", "FAILED for good", func(o *unstructured.Unstructured) bool {
				st := readSnapshotStatus(o)
				return st.State == kube.SnapshotFailed && st.Failures > 1
			})
			st := readSnapshotStatus(obj)
			t.Logf("%s: status %+v", side, st)
			if st.Failures != 2 || st.Path != "" ||
				!strings.Contains(st.Error, `"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException"`) {
				t.Errorf("status %+v: want FAILED after 2 failures (backoffLimit 1), no path, a ReconciliationException", st)
			}
			// The label keeps the state of the last reconcile that did not
			// throw: the retried trigger's IN_PROGRESS.
			if l := obj.GetLabels(); l["snapshot.state"] != "IN_PROGRESS" {
				t.Errorf("label snapshot.state %q, want IN_PROGRESS (not updated on the error path)", l["snapshot.state"])
			}
			ev := b.eventUntil(t, "sp", "SavepointError", func(e kube.OperatorEvent) bool { return e.Message == st.Error })
			if ev.Type != "Warning" {
				t.Errorf("SavepointError event %+v, want a Warning", ev)
			}
		})
	}
}
