package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// effective_flink_configuration tells what the provider writes from what
// the operator adds (issue 36): operator_added_flink_configuration, known at
// plan, holds the keys the operator adds at deploy (FlinkConfigBuilder:
// namespace, cluster id, HA cluster id, pipeline.name, …), each also in
// effective_flink_configuration and none in the FlinkDeployment's
// flinkConfiguration; the keys the provider writes are not among them; the
// plan after the apply is empty.
func TestAccDeployment_operatorAddedConfiguration(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	added := func(key, value string) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue(depAddr, tfjsonPath("operator_added_flink_configuration").AtMapKey(key), knownString(value))
	}
	cfg := deploymentConfig(ns, "flink:2.2.1-java17", waitRunning)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkDeploymentGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					added("kubernetes.namespace", ns),
					added("kubernetes.cluster-id", "orders"),
					added("high-availability.cluster-id", "orders"),
					added("pipeline.name", "orders"),
					added("parallelism.default", "2"),
					added("execution.shutdown-on-application-finish", "false"),
					added("kubernetes.rest-service.exposed.type", "ClusterIP"),
					plancheck.ExpectKnownValue(depAddr, tfjsonPath("effective_flink_configuration").AtMapKey("kubernetes.cluster-id"), knownString("orders")),
				}},
				// Written keys are not listed as added.
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(depAddr, "operator_added_flink_configuration.execution.checkpointing.dir"),
					resource.TestCheckNoResourceAttr(depAddr, "operator_added_flink_configuration.state.backend.type"),
					resource.TestCheckResourceAttr(depAddr, "effective_flink_configuration.state.backend.type", "rocksdb"),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("operator_added_flink_configuration"), knownvalue.MapPartial(map[string]knownvalue.Check{
						"kubernetes.cluster-id": knownString("orders"),
					})),
					expectAPI(func() error {
						obj, err := getDeployment(t, ns, "orders")
						if err != nil {
							return err
						}
						written, _, _ := unstructured.NestedMap(obj.Object, "spec", "flinkConfiguration")
						for _, k := range []string{"kubernetes.namespace", "kubernetes.cluster-id", "high-availability.cluster-id", "pipeline.name",
							"parallelism.default", "kubernetes.rest-service.exposed.type"} {
							if _, ok := written[k]; ok {
								return fmt.Errorf("%s was written into the spec, though the operator adds it", k)
							}
						}
						for _, k := range []string{"execution.checkpointing.dir", "state.backend.type"} {
							if _, ok := written[k]; !ok {
								return fmt.Errorf("%s, which the provider writes, is not in the spec", k)
							}
						}
						return nil
					}),
				},
			},
			{Config: cfg, PlanOnly: true},
		},
	})
}
