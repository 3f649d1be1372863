package provider

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func podIdentityConfig(cluster, suffix, roleRef, sa string) string {
	return fmt.Sprintf(`
resource "flinkstate_iam_role" "a" {
  name            = "flink-pi-a-%[2]s"
  state_store_ids = ["acme-flink-state/flink/orders"]
  pod_identity {
    namespace       = "data-processing"
    service_account = %[4]q
    cluster_name    = %[1]q
  }
}

resource "flinkstate_iam_role" "b" {
  name            = "flink-pi-b-%[2]s"
  state_store_ids = ["acme-flink-state/flink/orders"]
  pod_identity {
    namespace       = "data-processing"
    service_account = %[4]q
    cluster_name    = %[1]q
  }
}

resource "flinkstate_pod_identity_association" "test" {
  cluster_name    = %[1]q
  namespace       = "data-processing"
  service_account = %[4]q
  role_arn        = flinkstate_iam_role.%[3]s.arn
}
`, cluster, suffix, roleRef, sa)
}

// On the test bed, EKS Pod Identity calls go to an in-test STAND-IN
// (eksPodIdentityStandIn): the AWS emulator does not serve them. With
// FLINKSTATE_TEST_EKS_CLUSTER=<name of a real cluster> the same steps run
// against the real EKS API (and real IAM, through the usual AWS settings).
func TestAccPodIdentityAssociation_standInOrRealEKS(t *testing.T) {
	skipUnlessAcc(t)
	cluster := os.Getenv("FLINKSTATE_TEST_EKS_CLUSTER")
	var standIn *eksPodIdentityStandIn
	if cluster == "" {
		cluster = "flink-test"
		var srv *httptest.Server
		standIn, srv = newEKSStandIn(t, cluster)
		// AWS_ENDPOINT_URL_EKS takes precedence over AWS_ENDPOINT_URL for EKS
		// only: IAM and S3 stay on the emulator.
		t.Setenv("AWS_ENDPOINT_URL_EKS", srv.URL)
	} else {
		t.Logf("running against the real EKS API, cluster %s", cluster)
	}
	suffix := randName("")
	ctx := context.Background()
	describe := func(s *terraform.State) (*eks.DescribePodIdentityAssociationOutput, error) {
		rs := s.RootModule().Resources["flinkstate_pod_identity_association.test"]
		return testAWS(t).EKS.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{
			ClusterName: aws.String(cluster), AssociationId: aws.String(rs.Primary.Attributes["association_id"])})
	}
	var currentID string // association ID after the last step, for the out-of-band delete and CheckDestroy
	checkRole := func(roleRes, sa string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			currentID = s.RootModule().Resources["flinkstate_pod_identity_association.test"].Primary.Attributes["association_id"]
			out, err := describe(s)
			if err != nil {
				return err
			}
			want := s.RootModule().Resources[roleRes].Primary.Attributes["arn"]
			if a := out.Association; aws.ToString(a.RoleArn) != want || aws.ToString(a.ServiceAccount) != sa || aws.ToString(a.Namespace) != "data-processing" {
				return fmt.Errorf("association in EKS: role %s sa %s ns %s; want role %s sa %s", aws.ToString(a.RoleArn),
					aws.ToString(a.ServiceAccount), aws.ToString(a.Namespace), want, sa)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if currentID == "" {
				return fmt.Errorf("no association was recorded")
			}
			_, err := testAWS(t).EKS.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{
				ClusterName: aws.String(cluster), AssociationId: aws.String(currentID)})
			if !isNotFound(err) {
				return fmt.Errorf("association %s still exists after destroy (%v)", currentID, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: podIdentityConfig(cluster, suffix, "a", "flink-orders"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRole("flinkstate_iam_role.a", "flink-orders"),
					resource.TestMatchResourceAttr("flinkstate_pod_identity_association.test", "id", regexpMust("^"+cluster+",.+")),
					resource.TestCheckResourceAttrSet("flinkstate_pod_identity_association.test", "association_arn"),
					func(*terraform.State) error {
						if standIn != nil && standIn.Rejected() < 2 {
							return fmt.Errorf("the stand-in refused the new role %d times, want 2: the propagation retry was not exercised", standIn.Rejected())
						}
						return nil
					},
				),
			},
			{
				ResourceName: "flinkstate_pod_identity_association.test",
				ImportState:  true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return s.RootModule().Resources["flinkstate_pod_identity_association.test"].Primary.ID, nil
				},
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Another role: updated in place.
				Config: podIdentityConfig(cluster, suffix, "b", "flink-orders"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_pod_identity_association.test", plancheck.ResourceActionUpdate),
				}},
				Check: checkRole("flinkstate_iam_role.b", "flink-orders"),
			},
			{
				// Another ServiceAccount: a new association.
				Config: podIdentityConfig(cluster, suffix, "b", "flink-payments"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_pod_identity_association.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: checkRole("flinkstate_iam_role.b", "flink-payments"),
			},
			{
				// Deleted out of band: planned as a create.
				PreConfig: func() {
					if _, err := testAWS(t).EKS.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{
						ClusterName: aws.String(cluster), AssociationId: aws.String(currentID)}); err != nil {
						t.Fatalf("deleting out of band: %v", err)
					}
				},
				Config: podIdentityConfig(cluster, suffix, "b", "flink-payments"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_pod_identity_association.test", plancheck.ResourceActionCreate),
				}},
				Check: checkRole("flinkstate_iam_role.b", "flink-payments"),
			},
		},
	})
}
