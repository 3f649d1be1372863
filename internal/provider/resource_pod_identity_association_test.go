package provider

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
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

const piaAddr = "flinkstate_pod_identity_association.test"

// podIdentityTarget is where a Pod Identity test runs. On the test bed, EKS
// Pod Identity calls go to an in-test STAND-IN (eksPodIdentityStandIn): the
// AWS emulator does not serve them. With FLINKSTATE_TEST_EKS_CLUSTER=<name
// of a real cluster> the same tests run against the real EKS API (and real
// IAM, through the usual AWS settings). The stand-in is reached through
// the provider's aws.endpoints.eks and the test's own EKS client (eks), not
// the environment, so each test has its own and they run in parallel.
type podIdentityTarget struct {
	cluster, suffix string
	standIn         *eksPodIdentityStandIn
	eksURL          string // the stand-in's endpoint; "" against the real EKS API
	currentID       string // association ID after the last check, for the out-of-band delete and CheckDestroy
}

func newPodIdentityTarget(t *testing.T) *podIdentityTarget {
	p := &podIdentityTarget{cluster: os.Getenv("FLINKSTATE_TEST_EKS_CLUSTER"), suffix: randName("")}
	if p.cluster == "" {
		p.cluster = "flink-test"
		var srv *httptest.Server
		p.standIn, srv = newEKSStandIn(t, p.cluster)
		// For EKS only: IAM and S3 stay on the emulator.
		p.eksURL = srv.URL
	} else {
		t.Logf("running against the real EKS API, cluster %s", p.cluster)
	}
	return p
}

func (p *podIdentityTarget) config(roleRef, sa string) string {
	if p.eksURL == "" {
		return podIdentityConfig(p.cluster, p.suffix, roleRef, sa)
	}
	return eksStandInProvider(p.eksURL) + podIdentityConfig(p.cluster, p.suffix, roleRef, sa)
}

// eksStandInProvider is a provider block that sends the provider's EKS
// calls to an EKS stand-in (newEKSStandIn); the rest of AWS stays as the
// environment says (the test bed's emulator).
func eksStandInProvider(url string) string {
	return fmt.Sprintf(`
provider "flinkstate" {
  aws {
    endpoints {
      eks = %q
    }
  }
}
`, url)
}

// eks is the test's EKS client: the stand-in's, or the real EKS API's.
func (p *podIdentityTarget) eks(t *testing.T) *eks.Client {
	t.Helper()
	if p.eksURL == "" {
		return testAWS(t).EKS
	}
	c, err := awsclient.New(context.Background(), awsclient.Config{Endpoints: map[string]string{"eks": p.eksURL}})
	if err != nil {
		t.Fatalf("AWS clients: %v", err)
	}
	return c.EKS
}

// expectAssociation records the association's ID and reads it from EKS:
// the role of roleRes, sa, namespace data-processing.
func (p *podIdentityTarget) expectAssociation(t *testing.T, roleRes, sa string) []statecheck.StateCheck {
	var roleARN string
	return []statecheck.StateCheck{
		recordAttr(piaAddr, "association_id", &p.currentID),
		recordAttr(roleRes, "arn", &roleARN),
		expectAPI(func() error {
			out, err := p.eks(t).DescribePodIdentityAssociation(context.Background(), &eks.DescribePodIdentityAssociationInput{
				ClusterName: aws.String(p.cluster), AssociationId: aws.String(p.currentID)})
			if err != nil {
				return err
			}
			if a := out.Association; aws.ToString(a.RoleArn) != roleARN || aws.ToString(a.ServiceAccount) != sa || aws.ToString(a.Namespace) != "data-processing" {
				return fmt.Errorf("association in EKS: role %s sa %s ns %s; want role %s sa %s", aws.ToString(a.RoleArn),
					aws.ToString(a.ServiceAccount), aws.ToString(a.Namespace), roleARN, sa)
			}
			return nil
		}),
	}
}

func (p *podIdentityTarget) checkDestroy(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if p.currentID == "" {
			return fmt.Errorf("no association was recorded")
		}
		_, err := p.eks(t).DescribePodIdentityAssociation(context.Background(), &eks.DescribePodIdentityAssociationInput{
			ClusterName: aws.String(p.cluster), AssociationId: aws.String(p.currentID)})
		if !isNotFound(err) {
			return fmt.Errorf("association %s still exists after destroy (%v)", p.currentID, err)
		}
		return nil
	}
}

func piaPlanAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(piaAddr, action)}}
}

func TestAccPodIdentityAssociation_basic(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newPodIdentityTarget(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             p.checkDestroy(t),
		Steps: []resource.TestStep{{
			Config: p.config("a", "flink-orders"),
			ConfigStateChecks: append(p.expectAssociation(t, "flinkstate_iam_role.a", "flink-orders"),
				statecheck.ExpectKnownValue(piaAddr, tfjsonPath("id"), knownvalue.StringRegexp(regexpMust("^"+p.cluster+",.+"))),
				statecheck.ExpectKnownValue(piaAddr, tfjsonPath("association_arn"), knownvalue.NotNull()),
				expectAPI(func() error {
					if p.standIn != nil && p.standIn.Rejected() < 2 {
						return fmt.Errorf("the stand-in refused the new role %d times, want 2: the propagation retry was not exercised", p.standIn.Rejected())
					}
					return nil
				}),
			),
		}},
	})
}

func TestAccPodIdentityAssociation_import(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newPodIdentityTarget(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             p.checkDestroy(t),
		Steps: []resource.TestStep{
			{
				Config:            p.config("a", "flink-orders"),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.a", "flink-orders"),
			},
			{
				ResourceName: piaAddr,
				ImportState:  true,
				ImportStateIdFunc: func(*terraform.State) (string, error) {
					return exampleImportID(t, "flinkstate_pod_identity_association", "prod", p.cluster, "a-0123456789abcdef0", p.currentID), nil
				},
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// Another role: updated in place.
func TestAccPodIdentityAssociation_update(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newPodIdentityTarget(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             p.checkDestroy(t),
		Steps: []resource.TestStep{
			{
				Config:            p.config("a", "flink-orders"),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.a", "flink-orders"),
			},
			{
				Config:            p.config("b", "flink-orders"),
				ConfigPlanChecks:  piaPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.b", "flink-orders"),
			},
		},
	})
}

// Another ServiceAccount: a new association.
func TestAccPodIdentityAssociation_replaceOnServiceAccount(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newPodIdentityTarget(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             p.checkDestroy(t),
		Steps: []resource.TestStep{
			{
				Config:            p.config("b", "flink-orders"),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.b", "flink-orders"),
			},
			{
				Config:            p.config("b", "flink-payments"),
				ConfigPlanChecks:  piaPlanAction(plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.b", "flink-payments"),
			},
		},
	})
}

// Deleted out of band: planned as a create.
func TestAccPodIdentityAssociation_disappears(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newPodIdentityTarget(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             p.checkDestroy(t),
		Steps: []resource.TestStep{
			{
				Config:            p.config("b", "flink-payments"),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.b", "flink-payments"),
			},
			{
				PreConfig: func() {
					if _, err := p.eks(t).DeletePodIdentityAssociation(context.Background(), &eks.DeletePodIdentityAssociationInput{
						ClusterName: aws.String(p.cluster), AssociationId: aws.String(p.currentID)}); err != nil {
						t.Fatalf("deleting out of band: %v", err)
					}
				},
				Config:            p.config("b", "flink-payments"),
				ConfigPlanChecks:  piaPlanAction(plancheck.ResourceActionCreate),
				ConfigStateChecks: p.expectAssociation(t, "flinkstate_iam_role.b", "flink-payments"),
			},
		},
	})
}

// Tags, as aws_eks_pod_identity_association has them: set on create,
// changed in place (a tag added, one removed), read back from EKS.
func TestAccPodIdentityAssociation_tags(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	p := newPodIdentityTarget(t)
	withTags := func(tags string) string {
		return strings.Replace(p.config("a", "flink-orders"), "  role_arn        = flinkstate_iam_role.a.arn\n",
			"  role_arn        = flinkstate_iam_role.a.arn\n  tags            = "+tags+"\n", 1)
	}
	eksTags := func(want map[string]string) statecheck.StateCheck {
		return expectAPI(func() error {
			out, err := p.eks(t).DescribePodIdentityAssociation(context.Background(), &eks.DescribePodIdentityAssociationInput{
				ClusterName: aws.String(p.cluster), AssociationId: aws.String(p.currentID)})
			if err != nil {
				return err
			}
			if !maps.Equal(out.Association.Tags, want) {
				return fmt.Errorf("tags in EKS %v, want %v", out.Association.Tags, want)
			}
			return nil
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             p.checkDestroy(t),
		Steps: []resource.TestStep{
			{
				Config: withTags(`{ team = "data", env = "prod" }`),
				ConfigStateChecks: append(p.expectAssociation(t, "flinkstate_iam_role.a", "flink-orders"),
					eksTags(map[string]string{"team": "data", "env": "prod"})),
			},
			{
				Config:            withTags(`{ team = "data", owner = "flink" }`),
				ConfigPlanChecks:  piaPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{eksTags(map[string]string{"team": "data", "owner": "flink"})},
			},
		},
	})
}
