package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// dropPluginEnv removes ENABLE_BUILT_IN_PLUGINS from the main container of
// an adapted example: the object of a team whose image brings the S3 plugin.
func dropPluginEnv(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podTemplate", "spec", "containers")
	for _, c := range containers {
		m, _ := c.(map[string]any)
		if m["name"] != flinkconf.MainContainer {
			continue
		}
		env, _ := m["env"].([]any)
		kept := []any{}
		for _, e := range env {
			if em, _ := e.(map[string]any); em["name"] != flinkconf.PluginsEnv {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(env) {
			t.Fatalf("the adapted example has no %s to drop", flinkconf.PluginsEnv)
		}
		if len(kept) == 0 {
			delete(m, "env")
		} else {
			m["env"] = kept
		}
	}
	if err := unstructured.SetNestedSlice(obj.Object, containers, "spec", "podTemplate", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
}

// The operator's basic-checkpoint-ha example on S3 without
// ENABLE_BUILT_IN_PLUGINS (its image brings the S3 plugin), written by
// kubectl: import with -generate-config-out plans no change, s3_plugin
// imported as "image", and the FlinkDeployment's generation and spec stay
// as they were (adoptUntouched).
func TestAccDeployment_adoptWithoutPluginVariable(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	name := "no-plugin-variable"
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, obj, ns, name)
	dropPluginEnv(t, obj)
	kubectlApply(t, obj, false)
	config := strings.Replace(adoptedHAConfig(ns, name, `    "kubernetes.operator.savepoint.format.type" = "NATIVE"`, "%s"),
		"  identity        = \"irsa\"\n", "  identity        = \"irsa\"\n  s3_plugin       = \"image\"\n", 1)
	adoptUntouched(t, &diagRecorder{}, ns, name, config, []plancheck.PlanCheck{
		plancheck.ExpectEmptyPlan(),
		plancheck.ExpectKnownValue(adoptedAddr, tfjsonPath("s3_plugin"), knownvalue.StringExact(flinkconf.S3PluginImage)),
	})
}
