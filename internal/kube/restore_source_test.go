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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{ConfigMapGVR: "ConfigMapList"}, c.configMaps...)
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
