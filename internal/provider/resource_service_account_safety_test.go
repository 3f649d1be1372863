package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Another owner's ServiceAccount of the same name is never adopted: the
// create fails with the import command, its IRSA annotation and UID stay,
// and destroying this configuration leaves it.
func TestAccServiceAccount_createNeverAdoptsServiceAccount(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	const theirRole = "arn:aws:iam::210987654321:role/other-team"
	theirs, err := testTyped(t).CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: "flink-orders", Annotations: map[string]string{IRSAAnnotation: theirRole}}}, metav1.CreateOptions{FieldManager: "other-team"})
	if err != nil {
		t.Fatal(err)
	}
	left := func(*terraform.State) error {
		sa, err := testTyped(t).CoreV1().ServiceAccounts(ns).Get(context.Background(), "flink-orders", metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("the other owner's ServiceAccount: %w", err)
		}
		if sa.UID != theirs.UID || sa.Annotations[IRSAAnnotation] != theirRole {
			return fmt.Errorf("the other owner's ServiceAccount changed: uid %s (was %s), role %q", sa.UID, theirs.UID, sa.Annotations[IRSAAnnotation])
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             left,
		Steps: []resource.TestStep{
			{
				Config:      serviceAccountConfig(ns, fmt.Sprintf("  irsa_role_arn = %q", testRoleARN)),
				ExpectError: errorRE("ServiceAccount already exists", "never takes over", "terraform import ADDRESS "+ns+"/flink-orders"),
			},
			destroyThenCheck(serviceAccountConfig(ns, fmt.Sprintf("  irsa_role_arn = %q", testRoleARN)), left),
		},
	})
}

// An existing RoleBinding of that name (someone else's) is not adopted
// either, and the create leaves nothing half-made: the ServiceAccount it
// had just created is removed again.
func TestAccServiceAccount_createNeverAdoptsRoleBinding(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	theirs, err := testTyped(t).RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flink-orders"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "someone"}},
	}, metav1.CreateOptions{FieldManager: "other-team"})
	if err != nil {
		t.Fatal(err)
	}
	config := serviceAccountConfig(ns, `  role_binding {
    role_name = "flink"
  }`)
	left := func(*terraform.State) error {
		rb, err := testTyped(t).RbacV1().RoleBindings(ns).Get(context.Background(), "flink-orders", metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("the other owner's RoleBinding: %w", err)
		}
		if rb.UID != theirs.UID || rb.RoleRef.Name != "view" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "someone" {
			return fmt.Errorf("the other owner's RoleBinding changed: uid %s (was %s), roleRef %+v, subjects %+v", rb.UID, theirs.UID, rb.RoleRef, rb.Subjects)
		}
		if _, err := testTyped(t).CoreV1().ServiceAccounts(ns).Get(context.Background(), "flink-orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the failed create left its ServiceAccount behind (%v)", err)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             left,
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: errorRE("RoleBinding already exists", "terraform import ADDRESS "+ns+"/flink-orders"),
			},
			destroyThenCheck(config, left),
		},
	})
}

// The ServiceAccount this configuration created is deleted and another
// owner creates one of the same name: it is not taken for ours (dropped
// from state with a warning), the create refuses it, and the destroy
// leaves it.
func TestAccServiceAccount_replacedOutsideTerraformIsNotOurs(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	const theirRole = "arn:aws:iam::210987654321:role/other-team"
	var theirUID string
	config := serviceAccountConfig(ns, fmt.Sprintf("  irsa_role_arn = %q", testRoleARN))
	left := func(*terraform.State) error {
		sa, err := testTyped(t).CoreV1().ServiceAccounts(ns).Get(context.Background(), "flink-orders", metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("the other owner's ServiceAccount: %w", err)
		}
		if string(sa.UID) != theirUID || sa.Annotations[IRSAAnnotation] != theirRole {
			return fmt.Errorf("the other owner's ServiceAccount changed: uid %s (was %s), role %q", sa.UID, theirUID, sa.Annotations[IRSAAnnotation])
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             left,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					ctx, c := context.Background(), testTyped(t).CoreV1().ServiceAccounts(ns)
					if err := c.Delete(ctx, "flink-orders", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					sa, err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
						Name: "flink-orders", Annotations: map[string]string{IRSAAnnotation: theirRole}}}, metav1.CreateOptions{FieldManager: "other-team"})
					if err != nil {
						t.Fatal(err)
					}
					theirUID = string(sa.UID)
				},
				Config:      config,
				ExpectError: errorRE("ServiceAccount already exists", "terraform import ADDRESS "+ns+"/flink-orders"),
			},
			destroyThenCheck(config, left),
		},
	})
}
