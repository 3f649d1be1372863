package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAccRealOperator_adoptExample: the operator's own basic-checkpoint-ha
// example, adapted only to the provider's scope as the model's adoption
// tests adapt it (state on S3, the S3 plugin, IRSA's credentials class), is
// applied with kubectl and run by the real operator 1.15.0; the node runs
// its JobManager pod as real Flink 2.2.1. The node runs the repository's
// counting job whatever jarURI names (the example's StateMachineExample.jar
// is not in the test bed's Flink): that is the one thing adapted for the
// node. Imported into flinkstate_deployment (an import block with
// -generate-config-out, then the hand-written configuration), every plan
// is empty, an update that changes nothing in the spec leaves the
// generation as it was, and the running job is never replaced: the same
// job id, the same Flink cluster, its counters going on.
func TestAccRealOperator_adoptExample(t *testing.T) {
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	// The bucket the adapted example's state paths name.
	useFixtureBucket(t)
	node := startRealOperator(t, rf, ns)
	ctx := context.Background()
	name := "basic-checkpoint-ha-example"
	// The example's serviceAccount: flink, as the operator's Helm chart
	// creates it in each watched namespace, here with IRSA's role
	// annotation, which the node turns into the pod's credentials.
	if _, err := testKube(t).Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("serviceaccounts")).Namespace(ns).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{
			"name": "flink", "namespace": ns,
			"annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::000000000000:role/real-operator-flink"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, obj, ns, name)
	kubectlApply(t, obj, false)
	var jobID string
	deadline := time.Now().Add(4 * time.Minute)
	for {
		o, err := getDeployment(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		lc, _, _ := unstructured.NestedString(o.Object, "status", "lifecycleState")
		st, _, _ := unstructured.NestedString(o.Object, "status", "jobStatus", "state")
		if lc == "STABLE" && st == "RUNNING" {
			jobID, _, _ = unstructured.NestedString(o.Object, "status", "jobStatus", "jobId")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the real operator did not report the example STABLE and RUNNING in 4 minutes: lifecycle %q, job %q, error %v",
				lc, st, o.Object["status"])
		}
		time.Sleep(2 * time.Second)
	}
	c, err := lastCluster(node, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	_, before, err := c.WaitCounts(ctx, 2, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	untouched := expectAPI(func() error {
		cs := node.Clusters(ns, name)
		if len(cs) != 1 || cs[0] != c {
			return fmt.Errorf("the node ran %d Flink clusters for %s: the adoption restarted the job", len(cs), name)
		}
		o, err := getDeployment(t, ns, name)
		if err != nil {
			return err
		}
		if id, _, _ := unstructured.NestedString(o.Object, "status", "jobStatus", "jobId"); id != jobID {
			return fmt.Errorf("job id %s, was %s: the job was replaced", id, jobID)
		}
		_, last, err := c.WaitCounts(ctx, 1, time.Minute)
		if err != nil {
			return err
		}
		for k, n := range before {
			if last[k] <= n {
				return fmt.Errorf("key %d: the job counted %d before the import and %d after: it is not running on", k, n, last[k])
			}
		}
		return nil
	})
	before0, err := getDeployment(t, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	config := adoptedHAConfig(ns, name, `    "kubernetes.operator.savepoint.format.type" = "NATIVE"`, "%s")
	// The steps of adoptUntouched, not run in parallel: this test's Flink
	// cluster runs throughout.
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// As a new user adopts it: the generated configuration
				// plans nothing, not even an update.
				Config:           "# adopting " + name + "\n",
				ResourceName:     adoptedAddr,
				ImportState:      true,
				ImportStateKind:  resource.ImportBlockWithID,
				ImportStateId:    ns + "/" + name,
				GenerateConfig:   true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(adoptedAddr, plancheck.ResourceActionNoop)}},
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
				// An update that changes nothing in the spec: the
				// generation stays, so the operator does nothing, and the
				// job runs on.
				Config: fmt.Sprintf(config, "  timeouts {\n    update = \"9m\"\n  }"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(adoptedAddr, tfjsonpath.New("job_id"), knownvalue.StringFunc(func(v string) error {
						if v != jobID {
							return errors.New("job_id " + v + ", the operator's is " + jobID)
						}
						return nil
					})),
					expectAPI(func() error {
						o, err := getDeployment(t, ns, name)
						if err != nil {
							return err
						}
						if o.GetGeneration() != before0.GetGeneration() {
							return fmt.Errorf("generation %d after adopting, want %d (the operator would restart the job)", o.GetGeneration(), before0.GetGeneration())
						}
						if a, b := o.Object["spec"], before0.Object["spec"]; !reflect.DeepEqual(a, b) {
							return fmt.Errorf("the spec changed on adoption:\n%v\nwas\n%v", a, b)
						}
						return nil
					}),
					untouched,
				},
			},
			{
				// A change of a kubernetes.operator.* key changes the spec
				// (a new generation), which the operator observes without
				// touching the job: its spec diff is IGNORE for that prefix
				// (AbstractFlinkSpec's flinkConfiguration @SpecDiff.Config,
				// release-1.15.0), as the model's diffType says.
				Config: fmt.Sprintf(strings.Replace(config, `= "NATIVE"`, `= "CANONICAL"`, 1), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(adoptedAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					expectAPI(func() error {
						for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
							o, err := getDeployment(t, ns, name)
							if err != nil {
								return err
							}
							observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
							if o.GetGeneration() == before0.GetGeneration()+1 && observed == o.GetGeneration() {
								return nil
							}
							if time.Now().After(deadline) {
								return fmt.Errorf("generation %d, observed %d: want the change written once and observed", o.GetGeneration(), observed)
							}
						}
					}),
					untouched,
				},
			},
		},
	})
}
