package flinkdeploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// SupportedOperatorVersions are the Flink Kubernetes Operator releases
// whose CRDs the provider is checked against here (the docs' compatibility
// table, docs/guides/runner-permissions.md "Operator versions"). 1.15.0 is
// also the operator the test bed runs (realoperator tests).
var SupportedOperatorVersions = []string{"1.13.0", "1.14.0", "1.15.0"}

// operatorCRDSchema reads the v1beta1 openAPIV3Schema of a CRD of an
// operator release from flink-operator-<version>/crds beside the 1.15.0
// folder the test bed reads (testbed.OperatorFilesDir:
// $FLINKSTATE_OPERATOR_FILES, or ../shared/testbed/flink-operator-1.15.0),
// the unmodified helm/flink-kubernetes-operator/crds of each release tag.
// Without them the check is skipped in a plain unit run and fails in an
// acceptance run (make test), where the test bed needs them anyway.
func operatorCRDSchema(t *testing.T, version, plural string) map[string]any {
	t.Helper()
	parent := filepath.Join("..", "..", "..", "shared", "testbed")
	if d := os.Getenv("FLINKSTATE_OPERATOR_FILES"); d != "" {
		parent = filepath.Dir(d)
	}
	dir := filepath.Join(parent, "flink-operator-"+version, "crds")
	b, err := os.ReadFile(filepath.Join(dir, plural+".flink.apache.org-v1.yml"))
	if os.IsNotExist(err) {
		msg := fmt.Sprintf("the operator %s CRDs are not in %s: put flink-operator-%s/crds beside the folder FLINKSTATE_OPERATOR_FILES names", version, dir, version)
		if os.Getenv("TF_ACC") == "" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1beta1" {
			return v.Schema.OpenAPIV3Schema
		}
	}
	t.Fatalf("operator %s: %s has no v1beta1", version, plural)
	return nil
}

// schemaErrors checks v against a structural schema as the API server's
// CRD validation and pruning treat what the provider writes
// (k8s.io/apiextensions-apiserver: a field the schema does not name is
// pruned unless x-kubernetes-preserve-unknown-fields or
// additionalProperties allow it; type and enum are validated). apiVersion,
// kind and metadata are the API server's own (a CRD's schema need not name
// them).
func schemaErrors(path string, v any, s map[string]any) []string {
	if s == nil {
		return nil
	}
	var errs []string
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", path, v, enum))
	}
	typ, _ := s["type"].(string)
	preserve, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	intOrString, _ := s["x-kubernetes-int-or-string"].(bool)
	switch x := v.(type) {
	case map[string]any:
		if typ != "object" && (typ != "" || !preserve) {
			return append(errs, fmt.Sprintf("%s: an object where the schema has type %q", path, typ))
		}
		props, _ := s["properties"].(map[string]any)
		addl, _ := s["additionalProperties"].(map[string]any)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if path == "" && (k == "apiVersion" || k == "kind" || k == "metadata") {
				continue
			}
			sub, _ := props[k].(map[string]any)
			switch {
			case sub != nil:
				errs = append(errs, schemaErrors(path+"."+k, x[k], sub)...)
			case addl != nil:
				errs = append(errs, schemaErrors(path+"."+k, x[k], addl)...)
			case !preserve:
				errs = append(errs, fmt.Sprintf("%s.%s: not in the schema (the API server would prune it)", path, k))
			}
		}
	case []any:
		if typ != "array" {
			return append(errs, fmt.Sprintf("%s: a list where the schema has type %q", path, typ))
		}
		items, _ := s["items"].(map[string]any)
		for i, e := range x {
			errs = append(errs, schemaErrors(fmt.Sprintf("%s[%d]", path, i), e, items)...)
		}
	case string:
		if typ != "string" && !intOrString && (typ != "" || !preserve) {
			errs = append(errs, fmt.Sprintf("%s: a string where the schema has type %q", path, typ))
		}
	case bool:
		if typ != "boolean" {
			errs = append(errs, fmt.Sprintf("%s: a boolean where the schema has type %q", path, typ))
		}
	case int64, int:
		if typ != "integer" && typ != "number" && !intOrString {
			errs = append(errs, fmt.Sprintf("%s: an integer where the schema has type %q", path, typ))
		}
	case float64:
		if typ != "number" && !(typ == "integer" && x == float64(int64(x))) && !intOrString {
			errs = append(errs, fmt.Sprintf("%s: a number where the schema has type %q", path, typ))
		}
	}
	return errs
}

// renderedDeployment is a FlinkDeployment as flinkstate_deployment writes
// it: every spec field it sets, with the pod template the provider adds
// (fsGroup, the S3 plugin, the local state emptyDir).
func renderedDeployment(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	pod, findings := flinkconf.PodTemplate("", flinkconf.Input{FlinkVersion: "2.2.1", Identity: "irsa", UpgradeMode: "last-state", HasJob: true,
		State: flinkconf.State{Backend: "rocksdb", LocalDir: "/opt/flink/state", CheckpointDir: "s3://acme/flink/orders/checkpoints"}})
	if len(findings) > 0 || pod == nil {
		t.Fatalf("pod template: %v", findings)
	}
	if !strings.Contains(fmt.Sprint(pod), flinkconf.LocalVolumeName) {
		t.Fatalf("the pod template has no local state volume: %v", pod)
	}
	s := fullSpec()
	s.PodTemplate = pod
	nonce := int64(3)
	s.Job.SavepointRedeployNonce = &nonce
	return throughJSON(t, s.Render("data", "orders"))
}

// renderedSnapshots are the FlinkStateSnapshots the provider writes:
// flinkstate_snapshot's savepoint and checkpoint, a recorded savepoint
// (alreadyExists), and flinkstate_deployment's upgrade and final savepoints.
func renderedSnapshots(t *testing.T) map[string]*unstructured.Unstructured {
	return map[string]*unstructured.Unstructured{
		"savepoint": throughJSON(t, kube.SnapshotSpec{DeploymentName: "orders", Type: "savepoint", FormatType: "CANONICAL",
			Path: "s3://acme/flink/orders/savepoints", BackoffLimit: 1}.Object("data", "", "orders-")),
		"checkpoint": throughJSON(t, kube.SnapshotSpec{DeploymentName: "orders", Type: "checkpoint", BackoffLimit: 1}.Object("data", "c", "")),
		"recorded": throughJSON(t, kube.SnapshotSpec{Type: "savepoint", FormatType: "NATIVE", AlreadyExists: true,
			Path: "s3://acme/flink/orders/savepoints/savepoint-1"}.Object("data", "r", "")),
		"final":   throughJSON(t, kube.FinalSavepointObject("data", "orders", "CANONICAL", "", "other/orders")),
		"upgrade": throughJSON(t, kube.UpgradeSavepointObject("data", "CANONICAL", kube.UpgradeTarget{Deployment: "orders"})),
	}
}

// Every object the provider writes is valid, and kept whole, under the
// CRDs of each supported operator release.
func TestOperatorVersions_writtenObjectsFitEachCRD(t *testing.T) {
	dep := renderedDeployment(t)
	snaps := renderedSnapshots(t)
	for _, v := range SupportedOperatorVersions {
		t.Run(v, func(t *testing.T) {
			for _, e := range schemaErrors("", dep.Object, operatorCRDSchema(t, v, "flinkdeployments")) {
				t.Errorf("FlinkDeployment under operator %s: %s", v, e)
			}
			snapSchema := operatorCRDSchema(t, v, "flinkstatesnapshots")
			for name, obj := range snaps {
				for _, e := range schemaErrors("", obj.Object, snapSchema) {
					t.Errorf("FlinkStateSnapshot (%s) under operator %s: %s", name, v, e)
				}
			}
		})
	}
}

// The status fields the provider reads (kube.ReadDeploymentStatus,
// RecordedSavepoint, the waits; kube.ReadSnapshotStatus and the pending
// snapshot lookups) are in the status schema of each supported release.
func TestOperatorVersions_readStatusFieldsInEachCRD(t *testing.T) {
	read := map[string][]string{
		"flinkdeployments": {"lifecycleState", "observedGeneration", "error", "jobManagerDeploymentStatus", "jobStatus.state",
			"jobStatus.jobId", "jobStatus.startTime", "jobStatus.upgradeSavepointPath", "jobStatus.savepointInfo.lastSavepoint.location",
			"reconciliationStatus.state", "reconciliationStatus.lastReconciledSpec"},
		"flinkstatesnapshots": {"state", "path", "error", "failures", "resultTimestamp", "triggerTimestamp"},
	}
	for _, v := range SupportedOperatorVersions {
		for plural, fields := range read {
			s := operatorCRDSchema(t, v, plural)
			for _, f := range fields {
				at := s
				for _, k := range append([]string{"status"}, strings.Split(f, ".")...) {
					props, _ := at["properties"].(map[string]any)
					at, _ = props[k].(map[string]any)
				}
				if at == nil {
					t.Errorf("operator %s: %s has no status.%s", v, plural, f)
				}
			}
		}
	}
}

// The check refuses what a CRD would prune or reject, so the test above
// can fail.
func TestOperatorVersions_schemaCheckRefuses(t *testing.T) {
	s := operatorCRDSchema(t, "1.15.0", "flinkdeployments")
	obj := renderedDeployment(t).Object
	spec := obj["spec"].(map[string]any)
	spec["notAField"] = "x"
	spec["flinkVersion"] = "v3_0"
	spec["job"].(map[string]any)["parallelism"] = "two"
	got := schemaErrors("", obj, s)
	want := []string{".spec.flinkVersion: v3_0 is not one of", ".spec.job.parallelism: a string", ".spec.notAField: not in the schema"}
	if len(got) != len(want) {
		t.Fatalf("errors %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d = %q, want %q…", i, got[i], want[i])
		}
	}
}
