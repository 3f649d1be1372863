package testbed

import (
	"context"
	"embed"
	"fmt"
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

// The Flink Kubernetes Operator's CRDs, release 1.15.0 (see crds/README.md).
//
//go:embed crds/*.yml
var crdFiles embed.FS

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// FlinkKinds are the kinds the CRDs serve; discovery must list all of them
// before the test bed counts as ready.
var FlinkKinds = []string{"FlinkDeployment", "FlinkSessionJob", "FlinkStateSnapshot"}

// RESTConfig builds a client config from the test bed's kubeconfig.
func (e Env) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", e.Kubeconfig)
}

// InstallCRDs applies the operator's CRDs with server-side apply (the
// FlinkDeployment CRD is too large for a client-side apply annotation), waits
// for each to be Established, and then for discovery to serve its kind.
func InstallCRDs(ctx context.Context, env Env) error {
	cfg, err := env.RESTConfig()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	entries, err := crdFiles.ReadDir("crds")
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		raw, err := crdFiles.ReadFile("crds/" + e.Name())
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		var obj unstructured.Unstructured
		if err := obj.UnmarshalJSON(js); err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
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
