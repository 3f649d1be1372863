package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
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

// expectServiceAccount reads the ServiceAccount and RoleBinding from the API server.
func expectServiceAccount(t *testing.T, ns, wantRoleARN, wantRoleKind, wantRoleName string) statecheck.StateCheck {
	return expectAPI(func() error {
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
	})
}

const saAddr = "flinkstate_service_account.test"

// saFull is the ServiceAccount with labels, annotations, IRSA and a RoleBinding.
const saFull = `
  labels        = { app = "orders" }
  annotations   = { owner = "data-platform" }
  irsa_role_arn = "` + testRoleARN + `"
  role_binding {}
`

func checkServiceAccountGone(t *testing.T, ns string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, c := context.Background(), testTyped(t)
		if _, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "flink-orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ServiceAccount still there after destroy: %v", err)
		}
		if _, err := c.RbacV1().RoleBindings(ns).Get(ctx, "flink-orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("RoleBinding still there after destroy: %v", err)
		}
		return nil
	}
}

func saPlanAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(saAddr, action)}}
}

// patchServiceAccount changes the ServiceAccount as another field manager would.
func patchServiceAccount(t *testing.T, ns, patch string) {
	t.Helper()
	if _, err := testTyped(t).CoreV1().ServiceAccounts(ns).Patch(context.Background(), "flink-orders", types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatalf("patching out of band: %v", err)
	}
}

func TestAccServiceAccount_basic(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{{
			Config: serviceAccountConfig(ns, saFull),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(saAddr, tfjsonPath("id"), knownvalue.StringExact(ns+"/flink-orders")),
				statecheck.ExpectKnownValue(saAddr, tfjsonPath("role_binding").AtMapKey("role_name"), knownvalue.StringExact("flink")),
				statecheck.ExpectKnownValue(saAddr, tfjsonPath("role_binding").AtMapKey("kind"), knownvalue.StringExact("Role")),
				expectServiceAccount(t, ns, testRoleARN, "Role", "flink"),
			},
		}},
	})
}

func TestAccServiceAccount_import(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{
			{Config: serviceAccountConfig(ns, saFull)},
			{
				ResourceName:      saAddr,
				ImportState:       true,
				ImportStateId:     exampleImportID(t, "flinkstate_service_account", "data-processing", ns),
				ImportStateVerify: true,
			},
		},
	})
}

// Labels and annotations others add are not drift.
func TestAccServiceAccount_foreignMetadataIsNotDrift(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{
			{Config: serviceAccountConfig(ns, saFull)},
			{
				PreConfig: func() {
					patchServiceAccount(t, ns, `{"metadata":{"labels":{"operator-added":"x"},"annotations":{"kubectl.kubernetes.io/last-applied":"y"}}}`)
				},
				Config:           serviceAccountConfig(ns, saFull),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// The IRSA annotation removed out of band is planned back and restored.
func TestAccServiceAccount_driftIRSAAnnotationRemoved(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{
			{Config: serviceAccountConfig(ns, saFull)},
			{
				PreConfig:         func() { patchServiceAccount(t, ns, `{"metadata":{"annotations":{"`+IRSAAnnotation+`":null}}}`) },
				Config:            serviceAccountConfig(ns, saFull),
				ConfigPlanChecks:  saPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectServiceAccount(t, ns, testRoleARN, "Role", "flink")},
			},
		},
	})
}

// A different role: roleRef is immutable, so the binding is replaced inside an in-place update.
func TestAccServiceAccount_updateRoleBinding(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{
			{Config: serviceAccountConfig(ns, saFull)},
			{
				Config: serviceAccountConfig(ns, `
  irsa_role_arn = "`+testRoleARN+`"
  role_binding {
    kind      = "ClusterRole"
    role_name = "flink-cluster"
  }
`),
				ConfigPlanChecks:  saPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectServiceAccount(t, ns, testRoleARN, "ClusterRole", "flink-cluster")},
			},
		},
	})
}

// No binding, no IRSA: both removed.
func TestAccServiceAccount_updateRemovesBindingAndIRSA(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{
			{Config: serviceAccountConfig(ns, saFull)},
			{
				Config:            serviceAccountConfig(ns, ""),
				ConfigPlanChecks:  saPlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectServiceAccount(t, ns, "", "", "")},
			},
		},
	})
}

// Deleted out of band: planned as a create. (Created without a binding
// first, as a create never adopts a RoleBinding it did not make.)
func TestAccServiceAccount_disappears(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkServiceAccountGone(t, ns),
		Steps: []resource.TestStep{
			{Config: serviceAccountConfig(ns, "")},
			{
				PreConfig: func() {
					if err := testTyped(t).CoreV1().ServiceAccounts(ns).Delete(context.Background(), "flink-orders", metav1.DeleteOptions{}); err != nil {
						t.Fatalf("deleting out of band: %v", err)
					}
				},
				Config:            serviceAccountConfig(ns, saFull),
				ConfigPlanChecks:  saPlanAction(plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{expectServiceAccount(t, ns, testRoleARN, "Role", "flink")},
			},
		},
	})
}

func TestServiceAccount_invalidInput(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ ns, body, want string }{
		"namespace uppercase":  {ns: "Data", want: `(?s)namespace.*DNS-1123 label`},
		"role arn malformed":   {ns: "data", body: `  irsa_role_arn = "flink-orders"`, want: `(?s)irsa_role_arn.*IAM role ARN`},
		"irsa as annotation":   {ns: "data", body: `  annotations = { "eks.amazonaws.com/role-arn" = "` + testRoleARN + `" }`, want: `(?s)annotations.*irsa_role_arn`},
		"binding kind unknown": {ns: "data", body: "  role_binding {\n    kind = \"Group\"\n  }", want: `(?s)role_binding\.kind`},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
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
