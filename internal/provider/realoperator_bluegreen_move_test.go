package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// TestAccRealOperator_blueGreenMove (issue 46): a moved block from a
// running flinkstate_deployment to flinkstate_blue_green_deployment on the
// real operator 1.15.0 with the counting job on real Flink 2.2.1: one
// apply stops the old job with a savepoint, deletes the FlinkDeployment and
// creates the FlinkBlueGreenDeployment, whose first child counts-blue
// starts from that savepoint (the operator keeps the template's
// job.initialSavepointPath for a first deployment:
// BlueGreenUtils.prepareFlinkDeployment); blue's counts go on from the old
// job's last ones (no key restarts at 1); the next plan is empty.
func TestAccRealOperator_blueGreenMove(t *testing.T) {
	fx := newRealOperatorFixture(t)
	dep := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	bg := strings.Replace(dep, `resource "flinkstate_deployment" "counts"`, `resource "flinkstate_blue_green_deployment" "counts"`, 1)
	bg = strings.Replace(bg, "\n  wait_for          = \"running\"", "", 1) + `
moved {
  from = flinkstate_deployment.counts
  to   = flinkstate_blue_green_deployment.counts
}
`
	if bg == dep {
		t.Fatal("the configuration's deployment block is not as expected")
	}
	ctx := context.Background()
	var old *testbed.FlinkCluster
	var start time.Time
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return deploymentsGone(t, fx.ns, "counts", "counts-blue", "counts-green")
		},
		Steps: []resource.TestStep{
			{
				Config: dep,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(countsAddr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					expectAPI(func() error {
						c, err := lastCluster(fx.node, fx.ns, "counts")
						if err != nil {
							return err
						}
						old = c
						_, _, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						start = time.Now()
						return err
					}),
				},
			},
			{
				Config: bg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("active_deployment_name"), knownvalue.StringExact("counts-blue")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					expectAPI(func() error {
						t.Logf("move applied in %s", time.Since(start).Round(time.Second))
						if _, err := getDeployment(t, fx.ns, "counts"); err == nil {
							return fmt.Errorf("FlinkDeployment counts still there after the move")
						}
						sps := finalSavepoints(t, fx.ns, "counts")
						if len(sps) != 1 || sps[0].State != "COMPLETED" {
							return fmt.Errorf("final savepoints of counts: %+v, want one COMPLETED", sps)
						}
						blue, err := getDeployment(t, fx.ns, "counts-blue")
						if err != nil {
							return err
						}
						if p, _, _ := unstructured.NestedString(blue.Object, "spec", "job", "initialSavepointPath"); p != sps[0].Path {
							return fmt.Errorf("counts-blue starts from %q, want the old job's savepoint %q", p, sps[0].Path)
						}
						b, err := lastCluster(fx.node, fx.ns, "counts-blue")
						if err != nil {
							return err
						}
						if err := restoredFrom(t, b, fx.ns, "counts-blue", sps[0].Path); err != nil {
							return err
						}
						_, oldLast := old.Counts()
						first, err := firstCountsContinue(ctx, b, "counts-blue", "counts", oldLast)
						t.Logf("counts-blue's first counts %v, the old job's last %v", first, oldLast)
						return err
					}),
				},
			},
			{Config: bg, PlanOnly: true},
		},
	})
}
