package opmodel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Flink is what makes the model's jobs real (Operator.Flink): the cluster
// the operator would start for a deployment runs as real Flink and takes
// the savepoints (testbed.RealFlink runs Flink 2.2.1 on this machine).
// Without one the model reports each job running and writes placeholder
// files in Flink's layout. The model's rules (when to deploy, suspend,
// restore, from which path) are the same with and without it.
type Flink interface {
	// Start runs the deployment's cluster and waits until its job runs,
	// restoring from restore (a path, LastStateDummyPath, or ""), with the
	// job id the operator chose (jobID); submit is false when the job
	// resumes in a cluster that runs already. It returns the job's id.
	Start(ctx context.Context, dep *unstructured.Unstructured, restore, jobID string, submit bool) (string, error)
	// Running says whether a cluster of the deployment runs.
	Running(dep *unstructured.Unstructured) bool
	// Stop stops the deployment's cluster (and deletes its HA metadata
	// when deleteHA).
	Stop(dep *unstructured.Unstructured, deleteHA bool)
	// Savepoint takes a savepoint of the job into dir as req says and
	// returns its path.
	Savepoint(ctx context.Context, dep *unstructured.Unstructured, jobID, dir string, req SavepointRequest) (string, error)
}

// SavepointRequest is how a savepoint is asked of Flink: Stop stops the job
// with it (Flink's stop-with-savepoint), Drain emits MAX_WATERMARK first
// (stop only), FormatType is CANONICAL or NATIVE ("" is CANONICAL).
type SavepointRequest struct {
	Stop, Drain bool
	FormatType  string
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
