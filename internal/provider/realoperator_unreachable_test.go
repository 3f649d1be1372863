package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestAccRealOperator_finalSavepointJobManagerUnreachable is issue 36's
// row 9 on the real operator 1.15.0: terraform applies a deployment whose
// job runs as real Flink on the node; its JobManager then stops answering
// while its pod stays Running and Ready (Node.Freeze: a hung JVM). The
// destroy's final savepoint times out in the operator and is abandoned;
// the destroy is refused saying what the operator reported, what survives
// and the choices. The next destroy's plan says that no final savepoint is
// possible now, and that destroy deletes the deployment without one (the
// provider's documented way out while the job is not running).
func TestAccRealOperator_finalSavepointJobManagerUnreachable(t *testing.T) {
	requireOperatorJars(t)
	rf := newRealFlink(t)
	ns := testNamespace(t)
	node := startRealOperator(t, rf, ns)
	bucket, role := randName("ru-"), randName("ru-")
	oidc := testOIDCProvider(t)
	cfg := realFlinkOperatorConfig(bucket, oidc, role, ns, "", "")
	rec := &diagRecorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy: func(*terraform.State) error {
			if _, err := getDeployment(t, ns, "counts"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("FlinkDeployment still exists after destroy (%v)", err)
			}
			return nil
		},
		Steps: unreachableDestroySteps(cfg, countsAddr, rec, func() {
			if err := node.Freeze(ns, "counts"); err != nil {
				t.Fatal(err)
			}
		}),
	})
}
