package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// Rule 6 at apply: the ServiceAccount is not in the configuration (made
// elsewhere, with the IRSA annotation), so the plan cannot see it; apply
// refuses before the FlinkDeployment is written.
func TestAccDeployment_podIdentityOnIRSAAccount(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "flink-orders", Namespace: ns,
		Annotations: map[string]string{kube.IRSAAnnotation: testRoleARN}}}
	if _, err := testTyped(t).CoreV1().ServiceAccounts(ns).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(deploymentConfig(ns, "flink:2.2.1-java17", `  wait_for = "none"`), `identity        = "irsa"`, `identity        = "pod_identity"`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: errorRE("IRSA and Pod Identity on the same ServiceAccount", "Nothing was written"),
		}},
	})
	if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
		t.Errorf("FlinkDeployment %s/orders: want none written, got %v", ns, err)
	}
}
