package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// manifestApply writes obj as kubernetes_manifest does: a server-side apply
// with field manager "Terraform", without force (hashicorp/kubernetes
// manifest/provider/apply.go ApplyResourceChange; defaultFieldManagerName
// and force_conflicts false in manifest/provider/plan.go).
func manifestApply(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	body, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	force := false
	live, err := testKube(t).Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Patch(context.Background(), obj.GetName(),
		ktypes.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "Terraform", Force: &force})
	if err != nil {
		t.Fatalf("applying %s: %v", obj.GetName(), err)
	}
	return live
}

// readOnce is the refresh Terraform makes of a resource instance before
// planning (its state and private data as stored).
func readOnce(t *testing.T, srv *protocolServer, target string, state *tfprotov6.DynamicValue, private []byte) *tfprotov6.ReadResourceResponse {
	t.Helper()
	r, err := srv.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: target, CurrentState: state, Private: private})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// After a move, the refresh reads the live object exactly as after an
// import: the same state (every attribute read from the object), the same
// private data (the object's UID, for a FlinkDeployment the defaults it
// lacks and the pending take-over of its fields from the previous field
// manager), the same warnings. The objects are written as hashicorp/kubernetes
// writes them (kubernetes_manifest: server-side apply as "Terraform";
// kubernetes_service_account_v1 and kubernetes_role_binding_v1: creates),
// and the source states are the fixtures naming them. So whatever an import
// of these objects plans and applies (the adopt tests: no change, no
// restart, fields taken over on the first update) a move does too.
func TestAccMove_isAnImport(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	ctx := context.Background()
	srv := newMoveServer(t)
	cfg := mustDynamic(t, srv.schemas.Provider.ValueType(), map[string]any{})
	if r, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.11.4", Config: cfg}); err != nil || hasError(r.Diagnostics) {
		t.Fatal(err, diagText(r.Diagnostics))
	}

	dep := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, dep, ns, "orders")
	depLive := manifestApply(t, kube.FlinkDeploymentGVR, dep)
	snap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": "orders-before-upgrade", "namespace": ns},
		"spec": map[string]any{"backoffLimit": int64(1), "jobReference": map[string]any{"kind": "FlinkDeployment", "name": "orders"},
			"savepoint": map[string]any{"disposeOnDelete": false, "formatType": "CANONICAL"}},
	}}
	manifestApply(t, kube.FlinkStateSnapshotGVR, snap)
	automount := true
	sa, err := testTyped(t).CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "flink", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "orders"},
			Annotations: map[string]string{IRSAAnnotation: "arn:aws:iam::123456789012:role/flink-orders"}},
		AutomountServiceAccountToken: &automount,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testTyped(t).RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flink", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "flink"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "flink", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inNS := func(s string) string { return strings.ReplaceAll(s, `"namespace": "flink"`, `"namespace": "`+ns+`"`) }
	for _, c := range []struct {
		file, target, id string
		rewrite          func(string) string
	}{
		{"manifest_flinkdeployment.json", "flinkstate_deployment", ns + "/orders", inNS},
		{"manifest_flinkdeployment_imported.json", "flinkstate_deployment", ns + "/orders", inNS},
		{"manifest_flinkstatesnapshot.json", "flinkstate_snapshot", ns + "/orders-before-upgrade", inNS},
		{"service_account_v1.json", "flinkstate_service_account", ns + "/flink", func(s string) string {
			s = strings.ReplaceAll(inNS(s), `"id": "flink/flink"`, `"id": "`+ns+`/flink"`)
			return strings.ReplaceAll(s, "5d1c2a64-0f4e-4b8e-9a77-3f2b1c0d9e84", string(sa.UID))
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			req := readStoredInstance(t, c.file).moveRequest(c.target)
			req.SourceState.JSON = []byte(c.rewrite(string(req.SourceState.JSON)))
			m, err := srv.MoveResourceState(ctx, req)
			if err != nil || hasError(m.Diagnostics) {
				t.Fatalf("move: %v %s", err, diagText(m.Diagnostics))
			}
			i, err := srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: c.target, ID: c.id})
			if err != nil || hasError(i.Diagnostics) {
				t.Fatalf("import: %v %s", err, diagText(i.Diagnostics))
			}
			moved := readOnce(t, srv, c.target, m.TargetState, m.TargetPrivate)
			imported := readOnce(t, srv, c.target, i.ImportedResources[0].State, i.ImportedResources[0].Private)
			if hasError(moved.Diagnostics) || hasError(imported.Diagnostics) {
				t.Fatalf("read after the move: %s\nafter the import: %s", diagText(moved.Diagnostics), diagText(imported.Diagnostics))
			}
			mv, iv := stateValue(t, c.target, moved.NewState), stateValue(t, c.target, imported.NewState)
			if mv.IsNull() || !mv.Equal(iv) {
				t.Errorf("read after the move\n%s\nis not the read after the import\n%s", mv, iv)
			}
			if m, _ := decodePrivate(moved.Private); m[privateMoved] != nil {
				t.Errorf("the move's mark outlives the read (plans would be refused): %s", moved.Private)
			}
			mp, ip := privateKeys(t, moved.Private), privateKeys(t, imported.Private)
			if len(mp) != len(ip) || len(ip) == 0 {
				t.Errorf("private after the move %v, after the import %v", mp, ip)
			}
			for k, v := range ip {
				if mp[k] != v {
					t.Errorf("private %q: after the move %q, after the import %q", k, mp[k], v)
				}
			}
			if got, want := diagText(moved.Diagnostics), diagText(imported.Diagnostics); got != want {
				t.Errorf("diagnostics after the move\n%s\nafter the import\n%s", got, want)
			}
			switch c.target {
			case "flinkstate_deployment":
				if ip[privateUID] != `"`+string(depLive.GetUID())+`"` || ip[privateAdopt] == "" {
					t.Errorf("the import's read records %v, want the UID and the pending take-over", ip)
				}
			case "flinkstate_service_account":
				if s := mv.String(); !strings.Contains(s, `"role_name":tftypes.String<"flink">`) {
					t.Errorf("the RoleBinding of the account's name is not read into role_binding: %s", s)
				}
			}
		})
	}

	// The UID kubernetes_service_account_v1 recorded is kept: an object of
	// that name that is not the one it created is dropped from state by the
	// refresh, with a warning, as after a create.
	t.Run("service account replaced", func(t *testing.T) {
		req := readStoredInstance(t, "service_account_v1.json").moveRequest("flinkstate_service_account")
		req.SourceState.JSON = []byte(strings.ReplaceAll(inNS(string(req.SourceState.JSON)), `"id": "flink/flink"`, `"id": "`+ns+`/flink"`))
		m, err := srv.MoveResourceState(ctx, req)
		if err != nil || hasError(m.Diagnostics) {
			t.Fatalf("move: %v %s", err, diagText(m.Diagnostics))
		}
		r := readOnce(t, srv, "flinkstate_service_account", m.TargetState, m.TargetPrivate)
		if v := stateValue(t, "flinkstate_service_account", r.NewState); !v.IsNull() || !strings.Contains(diagText(r.Diagnostics), "replaced outside Terraform") {
			t.Errorf("state %s, diagnostics %s: want it dropped with a warning", v, diagText(r.Diagnostics))
		}
	})
}

// The rest of a move is the import's (TestAccMove_isAnImport), here for a
// FlinkDeployment that kubernetes_manifest applied, with the terraform CLI:
// the configuration a user writes plans no change; an update that changes
// nothing in the spec keeps the generation (no restart) and takes the
// provider's fields over from kubernetes_manifest's field manager
// ("Terraform"); a setting then removed from the configuration is removed
// from the object, and nothing else changes.
func TestAccMove_takesOverFromManifest(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	ns := testNamespace(t)
	startOperator(t, ns)
	name := "ha-moved"
	obj := operatorExamples(t, "FlinkDeployment")["basic-checkpoint-ha"]
	adaptExample(t, obj, ns, name)
	gen0 := manifestApply(t, kube.FlinkDeploymentGVR, obj).GetGeneration()
	format := `    "kubernetes.operator.savepoint.format.type" = "NATIVE"`
	live := func() *unstructured.Unstructured {
		o, err := getDeployment(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ownedByManifest := func(o *unstructured.Unstructured, key string) bool {
		for _, e := range o.GetManagedFields() {
			if e.Manager == "Terraform" && strings.Contains(string(e.FieldsV1.Raw), key) {
				return true
			}
		}
		return false
	}
	if !ownedByManifest(live(), "kubernetes.operator.savepoint.format.type") {
		t.Fatal("the object is not owned by kubernetes_manifest's field manager")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             adoptedHAConfig(ns, name, format, ""),
				ResourceName:       "flinkstate_deployment.adopted",
				ImportState:        true,
				ImportStateId:      ns + "/" + name,
				ImportStatePersist: true,
			},
			{Config: adoptedHAConfig(ns, name, format, ""), PlanOnly: true},
			{
				Config: adoptedHAConfig(ns, name, format, "  timeouts {\n    update = \"9m\"\n  }"),
				Check: func(*terraform.State) error {
					o := live()
					if o.GetGeneration() != gen0 {
						return fmt.Errorf("generation %d after an update that changes nothing, want %d (the operator would restart the job)", o.GetGeneration(), gen0)
					}
					if ownedByManifest(o, "kubernetes.operator.savepoint.format.type") {
						return fmt.Errorf("kubernetes_manifest's field manager still co-owns a key the provider manages")
					}
					return nil
				},
			},
			{
				Config: adoptedHAConfig(ns, name, "", "  timeouts {\n    update = \"9m\"\n  }"),
				Check: func(*terraform.State) error {
					o := live()
					cfg, _, _ := unstructured.NestedMap(o.Object, "spec", "flinkConfiguration")
					if _, ok := cfg["kubernetes.operator.savepoint.format.type"]; ok {
						return fmt.Errorf("kubernetes.operator.savepoint.format.type still in the object after its removal: %v", cfg)
					}
					if n, ok, _ := unstructured.NestedInt64(o.Object, "spec", "job", "savepointTriggerNonce"); !ok || n != 0 {
						return fmt.Errorf("spec.job.savepointTriggerNonce, which the provider does not manage, changed: %v %v", n, ok)
					}
					if o.GetGeneration() != gen0+1 {
						return fmt.Errorf("generation %d, want %d: one spec change", o.GetGeneration(), gen0+1)
					}
					return nil
				},
			},
		},
	})
}

// A bucket and a role written as hashicorp/aws writes them (CreateBucket;
// CreateRole and PutRolePolicy) and moved from the fixtures' states naming
// them: the refresh after the move reads them exactly as after an import.
func TestAccMove_awsIsAnImport(t *testing.T) {
	skipUnlessAcc(t)
	ctx := context.Background()
	a := testAWS(t)
	bucket, role := randName("fs-move-"), randName("fs-move-")
	if _, err := a.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}) })
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::000000000000:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE"},` +
		`"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringEquals":{"oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE:sub":"system:serviceaccount:data-processing:flink-orders",` +
		`"oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE:aud":"sts.amazonaws.com"}}}]}`
	if _, err := a.IAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(trust)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.IAM.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String("flink-orders-state"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::` + bucket + `/*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = a.IAM.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String("flink-orders-state")})
		_, _ = a.IAM.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(role)})
	})
	srv := newMoveServer(t)
	cfg := mustDynamic(t, srv.schemas.Provider.ValueType(), map[string]any{})
	if r, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.11.4", Config: cfg}); err != nil || hasError(r.Diagnostics) {
		t.Fatal(err, diagText(r.Diagnostics))
	}
	for _, c := range []struct{ file, target, id, old string }{
		{"aws_s3_bucket.json", "flinkstate_bucket", bucket, "acme-flink-state"},
		{"aws_iam_role.json", "flinkstate_iam_role", role, "flink-orders"},
	} {
		t.Run(c.file, func(t *testing.T) {
			req := readStoredInstance(t, c.file).moveRequest(c.target)
			req.SourceState.JSON = []byte(strings.ReplaceAll(string(req.SourceState.JSON), `"`+c.old+`"`, `"`+c.id+`"`))
			m, err := srv.MoveResourceState(ctx, req)
			if err != nil || hasError(m.Diagnostics) {
				t.Fatalf("move: %v %s", err, diagText(m.Diagnostics))
			}
			i, err := srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: c.target, ID: c.id})
			if err != nil || hasError(i.Diagnostics) {
				t.Fatalf("import: %v %s", err, diagText(i.Diagnostics))
			}
			moved := readOnce(t, srv, c.target, m.TargetState, m.TargetPrivate)
			imported := readOnce(t, srv, c.target, i.ImportedResources[0].State, i.ImportedResources[0].Private)
			if hasError(moved.Diagnostics) || hasError(imported.Diagnostics) {
				t.Fatalf("read after the move: %s\nafter the import: %s", diagText(moved.Diagnostics), diagText(imported.Diagnostics))
			}
			mv, iv := stateValue(t, c.target, moved.NewState), stateValue(t, c.target, imported.NewState)
			if mv.IsNull() || !mv.Equal(iv) {
				t.Errorf("read after the move\n%s\nis not the read after the import\n%s", mv, iv)
			}
			if m, _ := decodePrivate(moved.Private); m[privateMoved] != nil {
				t.Errorf("the move's mark outlives the read: %s", moved.Private)
			}
			mp, ip := privateKeys(t, moved.Private), privateKeys(t, imported.Private)
			if len(mp) != len(ip) {
				t.Errorf("private after the move %v, after the import %v", mp, ip)
			}
			for k, v := range ip {
				if mp[k] != v {
					t.Errorf("private %q: after the move %q, after the import %q", k, mp[k], v)
				}
			}
			if c.target == "flinkstate_iam_role" && !strings.Contains(mv.String(), "inline:flink-orders-state") {
				t.Errorf("the role's inline policy is not reported in extra_policies: %s", mv)
			}
		})
	}
}
