package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// realOperatorPodIdentityConfig is the real-Flink stack reached through EKS
// Pod Identity: a role trusted by pods.eks.amazonaws.com for the
// namespace's flink-counts account of cluster "prod", the account without
// an IRSA annotation, the association, and the deployment with identity =
// "pod_identity", created after the association (EKS sets the pod's
// environment when the pod is created).
func realOperatorPodIdentityConfig(bucket, role, ns string) string {
	trust := fmt.Sprintf(`  pod_identity {
    namespace       = %q
    service_account = "flink-counts"
    cluster_name    = "prod"
  }`, ns)
	c := realFlinkStack(bucket, role, ns, "pod_identity", trust, "", fmt.Sprintf(`
resource "flinkstate_service_account" "counts" {
  namespace = %[1]q
  name      = "flink-counts"
}

resource "flinkstate_pod_identity_association" "counts" {
  cluster_name    = "prod"
  namespace       = %[1]q
  service_account = flinkstate_service_account.counts.name
  role_arn        = flinkstate_iam_role.counts.arn
}
`, ns))
	c = strings.Replace(c, "\n  service_account   = \"flink-counts\"", "\n  service_account   = flinkstate_service_account.counts.name\n  depends_on        = [flinkstate_pod_identity_association.counts]", 1)
	return strings.Replace(c, `wait_for          = "none"`, `wait_for          = "running"`, 1)
}

// TestAccRealOperator_podIdentity: with identity = "pod_identity" and a
// flinkstate_pod_identity_association, the real operator's JobManager pod
// gets the credentials as EKS Pod Identity delivers them (the node stand-in
// asks the association, as the EKS webhook does, and serves the role
// through a Pod Identity Agent stand-in): the job the real operator
// deployed completes checkpoints with the role's credentials, and every S3
// request it made is allowed by the role's least-privilege policy.
func TestAccRealOperator_podIdentity(t *testing.T) {
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	standIn, srv := newEKSStandIn(t, "prod")
	// AWS_ENDPOINT_URL_EKS: EKS only goes to the stand-in (IAM and S3 stay
	// on the emulator); so this test does not run in parallel.
	t.Setenv("AWS_ENDPOINT_URL_EKS", srv.URL)
	node := startRealOperator(t, rf, ns, func(o *testbed.NodeOptions) {
		o.PodIdentity = func(_ context.Context, ns, sa string) (string, error) { return standIn.RoleFor("prod", ns, sa), nil }
	})
	bucket, role := randName("ro-"), randName("ro-")
	ctx := context.Background()
	var roleARN, policy string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: realOperatorPodIdentityConfig(bucket, role, ns),
			ConfigStateChecks: []statecheck.StateCheck{
				recordAttr("flinkstate_iam_role.counts", "arn", &roleARN),
				recordAttr("flinkstate_iam_role.counts", "policy_json", &policy),
				expectAPI(func() error {
					cs := node.Clusters(ns, "counts")
					if len(cs) != 1 {
						return fmt.Errorf("the node ran %d clusters for %s/counts, want 1", len(cs), ns)
					}
					c := cs[0]
					jobID, err := c.RunningJob(ctx, 3*time.Minute)
					if err != nil {
						return err
					}
					if _, err := c.WaitCheckpoints(ctx, jobID, 2, 2*time.Minute); err != nil {
						return err
					}
					return nil
				}),
				expectAPI(func() error { return flinkRequestsAllowed(t, rf, bucket, "flink/counts", roleARN, policy) }),
			},
		}},
	})
}
