package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// OperatorFilesEnv names a folder holding the Flink Kubernetes Operator's
// release files the test bed reads (crds/, examples/, helm/), laid out as
// ../shared/testbed/flink-operator-1.15.0 is. They come from the operator's
// release-1.15.0 source (helm/flink-kubernetes-operator/crds, examples/,
// helm/flink-kubernetes-operator) and are never copied into this repository.
const OperatorFilesEnv = "FLINKSTATE_OPERATOR_FILES"

// OperatorCRDFiles are the four CustomResourceDefinitions the operator's Helm
// chart installs (helm/flink-kubernetes-operator/crds at release-1.15.0).
// Operator 1.15.0 watches FlinkBlueGreenDeployments too and does not start
// without that CRD.
var OperatorCRDFiles = []string{
	"flinkbluegreendeployments.flink.apache.org-v1.yml",
	"flinkdeployments.flink.apache.org-v1.yml",
	"flinksessionjobs.flink.apache.org-v1.yml",
	"flinkstatesnapshots.flink.apache.org-v1.yml",
}

// OperatorFilesDir is where the operator's release files are read from:
// $FLINKSTATE_OPERATOR_FILES, or ../shared/testbed/flink-operator-1.15.0
// beside the repository root.
func OperatorFilesDir(root string) string {
	if d := os.Getenv(OperatorFilesEnv); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(root), "shared", "testbed", "flink-operator-1.15.0")
}

// OperatorExamplesDir holds the operator's own example YAML files
// (examples/ at release-1.15.0; examples/a/b.yaml is a_b.yaml).
func OperatorExamplesDir(root string) (string, error) {
	dir := filepath.Join(OperatorFilesDir(root), "examples")
	if m, _ := filepath.Glob(filepath.Join(dir, "*.yaml")); len(m) == 0 {
		return "", fmt.Errorf("the Flink operator's examples are not in %s: set %s to a folder with the operator's release-1.15.0 examples/ (see TESTBED.md, \"The operator's files\")", dir, OperatorFilesEnv)
	}
	return dir, nil
}

// readCRDs reads all four CRDs, failing at once, naming the path, when one
// is missing.
func readCRDs(root string) (map[string][]byte, error) {
	dir := filepath.Join(OperatorFilesDir(root), "crds")
	out := map[string][]byte{}
	var missing []string
	for _, f := range OperatorCRDFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, f)
			continue
		}
		if err != nil {
			return nil, err
		}
		out[f] = b
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the Flink operator's CRDs are missing from %s (%s): set %s to a folder whose crds/ holds the four CRDs of the operator's release-1.15.0 Helm chart (see TESTBED.md, \"The operator's files\")",
			dir, strings.Join(missing, ", "), OperatorFilesEnv)
	}
	return out, nil
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// FlinkKinds are the kinds the CRDs serve; discovery must list all of them
// before the test bed counts as ready.
var FlinkKinds = []string{"FlinkBlueGreenDeployment", "FlinkDeployment", "FlinkSessionJob", "FlinkStateSnapshot"}

// RESTConfig builds a client config from the test bed's kubeconfig.
func (e Env) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", e.Kubeconfig)
}

// InstallCRDs applies the operator's four CRDs, read from
// OperatorFilesDir(root), with server-side apply (the FlinkDeployment CRD is
// too large for a client-side apply annotation), waits for each to be
// Established, and then for discovery to serve its kind.
func InstallCRDs(ctx context.Context, root string, env Env) error {
	files, err := readCRDs(root)
	if err != nil {
		return err
	}
	cfg, err := env.RESTConfig()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, f := range OperatorCRDFiles {
		js, err := yaml.YAMLToJSON(files[f])
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		var obj unstructured.Unstructured
		if err := obj.UnmarshalJSON(js); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		force := true
		if _, err := dyn.Resource(crdGVR).Patch(ctx, obj.GetName(), types.ApplyPatchType, js,
			metav1.PatchOptions{FieldManager: "flinkstate-testbed", Force: &force}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", obj.GetName(), err)
		}
		names = append(names, obj.GetName())
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range names {
		for {
			established, err := crdEstablished(ctx, dyn, name)
			if err == nil && established {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established after 60s (last error: %v)", name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for {
		missing := missingKinds(disc)
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("discovery does not serve %s after 60s", strings.Join(missing, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func crdEstablished(ctx context.Context, dyn dynamic.Interface, name string) (bool, error) {
	obj, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true, nil
		}
	}
	return false, nil
}

func missingKinds(disc discovery.DiscoveryInterface) []string {
	list, err := disc.ServerResourcesForGroupVersion("flink.apache.org/v1beta1")
	if err != nil {
		return FlinkKinds
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Kind] = true
	}
	var missing []string
	for _, k := range FlinkKinds {
		if !served[k] {
			missing = append(missing, k)
		}
	}
	return missing
}
