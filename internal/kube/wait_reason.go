package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// WaitReason is Flink's own reason for a wait's end o, to follow the
// operator's words in the wait's error: for a JobManager that exited or a
// job that failed (WaitNotReady, WaitNeverRan), the last cause in the
// JobManager's log (JobManagerRootCause), worded ". <where>: <cause>", and
// that cause alone (for naming what it refers to). Nothing when the
// operator refused the change itself (nothing of Flink ran for it) or no
// cause was logged; a runner that may not read pods/log is told what to
// grant.
func WaitReason(ctx context.Context, cfg *rest.Config, ns, name string, o WaitOutcome) (words, cause string) {
	if o.Kind != WaitNotReady && o.Kind != WaitNeverRan {
		return "", ""
	}
	rc, ok, err := JobManagerRootCause(ctx, cfg, ns, name)
	switch {
	case apierrors.IsForbidden(err):
		return ". Flink's reason is in the JobManager's log: grant the runner list on pods and get on pods/log (docs: Runner permissions) to read it here", ""
	case err != nil || !ok:
		return "", ""
	}
	return ". " + rc.Describe(), rc.Cause
}
