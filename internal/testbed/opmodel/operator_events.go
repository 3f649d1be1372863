package opmodel

import (
	"context"
	"fmt"
	"time"
	"unicode/utf16"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Events the operator writes (flink-kubernetes-operator release-1.15.0,
// utils/EventUtils and utils/EventRecorder): a core/v1 Event named
// "<component>.<hash>", the hash being Java's String.hashCode of
// reason+message+type+kind+name+uid masked to a positive int
// (EventUtils.generateEventName); said again, the same Event gets count+1
// and a new lastTimestamp (EventUtils.createOrUpdateEventWithLabels).

const (
	eventWarning      = "Warning"
	componentOperator = "Operator" // EventRecorder.Component
	componentSnapshot = "Snapshot"
	// componentJobManager is EventRecorder.Component.JobManagerDeployment,
	// the component of the deployment controller's spec-change and error
	// events.
	componentJobManager = "JobManagerDeployment"
	componentJob        = "Job"
	eventNormal         = "Normal"
)

var eventGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// javaHashCode is java.lang.String.hashCode: s[0]*31^(n-1) + … over UTF-16
// code units, in 32-bit arithmetic.
func javaHashCode(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// eventName is EventUtils.generateEventName.
func eventName(obj *unstructured.Unstructured, typ, reason, message, component string) string {
	h := javaHashCode(reason+message+typ+obj.GetKind()+obj.GetName()+string(obj.GetUID())) & 0x7FFFFFFF
	return fmt.Sprintf("%s.%d", component, h)
}

// recordEvent writes or repeats an Event on obj as EventUtils does.
func (o *Operator) recordEvent(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, typ, reason, message, component string) {
	r := dyn.Resource(eventGVR).Namespace(obj.GetNamespace())
	name := eventName(obj, typ, reason, message, component)
	now := time.Now().UTC().Format(time.RFC3339)
	existing, err := r.Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		count, _, _ := unstructured.NestedInt64(existing.Object, "count")
		_ = unstructured.SetNestedField(existing.Object, count+1, "count")
		_ = unstructured.SetNestedField(existing.Object, now, "lastTimestamp")
		if _, err := r.Update(ctx, existing, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
			o.logf("operator: event %s on %s: %v", reason, obj.GetName(), err)
		}
		return
	}
	if !apierrors.IsNotFound(err) {
		return
	}
	ev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"name": name, "namespace": obj.GetNamespace()},
		"involvedObject": map[string]any{
			"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(), "name": obj.GetName(),
			"namespace": obj.GetNamespace(), "uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(),
		},
		"type": typ, "reason": reason, "message": message, "count": int64(1),
		"firstTimestamp": now, "lastTimestamp": now,
		"source": map[string]any{"component": component},
	}}
	if _, err := r.Create(ctx, ev, metav1.CreateOptions{FieldManager: operatorManager}); err != nil {
		o.logf("operator: event %s on %s: %v", reason, obj.GetName(), err)
	}
}

// warnEvery records a Warning event that the operator says once per
// reconciliation of a resource it reschedules every reconcile interval
// (a refused snapshot, a failed cleanup, a job not found): at most once
// per interval.
func (o *Operator) warnEvery(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, reason, message, component string) {
	key := string(obj.GetUID()) + "/" + reason + "/" + message
	o.mu.Lock()
	if o.said == nil {
		o.said = map[string]time.Time{}
	}
	due := time.Since(o.said[key]) >= o.reconcileInterval()
	if due {
		o.said[key] = time.Now()
	}
	o.mu.Unlock()
	if due {
		o.recordEvent(ctx, dyn, obj, eventWarning, reason, message, component)
	}
}

// eventOnce records an event once per key, as EventRecorder.triggerEventOnce
// does with its messageKey (e.g. "SpecChange: <generation>").
func (o *Operator) eventOnce(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, typ, reason, message, component, key string) {
	k := string(obj.GetUID()) + "/once/" + key
	o.mu.Lock()
	if o.said == nil {
		o.said = map[string]time.Time{}
	}
	_, done := o.said[k]
	o.said[k] = time.Now()
	o.mu.Unlock()
	if !done {
		o.recordEvent(ctx, dyn, obj, typ, reason, message, component)
	}
}

// reconcileInterval is kubernetes.operator.reconcile.interval, 60 s unless
// the model is given another (KubernetesOperatorConfigOptions
// .OPERATOR_RECONCILE_INTERVAL).
func (o *Operator) reconcileInterval() time.Duration {
	if o.ReconcileInterval > 0 {
		return o.ReconcileInterval
	}
	return 60 * time.Second
}
