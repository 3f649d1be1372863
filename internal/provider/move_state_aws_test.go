package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	tfaddr "github.com/hashicorp/terraform-registry-address"
)

// awsSource is hashicorp/aws' address as Terraform sends it.
var awsSource = tfaddr.NewProvider(tfaddr.DefaultProviderRegistryHost, "hashicorp", "aws").String()

// awsFixtureTypes are the hashicorp/aws fixtures. Unlike the
// hashicorp/kubernetes ones they are abbreviated from the resources' schemas
// (hashicorp/aws internal/service/s3/bucket.go, iam/role.go,
// eks/pod_identity_association.go; nested blocks left empty) and not
// checked against a schema type: their converters read the top-level
// identifying attributes only (and the role's policies).
var awsFixtureTypes = map[string]string{
	"aws_s3_bucket.json":                    "aws_s3_bucket",
	"aws_iam_role.json":                     "aws_iam_role",
	"aws_eks_pod_identity_association.json": "aws_eks_pod_identity_association",
}

// Each hashicorp/aws resource moves as an import of the same bucket, role
// or association.
func TestMoveState_awsIsAnImport(t *testing.T) {
	for _, c := range []struct{ file, target, id, warning string }{
		{"aws_s3_bucket.json", "flinkstate_bucket", "acme-flink-state", "removed { from = aws_s3_bucket_server_side_encryption_configuration.<name>"},
		{"aws_iam_role.json", "flinkstate_iam_role", "flink-orders", "inline policies flink-orders-state"},
		{"aws_eks_pod_identity_association.json", "flinkstate_pod_identity_association", "prod,a-abcdefghijklmnop1", ""},
	} {
		t.Run(c.file, func(t *testing.T) {
			moved, imported := moveAndImport(t, c.file, c.target, c.id)
			mv, iv := stateValue(t, c.target, moved.TargetState), stateValue(t, c.target, imported.TargetState)
			if !mv.Equal(iv) {
				t.Errorf("moved state\n%s\nis not the imported state\n%s", mv, iv)
			}
			if mp, ip := privateKeys(t, moved.TargetPrivate), privateKeys(t, imported.TargetPrivate); len(mp) != len(ip) {
				t.Errorf("moved private %v, imported %v", mp, ip)
			}
			if c.warning != "" && !strings.Contains(diagText(moved.Diagnostics), c.warning) {
				t.Errorf("no warning saying %q: %s", c.warning, diagText(moved.Diagnostics))
			}
		})
	}
}

func TestMoveState_awsRefused(t *testing.T) {
	ctx := context.Background()
	srv := newMoveServer(t)
	replace := func(from, to string) func(*tfprotov6.MoveResourceStateRequest) {
		return func(r *tfprotov6.MoveResourceStateRequest) {
			r.SourceState.JSON = []byte(strings.Replace(string(r.SourceState.JSON), from, to, 1))
		}
	}
	for _, c := range []struct {
		name, file, target string
		change             func(*tfprotov6.MoveResourceStateRequest)
		want               []string
	}{
		{"role with managed policies", "aws_iam_role.json", "flinkstate_iam_role",
			replace(`"managed_policy_arns": []`, `"managed_policy_arns": ["arn:aws:iam::aws:policy/AmazonMSKReadOnlyAccess"]`),
			[]string{"managed policies attached (arn:aws:iam::aws:policy/AmazonMSKReadOnlyAccess)", "would detach them", "import the role instead"}},
		{"role policy", "aws_iam_role.json", "flinkstate_iam_role",
			func(r *tfprotov6.MoveResourceStateRequest) { r.SourceTypeName = "aws_iam_role_policy" },
			[]string{"aws_iam_role_policy is one setting of what flinkstate_iam_role manages", "removed { from = aws_iam_role_policy.<name>  lifecycle { destroy = false } }"}},
		{"bucket configuration", "aws_s3_bucket.json", "flinkstate_bucket",
			func(r *tfprotov6.MoveResourceStateRequest) { r.SourceTypeName = "aws_s3_bucket_versioning" },
			[]string{"removed { from = aws_s3_bucket_versioning.<name>"}},
		{"flatmap bucket state", "aws_s3_bucket.json", "flinkstate_bucket",
			func(r *tfprotov6.MoveResourceStateRequest) {
				r.SourceState = &tfprotov6.RawState{Flatmap: map[string]string{"id": "acme-flink-state"}}
			},
			[]string{"not stored as JSON", "Import the bucket instead"}},
		{"cross-account association", "aws_eks_pod_identity_association.json", "flinkstate_pod_identity_association",
			replace(`"target_role_arn": null`, `"target_role_arn": "arn:aws:iam::210987654321:role/flink"`),
			[]string{"target_role_arn arn:aws:iam::210987654321:role/flink", "Keep it as aws_eks_pod_identity_association"}},
		{"association without session tags", "aws_eks_pod_identity_association.json", "flinkstate_pod_identity_association",
			replace(`"disable_session_tags": false`, `"disable_session_tags": true`),
			[]string{"disable_session_tags = true"}},
		{"bucket to role", "aws_s3_bucket.json", "flinkstate_iam_role", nil,
			[]string{"Unable to Move Resource State"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := readStoredInstance(t, c.file).moveRequest(c.target)
			if c.change != nil {
				c.change(req)
			}
			resp, err := srv.MoveResourceState(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !hasError(resp.Diagnostics) {
				t.Fatalf("moved, want an error")
			}
			text := diagText(resp.Diagnostics)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("error does not say %q:\n%s", w, text)
				}
			}
		})
	}
}

// OpenTofu v1.10 sends "aws".
func TestMoveState_awsOpenTofuAddress(t *testing.T) {
	req := readStoredInstance(t, "aws_iam_role.json").moveRequest("flinkstate_iam_role")
	req.SourceProviderAddress = "aws"
	resp, err := newMoveServer(t).MoveResourceState(context.Background(), req)
	if err != nil || hasError(resp.Diagnostics) || resp.TargetState == nil {
		t.Fatalf("%v %s", err, diagText(resp.Diagnostics))
	}
}
