package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// runnerKubeconfig is a kubeconfig whose token belongs to a new
// ServiceAccount of ns bound to exactly the documented RBAC: the
// ClusterRole of kubernetes-clusterrole.yaml through a ClusterRoleBinding
// (clusterWide), or the Role of kubernetes-role.yaml in ns through a
// RoleBinding. The token comes from the TokenRequest API
// (serviceaccounts/token). The test bed's kube-apiserver runs with
// --authorization-mode=RBAC (internal/testbed/testbed.go), so a request the
// rules do not allow is refused with 403.
func runnerKubeconfig(t *testing.T, ns string, clusterWide bool) string {
	t.Helper()
	ctx, c := context.Background(), testTyped(t)
	file, bindingKind := "kubernetes-role.yaml", "Role"
	if clusterWide {
		file, bindingKind = "kubernetes-clusterrole.yaml", "ClusterRole"
	}
	_, _, rules := runnerRules(t, file)
	const sa = "terraform-runner"
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}
	name := "flinkstate-terraform-runner-" + ns
	if clusterWide {
		if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: bindingKind, Name: name},
			Subjects: subjects}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	} else {
		if _, err := c.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: bindingKind, Name: name},
			Subjects: subjects}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expiry := int64(3600)
	tr, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, sa, err)
	}
	admin := testKube(t).REST
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: admin.Insecure}
	cfg.AuthInfos["runner"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["runner"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "runner"}
	cfg.CurrentContext = "runner"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runnerStack is the Kubernetes side of the guide's stack, run as the
// runner: the pods' ServiceAccount bound to the operator's Role, the
// deployment, and a savepoint of it.
func runnerStack(kubeconfig, ns, image string) string {
	return fmt.Sprintf(`
provider "flinkstate" {
  kubernetes {
    config_path = %q
  }
}
`, kubeconfig) + serviceAccountConfig(ns, "  role_binding {}") + deploymentConfig(ns, image, waitRunning+`
  depends_on = [flinkstate_service_account.test]`) + fmt.Sprintf(`
resource "flinkstate_snapshot" "test" {
  namespace       = %q
  deployment_name = flinkstate_deployment.orders.name
  name_prefix     = "orders-runner-"
  triggers        = { image = flinkstate_deployment.orders.image }
}
`, ns)
}

// testRunnerPermissions runs the lifecycle of every Kubernetes-side
// resource (flinkstate_service_account with its RoleBinding,
// flinkstate_deployment, flinkstate_snapshot; no data source reads
// Kubernetes) as a runner holding only the documented RBAC: create,
// import, an in-place upgrade that replaces the snapshot, and the destroy
// with the deployment's final savepoint. A verb the rules lack fails the
// step that needs it with the API server's 403.
func testRunnerPermissions(t *testing.T, clusterWide bool) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	kubeconfig := runnerKubeconfig(t, ns, clusterWide)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := checkDeploymentGone(t, ns)(s); err != nil {
				return err
			}
			return checkServiceAccountGone(t, ns)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: runnerStack(kubeconfig, ns, "flink:2.2.1-java17"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact("COMPLETED")),
					expectServiceAccount(t, ns, "", "Role", "flink"),
				},
			},
			{
				ResourceName:            depAddr,
				ImportState:             true,
				ImportStateId:           exampleImportID(t, "flinkstate_deployment", "data-processing", ns),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"wait_for", "timeouts"},
			},
			{
				Config: runnerStack(kubeconfig, ns, "flink:2.2.1-java21"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(snapAddr, plancheck.ResourceActionReplace),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("image"), knownvalue.StringExact("flink:2.2.1-java21")),
					statecheck.ExpectKnownValue(depAddr, tfjsonPath("job_state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(snapAddr, tfjsonPath("state"), knownvalue.StringExact("COMPLETED")),
				},
			},
		},
	})
}

// The runner bound to the documented ClusterRole (kubernetes-clusterrole.yaml).
func TestAccRunnerPermissions_clusterRole(t *testing.T) { testRunnerPermissions(t, true) }

// The runner bound to the documented namespaced Role (kubernetes-role.yaml)
// in the namespace it manages.
func TestAccRunnerPermissions_role(t *testing.T) { testRunnerPermissions(t, false) }
