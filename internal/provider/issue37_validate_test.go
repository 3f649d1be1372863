package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Issue 37's families that need no other resource and no provider
// configuration are refused by `terraform validate` itself: the provider
// is not configured, only ValidateResourceConfig / ValidateDataResourceConfig
// run. (The partition of the provider's region, and a snapshot's target
// against its deployment, are plan checks: the table has them.)
func TestIssue37_refusedAtValidate(t *testing.T) {
	srv := newProtocolServer(t)
	kmsIn := func(p string) string { return strings.Replace(tKMS, "arn:aws:", "arn:"+p+":", 1) }
	oidcIn := func(p string) string {
		return map[string]string{"aws": tOIDC,
			"aws-cn":     "arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/ABC",
			"aws-us-gov": "arn:aws-us-gov:iam::123456789012:oidc-provider/oidc.eks.us-gov-west-1.amazonaws.com/id/ABC"}[p]
	}
	type vcase struct {
		name string
		r    res
		path string
		text string
	}
	var cs []vcase
	for _, k := range []string{"", " ", "\t"} {
		cs = append(cs,
			vcase{fmt.Sprintf("blank key %q", k), dep("flink_configuration", map[string]any{k: "x"}), fmt.Sprintf("flink_configuration[%q]", k), "empty or white space only"},
			vcase{fmt.Sprintf("blank sensitive key %q", k), dep("sensitive_flink_configuration", map[string]any{k: "x"}), fmt.Sprintf("sensitive_flink_configuration[%q]", k), "empty or white space only"},
			vcase{fmt.Sprintf("data source blank key %q", k), conf("flink_configuration", map[string]any{k: "x"}), fmt.Sprintf("flink_configuration[%q]", k), "empty or white space only"})
	}
	for _, b := range []string{"a.b", "my.bucket.name"} {
		cs = append(cs,
			vcase{"dotted store " + b, dep("state.store_id", b+"/flink/orders"), "state.store_id", "fs.s3a.path.style.access"},
			vcase{"dotted checkpoint dir " + b, depD("state.checkpoint_dir", "s3://"+b+"/c"), "state.checkpoint_dir", "fs.s3a.path.style.access"},
			vcase{"dotted restore path " + b, dep("job.initial_savepoint_path", "s3://"+b+"/sp/savepoint-1"), "job.initial_savepoint_path", "fs.s3a.path.style.access"},
			vcase{"data source dotted store " + b, conf("state.store_id", b+"/flink/orders"), "state.store_id", "fs.s3a.path.style.access"})
	}
	for _, pair := range [][2]string{{"aws-cn", "aws"}, {"aws-us-gov", "aws"}, {"aws", "aws-cn"}, {"aws", "aws-us-gov"}, {"aws-cn", "aws-us-gov"}} {
		cs = append(cs,
			vcase{"role OIDC " + pair[0] + " KMS " + pair[1], r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", oidcIn(pair[0]), "kms_key_arns", []any{kmsIn(pair[1])})),
				"kms_key_arns[0]", "is in the AWS partition " + pair[1] + ", but irsa.oidc_provider_arn is in " + pair[0]},
			vcase{"policy document partition " + pair[0] + " KMS " + pair[1], d("flinkstate_policy_document", map[string]any{"state_store_ids": []any{tStore}, "partition": pair[0], "kms_key_arns": []any{kmsIn(pair[1])}}),
				"kms_key_arns[0]", "ARNs in different AWS partitions"})
	}
	for region, p := range map[string]string{"cn-north-1": "aws-cn", "us-gov-west-1": "aws-us-gov", "us-east-1": "aws"} {
		for _, arnP := range []string{"aws", "aws-cn", "aws-us-gov"} {
			if arnP == p {
				continue
			}
			issuer := "oidc.eks." + region + ".amazonaws.com/id/ABC"
			if p == "aws-cn" {
				issuer = "oidc.eks." + region + ".amazonaws.com.cn/id/ABC"
			}
			cs = append(cs, vcase{"OIDC ARN " + arnP + " for a cluster in " + region,
				r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", "arn:"+arnP+":iam::123456789012:oidc-provider/"+issuer)),
				"irsa.oidc_provider_arn", "its issuer is a cluster of " + region + ", which is in " + p})
		}
	}
	ctx := context.Background()
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			var diags []*tfprotov6.Diagnostic
			if c.r.data {
				v, err := srv.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: c.r.typ, Config: mustDynamic(t, srv.dataSourceType(c.r.typ), c.r.attrs)})
				if err != nil {
					t.Fatal(err)
				}
				diags = v.Diagnostics
			} else {
				v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: c.r.typ, Config: mustDynamic(t, srv.resourceType(c.r.typ), c.r.attrs)})
				if err != nil {
					t.Fatal(err)
				}
				diags = v.Diagnostics
			}
			for _, d := range diags {
				if d.Severity == tfprotov6.DiagnosticSeverityError && dottedPath(d.Attribute) == c.path && strings.Contains(d.Summary+": "+d.Detail, c.text) {
					return
				}
			}
			var got []string
			for _, d := range diags {
				got = append(got, fmt.Sprintf("%q %s: %s", dottedPath(d.Attribute), d.Summary, d.Detail))
			}
			t.Errorf("validate: want an error at %q containing %q; got %v", c.path, c.text, got)
		})
	}
}
