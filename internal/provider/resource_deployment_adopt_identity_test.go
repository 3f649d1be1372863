package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

const adoptedAddr = "flinkstate_deployment.adopted"

// adoptUntouched adopts the object ns/name (applied by kubectl beforehand)
// as a new user does and checks that nothing about the job changes: the
// import block with -generate-config-out plans no change (with preChecks
// on that plan); the hand-written config (the generated one's settings)
// imports and plans no change; an update that changes nothing in the spec
// leaves metadata.generation and the spec as they were. Then the steps in
// more run.
func adoptUntouched(t *testing.T, rec *diagRecorder, ns, name, config string, preChecks []plancheck.PlanCheck, more ...resource.TestStep) {
	t.Helper()
	before, err := getDeployment(t, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	timeouts := "  timeouts {\n    update = \"9m\"\n  }"
	steps := []resource.TestStep{
		{
			Config:           "# adopting " + name + "\n",
			ResourceName:     adoptedAddr,
			ImportState:      true,
			ImportStateKind:  resource.ImportBlockWithID,
			ImportStateId:    ns + "/" + name,
			GenerateConfig:   true,
			ImportPlanChecks: resource.ImportPlanChecks{PreApply: preChecks},
		},
		{
			Config:             fmt.Sprintf(config, ""),
			ResourceName:       adoptedAddr,
			ImportState:        true,
			ImportStateId:      ns + "/" + name,
			ImportStatePersist: true,
		},
		{Config: fmt.Sprintf(config, ""), PlanOnly: true},
		{
			Config: fmt.Sprintf(config, timeouts),
			Check: func(*terraform.State) error {
				o, err := getDeployment(t, ns, name)
				if err != nil {
					return err
				}
				if o.GetGeneration() != before.GetGeneration() {
					return fmt.Errorf("generation %d after adopting, want %d (the operator would restart the job)", o.GetGeneration(), before.GetGeneration())
				}
				if a, b := o.Object["spec"], before.Object["spec"]; !reflect.DeepEqual(a, b) {
					return fmt.Errorf("the spec changed on adoption:\n%v\nwas\n%v", a, b)
				}
				return nil
			},
		},
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps:                    append(steps, more...),
	})
}

// adoptedHAConfigWithout is adoptedHAConfig without identity, with
// flink_configuration as the example has it, and %s for extra lines.
func adoptedHAConfigWithout(ns, name string) string {
	cfg := adoptedHAConfig(ns, name, `    "kubernetes.operator.savepoint.format.type" = "NATIVE"`, "%s")
	return strings.Replace(cfg, "  identity        = \"irsa\"\n", "", 1)
}

// The operator's basic-checkpoint-ha example on S3 with no credentials
// class (its job gets credentials some other way) is adopted without a
// restart: identity is imported unset (null) and the provider writes no
// class while it stays unset. Setting identity afterwards is an update
// the plan announces as a restart, and writes the class.
func TestAccDeployment_adoptWithoutCredentialsClass(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	name := "no-credentials"
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExampleAs(t, obj, ns, name, false)
	gen0 := kubectlApply(t, obj, false).GetGeneration()
	rec := &diagRecorder{}
	config := adoptedHAConfigWithout(ns, name)
	withIdentity := strings.Replace(config, "  service_account = \"flink\"\n", "  service_account = \"flink\"\n  identity        = \"irsa\"\n", 1)
	adoptUntouched(t, rec, ns, name, config,
		[]plancheck.PlanCheck{plancheck.ExpectKnownValue(adoptedAddr, tfjsonPath("identity"), knownvalue.Null())},
		resource.TestStep{
			// Setting identity: an update, announced at plan as a restart
			// naming the key and the class it writes.
			PreConfig: rec.reset,
			Config:    fmt.Sprintf(withIdentity, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(adoptedAddr, plancheck.ResourceActionUpdate),
				rec.planWarning("Setting identity restarts the job", `identity = "irsa" writes fs.s3a.aws.credentials.provider = `+
					flinkconf.IRSACredentialsProvider, "upgrade (a restart"),
			}},
			Check: func(*terraform.State) error {
				o, err := getDeployment(t, ns, name)
				if err != nil {
					return err
				}
				if v, _, _ := unstructured.NestedString(o.Object, "spec", "flinkConfiguration", flinkconf.CredentialsProviderKey); v != flinkconf.IRSACredentialsProvider {
					return fmt.Errorf("%s = %q after setting identity, want %s", flinkconf.CredentialsProviderKey, v, flinkconf.IRSACredentialsProvider)
				}
				if o.GetGeneration() != gen0+1 {
					return fmt.Errorf("generation %d, want %d: one spec change", o.GetGeneration(), gen0+1)
				}
				return nil
			},
		},
		resource.TestStep{
			// Removing it again is a restart too, and says so.
			PreConfig: rec.reset,
			Config:    fmt.Sprintf(config, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(adoptedAddr, plancheck.ResourceActionUpdate),
				rec.planWarning("Removing identity restarts the job", "removes fs.s3a.aws.credentials.provider"),
			}},
			Check: func(*terraform.State) error {
				o, err := getDeployment(t, ns, name)
				if err != nil {
					return err
				}
				if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "flinkConfiguration", flinkconf.CredentialsProviderKey); ok {
					return fmt.Errorf("%s still in the object after identity was removed", flinkconf.CredentialsProviderKey)
				}
				return nil
			},
		},
	)
}

// An object whose durations are ISO-8601 (PT1M), and whose boolean and
// enum values are in another case than the provider writes, as Flink 2.1+
// reads them: the import keeps them as they are (state.checkpoint_interval
// = "PT1M"), the generated configuration is valid and plans no change, and
// an update changes nothing.
func TestAccDeployment_adoptISODurations(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	name := "iso-durations"
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, obj, ns, name)
	cfg := obj.Object["spec"].(map[string]any)["flinkConfiguration"].(map[string]any)
	cfg["execution.checkpointing.interval"] = "PT1M"
	cfg["execution.checkpointing.timeout"] = "PT10M"
	cfg["execution.checkpointing.min-pause"] = "PT0.5S"
	cfg["execution.checkpointing.mode"] = "exactly_once"
	cfg["execution.checkpointing.incremental"] = "TRUE"
	kubectlApply(t, obj, true)
	rec := &diagRecorder{}
	config := strings.Replace(adoptedHAConfig(ns, name, `    "kubernetes.operator.savepoint.format.type" = "NATIVE"`, "%s"),
		"    store_id = \"acme-flink-state/adopt/"+name+"\"\n",
		"    store_id = \"acme-flink-state/adopt/"+name+"\"\n    checkpoint_interval = \"PT1M\"\n    timeout = \"PT10M\"\n"+
			"    min_pause = \"PT0.5S\"\n    mode = \"EXACTLY_ONCE\"\n    incremental = true\n", 1)
	adoptUntouched(t, rec, ns, name, config, []plancheck.PlanCheck{
		plancheck.ExpectKnownValue(adoptedAddr, tfjsonPath("state").AtMapKey("checkpoint_interval"), knownString("PT1M")),
		plancheck.ExpectKnownValue(adoptedAddr, tfjsonPath("state").AtMapKey("min_pause"), knownString("PT0.5S")),
		plancheck.ExpectKnownValue(adoptedAddr, tfjsonPath("effective_flink_configuration").AtMapKey("execution.checkpointing.mode"), knownString("exactly_once")),
	})
}

// noPlannedKey: the planned effective_flink_configuration of addr has no key.
type noPlannedKey struct{ addr, key string }

func (c noPlannedKey) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		after, _ := rc.Change.After.(map[string]any)
		cfg, _ := after["effective_flink_configuration"].(map[string]any)
		if cfg == nil {
			resp.Error = fmt.Errorf("%s: no planned effective_flink_configuration", c.addr)
		} else if v, ok := cfg[c.key]; ok {
			resp.Error = fmt.Errorf("%s: %s = %v planned", c.addr, c.key, v)
		}
		return
	}
	resp.Error = fmt.Errorf("no planned change for %s", c.addr)
}

// A new deployment without identity is allowed (its job may get
// credentials from its image or its node's role): the plan writes no
// credentials class and says so in a warning naming the attribute. Planning
// a create needs no cluster.
func TestDeployment_createWithoutIdentityWarns(t *testing.T) {
	t.Parallel()
	rec := &diagRecorder{}
	cfg := strings.Replace(deploymentConfig("data", "flink:2.2.1-java17", ""), "  identity        = \"irsa\"\n", "", 1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{{
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionCreate),
				plancheck.ExpectKnownValue(depAddr, tfjsonPath("identity"), knownvalue.Null()),
				noPlannedKey{depAddr, flinkconf.CredentialsProviderKey},
				rec.planWarning("No S3 credentials class", "identity is unset, so the provider writes no fs.s3a.aws.credentials.provider",
					"not IRSA's web identity token"),
			}},
		}},
	})
}

// An ISO-8601 duration on a Flink version that cannot read it (before 2.1)
// is refused at plan, naming the attribute.
func TestDeployment_isoDurationNeedsFlink21(t *testing.T) {
	t.Parallel()
	cfg := deploymentConfig("data", "flink:1.20.3-java17", "")
	cfg = strings.Replace(cfg, `flink_version   = "2.2.1"`, `flink_version   = "1.20.3"`, 1)
	cfg = strings.Replace(cfg, `checkpoint_interval = "60s"`, `checkpoint_interval = "PT1M"`, 1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: errorRE("ISO-8601 durations need Flink 2.1", `state.checkpoint_interval "PT1M"`, "Flink 1.20.3 refuses it"),
		}},
	})
}
