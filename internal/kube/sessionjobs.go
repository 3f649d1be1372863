package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// FlinkSessionJobGVR: the operator's FlinkSessionJob, a job submitted to a
// session cluster (a FlinkDeployment without a job) named by its
// spec.deploymentName in the same namespace.
var FlinkSessionJobGVR = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinksessionjobs"}

// SessionBlockKey is the operator setting that makes it refuse to delete a
// session cluster with FlinkSessionJobs on it
// (KubernetesOperatorConfigOptions.BLOCK_ON_SESSION_JOBS,
// "kubernetes.operator.session.deletion.block-on-session-jobs", default
// true, a dynamic option read from the deployment's observed configuration:
// the operator's defaults overlaid with the FlinkDeployment's
// flinkConfiguration).
const SessionBlockKey = "kubernetes.operator.session.deletion.block-on-session-jobs"

// ReasonCleanupFailed is the Event reason the operator gives when it does
// not finish deleting a FlinkDeployment (EventRecorder.Reason.CleanupFailed,
// written by SessionReconciler.cleanupInternal for session jobs and for
// jobs submitted outside FlinkSessionJobs that are not terminated).
const ReasonCleanupFailed = "CleanupFailed"

// SessionJobsBlock reports whether the operator, under the deployment's
// flinkConfiguration conf, refuses to delete a session cluster while
// session jobs are on it. A value in the operator's own default
// configuration (its ConfigMap) cannot be read from here; the key's default
// is true.
func SessionJobsBlock(conf map[string]string) bool {
	return !strings.EqualFold(strings.TrimSpace(conf[SessionBlockKey]), "false")
}

// SessionJobs lists the FlinkSessionJobs of the session cluster ns/name as
// the operator finds them (EventSourceUtils.getSessionJobInformerEventSource:
// the session jobs of the namespace whose spec.deploymentName is the
// deployment's name): live are those not being deleted, terminating those
// with a deletionTimestamp (the operator cancels their job and then lets
// them go, FlinkSessionJobController.cleanup). Both are sorted.
func SessionJobs(ctx context.Context, dyn dynamic.Interface, ns, name string) (live, terminating []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	list, err := dyn.Resource(FlinkSessionJobGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the FlinkSessionJobs of namespace %s: %w", ns, err)
	}
	for _, j := range list.Items {
		if d, _, _ := unstructured.NestedString(j.Object, "spec", "deploymentName"); d != name {
			continue
		}
		if j.GetDeletionTimestamp() != nil {
			terminating = append(terminating, j.GetName())
		} else {
			live = append(live, j.GetName())
		}
	}
	sort.Strings(live)
	sort.Strings(terminating)
	return live, terminating, nil
}

// SessionJobsMessage is what the operator says when session jobs block the
// delete (SessionReconciler.cleanupInternal: "The session jobs %s should be
// deleted first", the names as a Java List prints them).
func SessionJobsMessage(names []string) string {
	return fmt.Sprintf("The session jobs [%s] should be deleted first", strings.Join(names, ", "))
}

// WaitSessionJobsGone waits until none of the FlinkSessionJobs of ns/name
// that are being deleted is left, or a live one appears; it returns the
// live ones then (nil when all are gone).
func WaitSessionJobsGone(ctx context.Context, dyn dynamic.Interface, ns, name string, timeout time.Duration) ([]string, error) {
	var live, terminating []string
	err := poll(ctx, time.Second, timeout, func(ctx context.Context) (bool, error) {
		var err error
		live, terminating, err = SessionJobs(ctx, dyn, ns, name)
		return err == nil && (len(live) > 0 || len(terminating) == 0), err
	}, func(readErr error, end waitEnd) error {
		return fmt.Errorf("the FlinkSessionJobs %v of session cluster %s/%s are still being deleted %s: the operator cancels "+
			"their jobs first (FlinkSessionJobController.cleanup)%s", terminating, ns, name, end.when(), readFailure(readErr))
	})
	return live, err
}
