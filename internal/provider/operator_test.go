package provider

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// The test bed runs no Flink operator; testbed.Operator models its rules
// (and Flink's files in S3). Tests change it only through testbed.Faults.

// fixtureBucket is the bucket the fixtures' store_id names; Flink (the
// model) writes checkpoints and savepoints there, so it must exist while a
// test runs the operator. It is removed again when the last such test ends,
// so that a later make demo on the same test bed can create it, unless it
// was there before this process needed it.
const fixtureBucket = "acme-flink-state"

var fixtureBucketUsers struct {
	sync.Mutex
	n int
	// created: this process created the bucket. One that was there already
	// belongs to another process (a concurrent go test on the same test
	// bed, make demo) and is left to it: emptying it would delete that
	// process's files while it runs.
	created bool
}

// startOperator runs the operator model on ns until the test ends. Snapshot
// retries wait 100ms × 2^(failures-1) instead of the operator's 10s base.
//
// Its jobs are not real Flink: the model reports them running and writes
// placeholder checkpoints and savepoints in Flink's layout (a _metadata in
// Flink 2.2.1's format referencing small files the model writes, no job
// state: testbed/operator_metadata.go). That is for speed: some 60 tests use it,
// and a real cluster is a JobManager and a TaskManager JVM and tens of
// seconds per deploy on these 2-core machines. What Flink itself does is
// tested on real Flink instead (realflink_test.go, and
// startRealFlinkOperator in realflink_savepoint_test.go: the same model
// with its jobs run by real Flink).
func startOperator(t *testing.T, ns string) *testbed.Operator {
	t.Helper()
	return startOperatorWith(t, ns, nil)
}

// startOperatorWith is startOperator with the model configured by set
// before it runs (the operator's own default configuration, its reconcile
// interval).
func startOperatorWith(t *testing.T, ns string, set func(*testbed.Operator)) *testbed.Operator {
	t.Helper()
	useFixtureBucket(t)
	op := &testbed.Operator{Namespace: ns, S3: testAWS(t).S3, Logf: t.Logf, RetryBase: 100 * time.Millisecond}
	if set != nil {
		set(op)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); op.Run(ctx, testKube(t).Dynamic, 150*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	return op
}

func useFixtureBucket(t *testing.T) {
	t.Helper()
	ctx, c := context.Background(), testAWS(t).S3
	fixtureBucketUsers.Lock()
	defer fixtureBucketUsers.Unlock()
	if fixtureBucketUsers.n == 0 {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(fixtureBucket)})
		var owned *s3types.BucketAlreadyOwnedByYou
		if err != nil && !errors.As(err, &owned) {
			t.Fatalf("creating bucket %s: %v", fixtureBucket, err)
		}
		fixtureBucketUsers.created = err == nil
	}
	fixtureBucketUsers.n++
	t.Cleanup(func() {
		fixtureBucketUsers.Lock()
		defer fixtureBucketUsers.Unlock()
		if fixtureBucketUsers.n--; fixtureBucketUsers.n > 0 || !fixtureBucketUsers.created {
			return
		}
		if _, err := s3state.DeleteAll(ctx, c, fixtureBucket, "", nil); err != nil {
			t.Logf("emptying %s: %v", fixtureBucket, err)
		}
		if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(fixtureBucket)}); err != nil {
			t.Logf("deleting %s: %v", fixtureBucket, err)
		}
	})
}

// runningJob creates a FlinkDeployment directly (not through Terraform) with
// the given Flink configuration and waits until the operator model runs its
// job: what a snapshot test needs of "a running job".
func runningJob(t *testing.T, ns, name string, conf map[string]any) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkDeployment",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"image":              "flink:2.2.1-java17",
			"flinkVersion":       "v2_2",
			"serviceAccount":     "flink",
			"flinkConfiguration": conf,
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1}},
			"job":                map[string]any{"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "upgradeMode": "savepoint", "parallelism": int64(1)},
		},
	}}
	ctx := context.Background()
	if _, err := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating FlinkDeployment %s/%s: %v", ns, name, err)
	}
	if _, err := kube.WaitDeployment(ctx, testKube(t).Dynamic, ns, name, "running", time.Minute, 100*time.Millisecond); err != nil {
		t.Fatalf("FlinkDeployment %s/%s: %v", ns, name, err)
	}
	live, err := getDeployment(t, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return live
}
