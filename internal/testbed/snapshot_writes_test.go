package testbed

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// How the operator's two writes of a FlinkStateSnapshot meet another
// client's write that lands while it reconciles (the provider's mark, say):
// the operator is held right before the write (the model by
// Faults.SnapshotWritePause; the real operator by a validating webhook
// that holds its request inside the API server, holdSnapshotWrite), the
// other client writes an annotation, and the operator goes on. The snapshot
// is an alreadyExists savepoint, which one reconciliation takes from
// TRIGGER_PENDING to COMPLETED (StateSnapshotReconciler.reconcile) with no
// job at all, patching first its labels and then its status.
//
// The status write lands: the Java Operator SDK 5.2.2's editStatus clears
// the resourceVersion (testbed's reconcileSnapshot says how).
func TestDifferential_snapshotStatusWriteUnconditional(t *testing.T) {
	snapshotWriteMeetsAnother(t, false, func(t *testing.T, b *bed, st snapshotStatus, obj *unstructured.Unstructured) {
		if st.State != kube.SnapshotCompleted || st.Failures != 0 {
			t.Errorf("status %+v, want COMPLETED without a failure (the status patch carries no resourceVersion)", st)
		}
	})
}

// The label patch does not: it carries the resourceVersion the operator
// read (fabric8 7.3.1 OperationSupport.handlePatch), fails with a conflict,
// and FlinkStateSnapshotController.updateErrorStatus records the
// KubernetesClientException as a failure (FAILED for good with
// backoffLimit 0; within the limit it would trigger again) and says so in
// a SavepointError event.
func TestDifferential_snapshotLabelPatchConflicts(t *testing.T) {
	snapshotWriteMeetsAnother(t, true, func(t *testing.T, b *bed, st snapshotStatus, obj *unstructured.Unstructured) {
		if st.State != kube.SnapshotFailed || st.Failures != 1 ||
			!strings.Contains(st.Error, `"type":"io.fabric8.kubernetes.client.KubernetesClientException"`) ||
			!strings.Contains(st.Error, "the object has been modified") {
			t.Errorf("status %+v, want FAILED after one failure, the conflict's KubernetesClientException in status.error", st)
		}
		if l := obj.GetLabels()["snapshot.state"]; l == kube.SnapshotCompleted {
			t.Errorf("label snapshot.state %q: the label patch went through", l)
		}
		ev := b.eventUntil(t, "sp", "SavepointError", func(e kube.OperatorEvent) bool { return e.Message == st.Error })
		if ev.Type != "Warning" {
			t.Errorf("SavepointError event %+v, want a Warning", ev)
		}
	})
}

func snapshotWriteMeetsAnother(t *testing.T, labels bool, check func(*testing.T, *bed, snapshotStatus, *unstructured.Unstructured)) {
	for _, o := range operatorsUnderTest(t) {
		t.Run(o.name, func(t *testing.T) {
			b := o.bed(t, nil)
			var held <-chan string
			var release func()
			if b.model != nil {
				h, r := make(chan string), make(chan struct{})
				var once sync.Once
				held, release = h, func() { once.Do(func() { close(r) }) }
				b.model.SetFaults(func(f *Faults) {
					f.SnapshotWritePause = &WritePause{State: kube.SnapshotCompleted, BeforeLabels: labels, Held: h, Release: r}
				})
			} else {
				held, release = holdSnapshotWrite(t, b, "sp", labels)
			}
			t.Cleanup(release)
			b.createSnapshot(t, "sp", "no-such-deployment", 0, map[string]any{
				"alreadyExists": true, "path": "s3://" + testBucket + "/" + b.ns + "/savepoints/savepoint-000000-000000000000"})
			select {
			case <-held:
			case <-time.After(b.wait):
				t.Fatalf("the operator never came to write the snapshot")
			}
			b.patch(t, false, "sp", `{"metadata":{"annotations":{"example.com/another-client":"wrote"}}}`)
			release()
			obj := b.until(t, false, "sp", "ended", func(o *unstructured.Unstructured) bool {
				st := readSnapshotStatus(o)
				return st.State == kube.SnapshotCompleted || st.State == kube.SnapshotFailed
			})
			st := readSnapshotStatus(obj)
			t.Logf("%s: status %+v, labels %v", o.name, st, obj.GetLabels())
			if obj.GetAnnotations()["example.com/another-client"] != "wrote" {
				t.Errorf("the other client's annotation is gone: %v", obj.GetAnnotations())
			}
			check(t, b, st, obj)
		})
	}
}

var validatingWebhooksGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// holdSnapshotWrite holds, inside the API server, the first request that
// changes snapshot name's snapshot.state label (labels) or sets its status
// to COMPLETED (not labels): a validating webhook (admissionregistration
// .k8s.io/v1) for FlinkStateSnapshots in the bed's namespace, called within
// the update's optimistic-concurrency loop (the registry store's
// GuaranteedUpdate runs validation admission before it writes), answers
// only once released. A write that lands meanwhile makes the store try the
// request again on the new object: a patch carrying the resourceVersion
// read before then fails with a conflict; one without it applies. held
// receives the name once the request is held.
func holdSnapshotWrite(t *testing.T, b *bed, name string, labels bool) (<-chan string, func()) {
	t.Helper()
	held, releaseC := make(chan string, 1), make(chan struct{})
	var once, holdOnce sync.Once
	release := func() { once.Do(func() { close(releaseC) }) }
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Request    struct {
				UID         ktypes.UID                `json:"uid"`
				Name        string                    `json:"name"`
				SubResource string                    `json:"subResource"`
				Object      unstructured.Unstructured `json:"object"`
				OldObject   unstructured.Unstructured `json:"oldObject"`
			} `json:"request"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := review.Request
		hold := false
		if req.Name == name {
			if labels {
				hold = req.SubResource == "" && req.Object.GetLabels()["snapshot.state"] != req.OldObject.GetLabels()["snapshot.state"]
			} else {
				s, _, _ := unstructured.NestedString(req.Object.Object, "status", "state")
				hold = req.SubResource == "status" && s == kube.SnapshotCompleted
			}
		}
		if hold {
			holdOnce.Do(func() {
				held <- name
				select {
				case <-releaseC:
				case <-time.After(25 * time.Second): // within the webhook's timeout
				}
			})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review.APIVersion, "kind": review.Kind,
			"response": map[string]any{"uid": req.UID, "allowed": true}})
	}))
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfgName := "hold-snapshot-write-" + b.ns
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": cfgName},
		"webhooks": []any{map[string]any{
			"name":                    "hold.snapshot.testbed.flinkstate",
			"clientConfig":            map[string]any{"url": srv.URL + "/hold", "caBundle": ca},
			"rules":                   []any{map[string]any{"operations": []any{"UPDATE"}, "apiGroups": []any{"flink.apache.org"}, "apiVersions": []any{"*"}, "resources": []any{"flinkstatesnapshots", "flinkstatesnapshots/status"}}},
			"namespaceSelector":       map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": b.ns}},
			"failurePolicy":           "Fail",
			"sideEffects":             "None",
			"admissionReviewVersions": []any{"v1"},
			"timeoutSeconds":          int64(30),
		}},
	}}
	ctx := context.Background()
	if _, err := b.dyn.Resource(validatingWebhooksGVR).Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		release()
		_ = b.dyn.Resource(validatingWebhooksGVR).Delete(ctx, cfgName, metav1.DeleteOptions{})
		srv.Close()
	})
	return held, release
}
