package flinkrun

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the test bed's real-Flink, node and differential tests (package
// testbed) read of the runner and the node stand-in.

// The label selectors of the pods Flink's native Kubernetes integration
// creates, the standalone mode's type label, and the pods' resource.
const (
	JobManagerSelector  = jobManagerSelector
	TaskManagerSelector = taskManagerSelector
	StandaloneType      = standaloneType
)

// PodsGVR is the pods' resource (core/v1).
var PodsGVR = podsGVR

// Alive says whether the cluster's processes run.
func (c *FlinkCluster) Alive() bool { return c.alive() }

// PodReady says whether the pod is Ready, as the node reports it.
func PodReady(p *unstructured.Unstructured) bool { return podReady(p) }

// Poll calls cond until it is true or fails, or timeout passes.
func Poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) (bool, error) {
	return poll(ctx, timeout, cond)
}
