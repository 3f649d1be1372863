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

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// exampleServiceAccount creates the examples' serviceAccount, flink, in
// ns, as the operator's Helm chart creates it in each watched namespace,
// here with IRSA's role annotation, which the node turns into the pod's
// credentials.
func exampleServiceAccount(t *testing.T, ns string) {
	t.Helper()
	if _, err := testKube(t).Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("serviceaccounts")).Namespace(ns).Create(context.Background(),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{
			"name": "flink", "namespace": ns,
			"annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::000000000000:role/real-operator-flink"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// stableRunning waits (4 minutes at most) until the real operator reports
// ns/name STABLE with its job RUNNING, and returns the job id.
func stableRunning(t *testing.T, ns, name string) string {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		o, err := getDeployment(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		lc, _, _ := unstructured.NestedString(o.Object, "status", "lifecycleState")
		st, _, _ := unstructured.NestedString(o.Object, "status", "jobStatus", "state")
		if lc == "STABLE" && st == "RUNNING" {
			id, _, _ := unstructured.NestedString(o.Object, "status", "jobStatus", "jobId")
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("the real operator did not report %s STABLE and RUNNING in 4 minutes: lifecycle %q, job %q, status %v",
				name, lc, st, o.Object["status"])
		}
		time.Sleep(2 * time.Second)
	}
}

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
	ns, node := startExamplesOperator(t)
	ctx := context.Background()
	name := "basic-checkpoint-ha-example"
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, obj, ns, name)
	kubectlApply(t, obj, false)
	jobID := stableRunning(t, ns, name)
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

// TestAccRealOperator_adoptExamples (issue 34): more of the operator's
// application-mode examples a user could plausibly import, each applied
// with kubectl as shipped and adapted only to the provider's scope
// (adaptExample: state on S3, the S3 plugin, IRSA's credentials class), run
// by the real operator 1.15.0, one after the other. Each imports with an
// import block and -generate-config-out: the generated configuration
// plans no change (the model's TestAccDeployment_adoptOperatorExamples
// covers every example on the model). Where the node runs the example
// (native JobManager Deployments) the import leaves the running job alone:
// the same Flink cluster and job id, its counters going on. basic-reactive
// is a standalone cluster (mode: standalone), whose JobManager and
// TaskManager Deployments the node does not run: it is imported while the
// operator has deployed it but no job runs. The example as shipped keeps
// no state anywhere (basic: no checkpoint directory), and that import is
// refused, naming why.
func TestAccRealOperator_adoptExamples(t *testing.T) {
	ns, node := startExamplesOperator(t)
	ctx := context.Background()
	examples := operatorExamples(t, "FlinkDeployment")
	for _, c := range []struct {
		example, name string
		adapt         bool
		runs          bool   // the node runs its JobManager as real Flink
		refused       string // the import's error, when it is refused
	}{
		{example: "basic", name: "basic-as-shipped", refused: "sets no checkpoint directory"},
		{example: "basic", name: "basic-example", adapt: true, runs: true},
		{example: "custom-logging", name: "custom-logging-example", adapt: true, runs: true},
		{example: "pod-template", name: "pod-template-example", adapt: true, runs: true},
		{example: "basic-reactive", name: "basic-reactive-example", adapt: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := examples[c.example]
			if obj == nil {
				t.Fatalf("no operator example %s", c.example)
			}
			obj = obj.DeepCopy()
			if c.adapt {
				adaptExample(t, obj, ns, c.name)
			} else {
				obj.SetNamespace(ns)
				obj.SetName(c.name)
			}
			kubectlApply(t, obj, true)
			t.Cleanup(func() { deleteExample(t, node, ns, c.name) })
			var jobID string
			var cluster *testbed.FlinkCluster
			var before map[int]int64
			if c.runs {
				jobID = stableRunning(t, ns, c.name)
				var err error
				if cluster, err = lastCluster(node, ns, c.name); err != nil {
					t.Fatal(err)
				}
				if _, before, err = cluster.WaitCounts(ctx, 2, 2*time.Minute); err != nil {
					t.Fatal(err)
				}
			} else if c.refused == "" {
				deployedOnce(t, ns, c.name)
			}
			gen := generationOf(t, ns, c.name)
			step := resource.TestStep{
				Config:          "# adopting " + c.example + "\n",
				ResourceName:    adoptedAddr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   ns + "/" + c.name,
				GenerateConfig:  true,
			}
			if c.refused != "" {
				step.ExpectError = errorRE("Importing FlinkDeployment "+ns+"/"+c.name, c.refused, "nothing was imported")
			} else {
				step.ImportPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectResourceAction(adoptedAddr, plancheck.ResourceActionNoop)}
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testProviderFactories, Steps: []resource.TestStep{step}})
			if g := generationOf(t, ns, c.name); g != gen {
				t.Errorf("generation %d after the import, was %d", g, gen)
			}
			if !c.runs {
				return
			}
			if cs := node.Clusters(ns, c.name); len(cs) != 1 || cs[0] != cluster {
				t.Errorf("the node ran %d Flink clusters for %s: the import restarted the job", len(cs), c.name)
			}
			o, err := getDeployment(t, ns, c.name)
			if err != nil {
				t.Fatal(err)
			}
			if id, _, _ := unstructured.NestedString(o.Object, "status", "jobStatus", "jobId"); id != jobID {
				t.Errorf("job id %s, was %s: the job was replaced", id, jobID)
			}
			_, last, err := cluster.WaitCounts(ctx, 1, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range before {
				if last[k] <= n {
					t.Errorf("key %d: the job counted %d before the import and %d after: it is not running on", k, n, last[k])
				}
			}
		})
	}
}

// generationOf is the generation of ns/name.
func generationOf(t *testing.T, ns, name string) int64 {
	t.Helper()
	o, err := getDeployment(t, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return o.GetGeneration()
}

// deployedOnce waits until the real operator has deployed ns/name's spec
// (status.reconciliationStatus.state DEPLOYED at its generation).
func deployedOnce(t *testing.T, ns, name string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		o, err := getDeployment(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		state, _, _ := unstructured.NestedString(o.Object, "status", "reconciliationStatus", "state")
		observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
		if state == "DEPLOYED" && observed == o.GetGeneration() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the real operator did not deploy %s in 2 minutes: status %v", name, o.Object["status"])
		}
	}
}

// deleteExample deletes ns/name and waits until the operator has removed
// it (its finalizer) and the node runs none of its Flink processes, so
// that the next example has the machine to itself.
func deleteExample(t *testing.T, node *testbed.Node, ns, name string) {
	r := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns)
	if err := r.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Logf("deleting %s/%s: %v", ns, name, err)
		return
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if _, err := getDeployment(t, ns, name); err != nil && node.Running() == 0 {
			return
		}
	}
	t.Logf("%s/%s or its Flink processes still there 2 minutes after its deletion", ns, name)
}

// startExamplesOperator skips the test, saying why, without the operator's
// jars (requireOperatorJars); else it starts the real operator and the
// node on a new namespace ns (startRealOperator) that has the operator
// examples' ServiceAccount, with the bucket the adapted examples' state
// paths name (useFixtureBucket).
func startExamplesOperator(t *testing.T) (string, *testbed.Node) {
	t.Helper()
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	useFixtureBucket(t)
	node := startRealOperator(t, rf, ns)
	exampleServiceAccount(t, ns)
	return ns, node
}
