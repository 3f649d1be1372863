package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

const bgCountsAddr = "flinkstate_blue_green_deployment.counts"

// TestAccRealOperator_blueGreen (issue 46): flinkstate_blue_green_deployment
// on the real operator 1.15.0 with the counting job on real Flink 2.2.1:
// create → ACTIVE_BLUE; an image change → ACTIVE_GREEN, green started from
// transition_savepoint_path (a savepoint of blue with _metadata), its
// counts going on from blue's (no key restarts at 1), blue gone; the next
// plan empty; destroy stops green with a final savepoint and leaves no
// child behind.
func TestAccRealOperator_blueGreen(t *testing.T) {
	fx := newRealOperatorFixture(t)
	dep := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	bg := strings.Replace(dep, `resource "flinkstate_deployment" "counts"`, `resource "flinkstate_blue_green_deployment" "counts"`, 1)
	bg = strings.Replace(bg, "\n  wait_for          = \"running\"", "", 1)
	green := strings.Replace(bg, `image             = "flink:2.2.1-java17"`, `image             = "flink:2.2.1-java21"`, 1)
	if bg == dep || green == bg {
		t.Fatal("the configuration's deployment block is not as expected")
	}
	ctx := context.Background()
	var blue *testbed.FlinkCluster
	var blueLast map[int]int64
	var start time.Time
	savepointRE := regexp.MustCompile(`^s3://` + regexp.QuoteMeta(fx.bucket) + `/flink/counts/savepoints/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			// Its files went with the test's bucket (destroyed with it):
			// the FlinkStateSnapshot the destroy recorded is what is left.
			if sps := finalSavepoints(t, fx.ns, "counts-green"); len(sps) != 1 || sps[0].State != "COMPLETED" || !savepointRE.MatchString(sps[0].Path) {
				return fmt.Errorf("final savepoints of counts-green: %+v, want one COMPLETED savepoint", sps)
			}
			for _, c := range []string{"counts-blue", "counts-green"} {
				if _, err := getDeployment(t, fx.ns, c); err == nil {
					return fmt.Errorf("child %s left behind", c)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: bg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("job_state"), knownvalue.StringExact("RUNNING")),
					expectAPI(func() error {
						c, err := lastCluster(fx.node, fx.ns, "counts-blue")
						if err != nil {
							return err
						}
						blue = c
						_, _, err = c.WaitCounts(ctx, 2, 2*time.Minute)
						start = time.Now()
						return err
					}),
				},
			},
			{
				Config: green,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_GREEN")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("active_deployment_name"), knownvalue.StringExact("counts-green")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("transition_savepoint_path"), knownvalue.StringRegexp(savepointRE)),
					expectAPI(func() error {
						t.Logf("transition applied in %s", time.Since(start).Round(time.Second))
						if _, err := getDeployment(t, fx.ns, "counts-blue"); err == nil {
							return fmt.Errorf("counts-blue still there at ACTIVE_GREEN")
						}
						_, blueLast = blue.Counts()
						g, err := lastCluster(fx.node, fx.ns, "counts-green")
						if err != nil {
							return err
						}
						first, err := firstCountsContinue(ctx, g, "counts-green", "counts-blue", blueLast)
						t.Logf("green's first counts %v, blue's last %v", first, blueLast)
						return err
					}),
				},
			},
			{Config: green, PlanOnly: true},
		},
	})
}
