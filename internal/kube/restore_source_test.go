package kube

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func haConfigMap(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns",
			"labels": map[string]any{"app": "orders", "type": "flink-native-kubernetes", "configmap-type": "high-availability"}},
	}}
}

func notRunningDeployment(job, jm, upgradeSavepoint string) *unstructured.Unstructured {
	js := map[string]any{"state": job}
	if upgradeSavepoint != "" {
		js["upgradeSavepointPath"] = upgradeSavepoint
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns"},
		"status":   map[string]any{"jobStatus": js, "jobManagerDeploymentStatus": jm},
	}}
}

// withLastReconciled records upgradeMode as the last reconciled spec's, in
// the form the operator writes it (SpecUtils.writeSpecWithMeta).
func withLastReconciled(obj *unstructured.Unstructured, upgradeMode string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(obj.Object, `{"spec":{"job":{"upgradeMode":"`+upgradeMode+`"}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":false}}`,
		"status", "reconciliationStatus", "lastReconciledSpec")
	return obj
}

// jobManagerDeployment is the JobManager Deployment with its Available
// condition False, since its creation when neverStarted, else since later.
func jobManagerDeployment(neverStarted bool) *unstructured.Unstructured {
	since := "2026-12-01T10:00:00Z"
	if !neverStarted {
		since = "2026-12-01T10:05:00Z"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "orders", "namespace": "ns", "creationTimestamp": "2026-12-01T10:00:00Z"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False",
			"reason": "MinimumReplicasUnavailable", "lastTransitionTime": since}}},
	}}
}

// What the operator restores a job that is not running from, by upgrade
// mode and what it finds (AbstractJobReconciler/ApplicationReconciler
// .getJobUpgrade).
func TestNotRunningRestore(t *testing.T) {
	cases := []struct {
		name       string
		dep        *unstructured.Unstructured
		mode       string
		configMaps []runtime.Object
		proceeds   bool
		want       string
	}{
		{"stateless", notRunningDeployment("RECONCILING", "ERROR", ""), "stateless", nil, true, "empty state"},
		{"HA metadata", notRunningDeployment("RECONCILING", "ERROR", ""), "last-state",
			[]runtime.Object{haConfigMap("orders-0123-config-map")}, true, "HA metadata is available"},
		{"leader config map", notRunningDeployment("RECONCILING", "DEPLOYING", ""), "last-state",
			[]runtime.Object{haConfigMap("orders-jobmanager-leader")}, true, "HA metadata is available"},
		{"cluster config map only", notRunningDeployment("RECONCILING", "ERROR", ""), "last-state",
			[]runtime.Object{haConfigMap("orders-cluster-config-map")}, false, "Manual restore required"},
		{"terminal with savepoint", notRunningDeployment("FAILED", "READY", "s3://b/sp/savepoint-1"), "savepoint", nil, true, "s3://b/sp/savepoint-1"},
		{"terminal after last-state", notRunningDeployment("FAILED", "READY", LastStateDummyPath), "last-state", nil, false, "last checkpoint is unknown"},
		{"terminal without savepoint", notRunningDeployment("FINISHED", "READY", ""), "savepoint", nil, false, "no savepoint on record"},
		{"never ready", notRunningDeployment("RECONCILING", "DEPLOYING", ""), "savepoint", nil, false, "waiting for upgradeable state"},
		{"cancellable", notRunningDeployment("RESTARTING", "READY", ""), "last-state", nil, true, "using cancel"},
		// A savepoint upgrade to an image that cannot be pulled: the
		// operator deletes the JobManager that never started and restores
		// from the savepoint it recorded.
		{"never started, savepoint", withLastReconciled(notRunningDeployment("RECONCILING", "ERROR", "s3://b/sp/savepoint-2"), "savepoint"), "savepoint",
			[]runtime.Object{jobManagerDeployment(true)}, true, "never started"},
		// With none on record, it deploys the new spec from empty state:
		// no job of the spec it last deployed ran, e.g. a first deployment
		// (recorded stateless) whose JobManager never started.
		{"never started, no savepoint", withLastReconciled(notRunningDeployment("RECONCILING", "ERROR", ""), "savepoint"), "savepoint",
			[]runtime.Object{jobManagerDeployment(true)}, true, "Deleted application cluster that never started"},
		{"first deployment never started", withLastReconciled(notRunningDeployment("RECONCILING", "ERROR", ""), "stateless"), "last-state",
			[]runtime.Object{jobManagerDeployment(true)}, true, "empty state: the JobManager never started, so no job of the spec the operator last deployed (upgrade mode stateless) ran"},
		// Not for a job last reconciled last-state, nor for a JobManager
		// that was available once.
		{"never started, last-state", withLastReconciled(notRunningDeployment("RECONCILING", "ERROR", "s3://b/sp/savepoint-2"), "last-state"), "savepoint",
			[]runtime.Object{jobManagerDeployment(true)}, false, "Manual restore required"},
		{"started once", withLastReconciled(notRunningDeployment("RECONCILING", "ERROR", "s3://b/sp/savepoint-2"), "savepoint"), "savepoint",
			[]runtime.Object{jobManagerDeployment(false)}, false, "Manual restore required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{ConfigMapGVR: "ConfigMapList", DeploymentGVR: "DeploymentList"}, c.configMaps...)
			src, err := NotRunningRestore(context.Background(), dyn, c.dep, c.mode, true)
			if err != nil {
				t.Fatal(err)
			}
			if src.Proceeds != c.proceeds || !strings.Contains(src.From+" "+src.Path+" "+src.Why, c.want) {
				t.Errorf("%+v, want proceeds %v and %q", src, c.proceeds, c.want)
			}
		})
	}
}

// The last reconciled spec as the operator writes it (spec and
// resource_metadata) and in its older form (the spec alone), both read as
// SpecUtils.deserializeSpecWithMeta reads them.
func TestLastReconciled(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		want reconciledSpec
		ok   bool
	}{
		"with metadata": {`{"spec":{"job":{"upgradeMode":"savepoint"}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":true}}`,
			reconciledSpec{UpgradeMode: "savepoint", FirstDeployment: true, Meta: true}, true},
		"older form": {`{"job":{"upgradeMode":"last-state"},"apiVersion":"flink.apache.org/v1beta1"}`, reconciledSpec{UpgradeMode: "last-state"}, true},
		"none":       {"", reconciledSpec{}, false},
		"not JSON":   {"{", reconciledSpec{}, false},
	} {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		_ = unstructured.SetNestedField(obj.Object, c.text, "status", "reconciliationStatus", "lastReconciledSpec")
		if got, ok := lastReconciled(obj); got != c.want || ok != c.ok {
			t.Errorf("%s: %+v, %v; want %+v, %v", name, got, ok, c.want, c.ok)
		}
	}
}
