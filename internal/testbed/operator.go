package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// FakeOperator plays the Flink Kubernetes Operator's part on the test bed,
// where no operator (and no Flink) runs. It is a stand-in, not the operator:
// it reconciles nothing, it only writes what the operator would report.
//
// For each new FlinkStateSnapshot it adds a finalizer and writes the status
// Snapshot returns; for each new generation of a FlinkDeployment it adds the
// operator's finalizer, a label and an annotation (which the provider must
// not report as drift) and writes the status Deployment returns. A nil
// function, or a nil status, means never answering. Deleted objects lose the
// finalizer after FinalizerDelay.
type FakeOperator struct {
	Namespace      string
	Snapshot       func(obj *unstructured.Unstructured) map[string]any
	Deployment     func(obj *unstructured.Unstructured) map[string]any
	FinalizerDelay time.Duration
	Logf           func(string, ...any)

	mu      sync.Mutex
	handled map[string]bool
}

// Finalizers the fake operator sets.
const (
	SnapshotFinalizer   = "flinkstate.test/fake-operator"
	DeploymentFinalizer = "flinkdeployments.flink.apache.org/finalizer"
	operatorManager     = "flink-kubernetes-operator"
)

// Run reconciles every interval until ctx ends.
func (o *FakeOperator) Run(ctx context.Context, dyn dynamic.Interface, interval time.Duration) {
	if o.FinalizerDelay == 0 {
		o.FinalizerDelay = 500 * time.Millisecond
	}
	for ctx.Err() == nil {
		if o.Snapshot != nil {
			o.snapshots(ctx, dyn)
		}
		if o.Deployment != nil {
			o.deployments(ctx, dyn)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func (o *FakeOperator) logf(f string, a ...any) {
	if o.Logf != nil {
		o.Logf(f, a...)
	}
}

// releaseIfDeleted removes the finalizers of an object being deleted once
// FinalizerDelay has passed; it tells whether the object is being deleted.
func (o *FakeOperator) releaseIfDeleted(ctx context.Context, r dynamic.ResourceInterface, obj *unstructured.Unstructured) bool {
	ts := obj.GetDeletionTimestamp()
	if ts == nil {
		return false
	}
	if time.Since(ts.Time) >= o.FinalizerDelay {
		_, _ = r.Patch(ctx, obj.GetName(), ktypes.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: operatorManager})
	}
	return true
}

func (o *FakeOperator) snapshots(ctx context.Context, dyn dynamic.Interface) {
	r := dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace(o.Namespace)
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if o.releaseIfDeleted(ctx, r, obj) {
			continue
		}
		o.mu.Lock()
		if o.handled == nil {
			o.handled = map[string]bool{}
		}
		seen := o.handled[string(obj.GetUID())]
		o.handled[string(obj.GetUID())] = true
		o.mu.Unlock()
		if seen {
			continue
		}
		fin, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": []string{SnapshotFinalizer}}})
		updated, err := r.Patch(ctx, obj.GetName(), ktypes.MergePatchType, fin, metav1.PatchOptions{FieldManager: operatorManager})
		if err != nil {
			o.logf("fake operator: finalizer on snapshot %s: %v", obj.GetName(), err)
			continue
		}
		status := o.Snapshot(updated)
		if status == nil {
			continue
		}
		updated.Object["status"] = status
		if _, err := r.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
			o.logf("fake operator: status of snapshot %s: %v", obj.GetName(), err)
		} else {
			o.logf("fake operator: snapshot %s is %v", obj.GetName(), status["state"])
		}
	}
}

func (o *FakeOperator) deployments(ctx context.Context, dyn dynamic.Interface) {
	r := dyn.Resource(kube.FlinkDeploymentGVR).Namespace(o.Namespace)
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if o.releaseIfDeleted(ctx, r, obj) {
			continue
		}
		observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
		if observed == obj.GetGeneration() {
			continue
		}
		meta := []byte(`{"metadata":{"finalizers":["` + DeploymentFinalizer + `"],` +
			`"labels":{"app.kubernetes.io/managed-by":"flink-kubernetes-operator"},` +
			`"annotations":{"flink.apache.org/last-reconciled":"` + time.Now().UTC().Format(time.RFC3339) + `"}}}`)
		updated, err := r.Patch(ctx, obj.GetName(), ktypes.MergePatchType, meta, metav1.PatchOptions{FieldManager: operatorManager})
		if err != nil {
			continue
		}
		status := o.Deployment(updated)
		if status == nil {
			status = map[string]any{}
		}
		status["observedGeneration"] = updated.GetGeneration()
		updated.Object["status"] = status
		if _, err := r.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: operatorManager}); err == nil {
			o.logf("fake operator: deployment %s is %v", obj.GetName(), status["lifecycleState"])
		}
	}
}

// DemoJobID is the JobID the fake operator reports for running jobs.
const DemoJobID = "9f3c2a8d7e6b5a4c3d2e1f0a9b8c7d6e"

// CompleteSnapshotAt answers COMPLETED with a savepoint path under dir.
func CompleteSnapshotAt(dir string) func(*unstructured.Unstructured) map[string]any {
	return func(obj *unstructured.Unstructured) map[string]any {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		return map[string]any{"state": kube.SnapshotCompleted, "path": strings.TrimSuffix(dir, "/") + "/savepoint-" + obj.GetName(),
			"resultTimestamp": now, "triggerTimestamp": now, "triggerId": "trigger-" + obj.GetName(), "failures": int64(0)}
	}
}

// RunningDeployment answers a STABLE deployment with a RUNNING job.
func RunningDeployment(obj *unstructured.Unstructured) map[string]any {
	return map[string]any{
		"lifecycleState":             "STABLE",
		"jobManagerDeploymentStatus": "READY",
		"jobStatus":                  map[string]any{"state": "RUNNING", "jobId": DemoJobID, "jobName": obj.GetName()},
	}
}

// DemoOperator is the fake operator of make demo: deployments run, and, as
// Flink would, write a completed checkpoint into their checkpoint dir;
// snapshots complete into the deployment's savepoint dir, with a _metadata
// file in S3.
func DemoOperator(ctx context.Context, env Env, namespace string, logf func(string, ...any)) error {
	kc, err := kube.New(kube.Config{ConfigPath: env.Kubeconfig})
	if err != nil {
		return err
	}
	ac, err := newEnvAWS(ctx, env)
	if err != nil {
		return err
	}
	put := func(uri, what string) {
		bucket, key, ok := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/")
		if !ok {
			return
		}
		if _, err := ac.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(what)}); err != nil {
			logf("fake operator: writing %s: %v", uri, err)
		}
	}
	confOf := func(deployment string) map[string]string {
		obj, err := kc.Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(namespace).Get(ctx, deployment, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		cfg, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "flinkConfiguration")
		return cfg
	}
	op := &FakeOperator{
		Namespace: namespace,
		Logf:      logf,
		Deployment: func(obj *unstructured.Unstructured) map[string]any {
			cfg, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "flinkConfiguration")
			if dir := cfg["execution.checkpointing.dir"]; dir != "" {
				for id := 1; id <= 2; id++ { // Flink writes _metadata last, when a checkpoint completes
					put(fmt.Sprintf("%s/%s/shared/state-%d.sst", dir, DemoJobID, id), "sst")
					put(fmt.Sprintf("%s/%s/chk-%d/_metadata", dir, DemoJobID, id), "metadata")
				}
			}
			return RunningDeployment(obj)
		},
		Snapshot: func(obj *unstructured.Unstructured) map[string]any {
			dep, _, _ := unstructured.NestedString(obj.Object, "spec", "jobReference", "name")
			dir := confOf(dep)["execution.checkpointing.savepoint-dir"]
			if dir == "" {
				return map[string]any{"state": kube.SnapshotFailed, "failures": int64(1),
					"error": `{"type":"java.lang.IllegalStateException","message":"no savepoint directory configured for ` + dep + `"}`}
			}
			st := CompleteSnapshotAt(dir)(obj)
			put(st["path"].(string)+"/_metadata", "savepoint")
			return st
		},
	}
	op.Run(ctx, kc.Dynamic, 200*time.Millisecond)
	return nil
}

// newEnvAWS builds AWS clients for the test bed from its env (credentials
// included, so the SDK never looks elsewhere).
func newEnvAWS(ctx context.Context, env Env) (*awsclient.Clients, error) {
	for _, kv := range env.Vars() {
		os.Setenv(kv[0], kv[1])
	}
	return awsclient.New(ctx, awsclient.Config{Region: env.AWSRegion, Endpoint: env.AWSEndpoint})
}
