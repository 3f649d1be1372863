package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// EventGVR: core/v1 Events, where the operator reports what it cannot write
// into a status (flink-kubernetes-operator release-1.15.0,
// utils/EventUtils.buildEvent: a v1 Event whose involvedObject is the
// resource, with type, reason, message, count and lastTimestamp; an event
// said again is the same object with count+1 and a new lastTimestamp,
// EventUtils.createOrUpdateEventWithLabels).
var EventGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// Reasons the operator gives (utils/EventRecorder.Reason) that the waits read.
const (
	// ReasonValidationError: the validator refused a FlinkDeployment spec
	// (FlinkDeploymentController.validateDeployment) or a FlinkStateSnapshot
	// (FlinkStateSnapshotController.validateSnapshot, e.g. DefaultValidator
	// "Target for snapshot %s/%s was not found").
	ReasonValidationError = "ValidationError"
)

// OperatorEvent is one Event written on a resource.
type OperatorEvent struct {
	Type, Reason, Message string
	Count                 int64
	Last                  time.Time
}

// ObjectEvents lists the Events whose involvedObject is obj (matched by UID,
// so an earlier object of the same name is not read), newest first.
func ObjectEvents(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) ([]OperatorEvent, error) {
	if obj.GetUID() == "" {
		return nil, nil
	}
	list, err := dyn.Resource(EventGVR).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(obj.GetUID()),
	})
	if err != nil {
		return nil, fmt.Errorf("reading the events of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	out := make([]OperatorEvent, 0, len(list.Items))
	for _, e := range list.Items {
		ev := OperatorEvent{}
		ev.Type, _, _ = unstructured.NestedString(e.Object, "type")
		ev.Reason, _, _ = unstructured.NestedString(e.Object, "reason")
		ev.Message, _, _ = unstructured.NestedString(e.Object, "message")
		ev.Count, _, _ = unstructured.NestedInt64(e.Object, "count")
		for _, f := range []string{"lastTimestamp", "eventTime", "firstTimestamp"} {
			if s, _, _ := unstructured.NestedString(e.Object, f); s != "" {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					ev.Last = t
					break
				}
			}
		}
		if ev.Last.IsZero() {
			ev.Last = e.GetCreationTimestamp().Time
		}
		out = append(out, ev)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	return out, nil
}

// latestEvent is the newest event of reason said at or after since (the
// API server keeps lastTimestamp at second precision, so since is rounded
// down to the second), or nil.
func latestEvent(events []OperatorEvent, reason string, since time.Time) *OperatorEvent {
	since = since.Truncate(time.Second)
	for i := range events {
		if events[i].Reason == reason && !events[i].Last.Before(since) {
			return &events[i]
		}
	}
	return nil
}

// describeEvents words the newest warning events for a wait that ended
// without its condition ("" for none).
func describeEvents(events []OperatorEvent) string {
	var parts []string
	for _, e := range events {
		if e.Type != "Warning" || len(parts) == 3 {
			continue
		}
		p := fmt.Sprintf("%s: %s", e.Reason, e.Message)
		if e.Count > 1 {
			p += fmt.Sprintf(" (%d times, last at %s)", e.Count, e.Last.UTC().Format(time.RFC3339))
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return ". The operator's events: " + strings.Join(parts, "; ")
}

// RefusedAtAdmission tells whether the API server refused a write because
// a validating admission webhook denied it (the operator's webhook runs
// its validator there), and returns the webhook's name and its message.
// The API server words such a refusal "admission webhook %q denied the
// request: %s" (k8s.io/apiserver/pkg/admission/plugin/webhook/errors
// .ToStatusErr), with status 400 unless the webhook gave another code.
func RefusedAtAdmission(err error) (webhook, message string, ok bool) {
	if err == nil {
		return "", "", false
	}
	msg := err.Error()
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		msg = se.Status().Message
	}
	const prefix, sep = "admission webhook \"", "\" denied the request"
	i := strings.Index(msg, prefix)
	if i < 0 {
		return "", "", false
	}
	rest := msg[i+len(prefix):]
	j := strings.Index(rest, sep)
	if j < 0 {
		return "", "", false
	}
	webhook, message = rest[:j], strings.TrimPrefix(strings.TrimPrefix(rest[j+len(sep):], ":"), " ")
	return webhook, message, true
}
