package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const testRoleARN = "arn:aws:iam::123456789012:role/flink-orders"

func serviceAccountConfig(ns, body string) string {
	return fmt.Sprintf(`
resource "flinkstate_service_account" "test" {
  namespace = %q
  name      = "flink-orders"
%s
}
`, ns, body)
}

// checkServiceAccount reads the ServiceAccount and RoleBinding from the API server.
func checkServiceAccount(t *testing.T, ns, wantRoleARN, wantRoleKind, wantRoleName string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, c := context.Background(), testTyped(t)
		sa, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "flink-orders", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := sa.Annotations[IRSAAnnotation]; got != wantRoleARN {
			return fmt.Errorf("annotation %s = %q, want %q", IRSAAnnotation, got, wantRoleARN)
		}
		rb, err := c.RbacV1().RoleBindings(ns).Get(ctx, "flink-orders", metav1.GetOptions{})
		if wantRoleKind == "" {
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("RoleBinding should not exist, got %v", err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if rb.RoleRef.Kind != wantRoleKind || rb.RoleRef.Name != wantRoleName || rb.RoleRef.APIGroup != "rbac.authorization.k8s.io" {
			return fmt.Errorf("roleRef %+v, want %s/%s", rb.RoleRef, wantRoleKind, wantRoleName)
		}
		if len(rb.Subjects) != 1 || rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != "flink-orders" || rb.Subjects[0].Namespace != ns {
			return fmt.Errorf("subjects %+v, want only ServiceAccount %s/flink-orders", rb.Subjects, ns)
		}
		return nil
	}
}

func TestAccServiceAccount_lifecycle(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	ctx := context.Background()
	full := `
  labels        = { app = "orders" }
  annotations   = { owner = "data-platform" }
  irsa_role_arn = "` + testRoleARN + `"
  role_binding {}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			c := testTyped(t)
			if _, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "flink-orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ServiceAccount still there after destroy: %v", err)
			}
			if _, err := c.RbacV1().RoleBindings(ns).Get(ctx, "flink-orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("RoleBinding still there after destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: serviceAccountConfig(ns, full),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("flinkstate_service_account.test", "id", ns+"/flink-orders"),
					resource.TestCheckResourceAttr("flinkstate_service_account.test", "role_binding.role_name", "flink"),
					resource.TestCheckResourceAttr("flinkstate_service_account.test", "role_binding.kind", "Role"),
					checkServiceAccount(t, ns, testRoleARN, "Role", "flink"),
				),
			},
			{
				ResourceName:      "flinkstate_service_account.test",
				ImportState:       true,
				ImportStateId:     ns + "/flink-orders",
				ImportStateVerify: true,
			},
			{
				// Labels and annotations others add are not drift.
				PreConfig: func() {
					patch := []byte(`{"metadata":{"labels":{"operator-added":"x"},"annotations":{"kubectl.kubernetes.io/last-applied":"y"}}}`)
					if _, err := testTyped(t).CoreV1().ServiceAccounts(ns).Patch(ctx, "flink-orders", types.MergePatchType, patch,
						metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
						t.Fatalf("patching out of band: %v", err)
					}
				},
				Config:   serviceAccountConfig(ns, full),
				PlanOnly: true,
			},
			{
				// The IRSA annotation removed out of band is planned back and restored.
				PreConfig: func() {
					patch := []byte(`{"metadata":{"annotations":{"` + IRSAAnnotation + `":null}}}`)
					if _, err := testTyped(t).CoreV1().ServiceAccounts(ns).Patch(ctx, "flink-orders", types.MergePatchType, patch,
						metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
						t.Fatalf("patching out of band: %v", err)
					}
				},
				Config: serviceAccountConfig(ns, full),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_service_account.test", plancheck.ResourceActionUpdate),
				}},
				Check: checkServiceAccount(t, ns, testRoleARN, "Role", "flink"),
			},
			{
				// A different role: roleRef is immutable, so the binding is replaced inside an in-place update.
				Config: serviceAccountConfig(ns, `
  irsa_role_arn = "`+testRoleARN+`"
  role_binding {
    kind      = "ClusterRole"
    role_name = "flink-cluster"
  }
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_service_account.test", plancheck.ResourceActionUpdate),
				}},
				Check: checkServiceAccount(t, ns, testRoleARN, "ClusterRole", "flink-cluster"),
			},
			{
				// No binding, no IRSA: both removed.
				Config: serviceAccountConfig(ns, ""),
				Check:  checkServiceAccount(t, ns, "", "", ""),
			},
			{
				// Deleted out of band: planned as a create.
				PreConfig: func() {
					if err := testTyped(t).CoreV1().ServiceAccounts(ns).Delete(ctx, "flink-orders", metav1.DeleteOptions{}); err != nil {
						t.Fatalf("deleting out of band: %v", err)
					}
				},
				Config: serviceAccountConfig(ns, full),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_service_account.test", plancheck.ResourceActionCreate),
				}},
				Check: checkServiceAccount(t, ns, testRoleARN, "Role", "flink"),
			},
		},
	})
}

func TestServiceAccount_invalidInput(t *testing.T) {
	cases := map[string]struct{ ns, body, want string }{
		"namespace uppercase":  {ns: "Data", want: `(?s)namespace.*DNS-1123 label`},
		"role arn malformed":   {ns: "data", body: `  irsa_role_arn = "flink-orders"`, want: `(?s)irsa_role_arn.*IAM role ARN`},
		"irsa as annotation":   {ns: "data", body: `  annotations = { "eks.amazonaws.com/role-arn" = "` + testRoleARN + `" }`, want: `(?s)annotations.*irsa_role_arn`},
		"binding kind unknown": {ns: "data", body: "  role_binding {\n    kind = \"Group\"\n  }", want: `(?s)role_binding\.kind`},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      serviceAccountConfig(tc.ns, tc.body),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}
