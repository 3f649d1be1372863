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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
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
			return deploymentsGone(t, fx.ns, "counts-blue", "counts-green")
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

// TestAccRealOperator_blueGreenAbortImportAndBack (issue 46), the rest of
// the lifecycle on the real operator 1.15.0 with the counting job
// on real Flink 2.2.1: import adopts the running FlinkBlueGreenDeployment
// with nothing to change; an image that cannot be pulled fails the apply
// while blue keeps running (its job the same, counting on), and the
// operator aborts the transition after abort_grace_period; the next change
// is a transition again (→ ACTIVE_GREEN, the counts going on from blue's
// savepoint), and the one after goes back to blue (→ ACTIVE_BLUE, the
// counts going on from green's).
func TestAccRealOperator_blueGreenAbortImportAndBack(t *testing.T) {
	fx := newRealOperatorFixture(t)
	dep := realFlinkOperatorConfig(fx.bucket, fx.oidc, fx.role, fx.ns, "", "")
	bg := strings.Replace(dep, `resource "flinkstate_deployment" "counts"`, `resource "flinkstate_blue_green_deployment" "counts"`, 1)
	// The grace period counts for the first blue too (real Flink takes a
	// while to run: TestDifferential_blueGreenAbort).
	bg = strings.Replace(bg, "\n  wait_for          = \"running\"", "\n  blue_green {\n    abort_grace_period = \"2 min\"\n  }", 1)
	image := func(img string) string {
		return strings.Replace(bg, `image             = "flink:2.2.1-java17"`, `image             = "`+img+`"`, 1)
	}
	if bg == dep || image("x") == bg {
		t.Fatal("the configuration's deployment block is not as expected")
	}
	ctx := context.Background()
	var blueJob string
	var blue, green *testbed.FlinkCluster
	var last map[int]int64
	cluster := func(name string, dst **testbed.FlinkCluster) statecheck.StateCheck {
		return expectAPI(func() error {
			c, err := lastCluster(fx.node, fx.ns, name)
			*dst = c
			return err
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return deploymentsGone(t, fx.ns, "counts-blue", "counts-green")
		},
		Steps: []resource.TestStep{
			{
				Config: bg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_BLUE")),
					recordAttr(bgCountsAddr, "job_id", &blueJob),
					cluster("counts-blue", &blue),
				},
			},
			{
				ResourceName:            bgCountsAddr,
				ImportState:             true,
				ImportStateId:           fx.ns + "/counts",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config:      image("registry.invalid/flink:missing"),
				ExpectError: regexp.MustCompile(`counts-green[\s\S]*counts-blue\s+keeps\s+running\s+\(its\s+job\s+RUNNING\)`),
			},
			{
				// Blue's job ran on through the failed transition; the
				// operator aborts it once the grace period has passed.
				PreConfig: func() {
					deadline := time.Now().Add(4 * time.Minute)
					for {
						obj, err := testKube(t).Dynamic.Resource(kube.FlinkBlueGreenDeploymentGVR).Namespace(fx.ns).Get(ctx, "counts", metav1.GetOptions{})
						if err != nil {
							t.Fatal(err)
						}
						st := kube.ReadBlueGreenStatus(obj)
						if st.State == "ACTIVE_BLUE" && st.JobState == "FAILING" {
							t.Logf("aborted: %s", st.Error)
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("no abort after 4 min: %+v", st)
						}
						time.Sleep(5 * time.Second)
					}
					obj, err := getDeployment(t, fx.ns, "counts-blue")
					if err != nil {
						t.Fatal(err)
					}
					if st := kube.ReadDeploymentStatus(obj); st.JobID != blueJob || st.JobState != "RUNNING" {
						t.Errorf("counts-blue after the abort: job %s %s, want %s RUNNING", st.JobID, st.JobState, blueJob)
					}
					_, before := blue.Counts()
					if err := countsAdvance(ctx, blue, before, time.Minute); err != nil {
						t.Errorf("counts-blue does not count on after the abort: %v", err)
					}
				},
				Config: image("flink:2.2.1-java21"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_GREEN")),
					cluster("counts-green", &green),
					expectAPI(func() error {
						_, last = blue.Counts()
						first, err := firstCountsContinue(ctx, green, "counts-green", "counts-blue", last)
						t.Logf("green's first counts %v, blue's last %v", first, last)
						return err
					}),
				},
			},
			{
				Config: image("flink:2.2.1-java17"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("blue_green_state"), knownvalue.StringExact("ACTIVE_BLUE")),
					statecheck.ExpectKnownValue(bgCountsAddr, tfjsonpath.New("active_deployment_name"), knownvalue.StringExact("counts-blue")),
					cluster("counts-blue", &blue),
					expectAPI(func() error {
						_, last = green.Counts()
						first, err := firstCountsContinue(ctx, blue, "counts-blue", "counts-green", last)
						t.Logf("blue's first counts %v, green's last %v", first, last)
						return err
					}),
				},
			},
			{Config: image("flink:2.2.1-java17"), PlanOnly: true},
		},
	})
}

// deploymentsGone is an error naming the first of the FlinkDeployments
// names in namespace ns that still exists.
func deploymentsGone(t *testing.T, ns string, names ...string) error {
	for _, c := range names {
		if _, err := getDeployment(t, ns, c); err == nil {
			return fmt.Errorf("FlinkDeployment %s left behind", c)
		}
	}
	return nil
}
