package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
)

// The bucket's ARN carries the partition of the provider's region.
func TestBucketARNPartition(t *testing.T) {
	for partition, want := range map[string]string{
		"aws":        "arn:aws:s3:::b",
		"aws-cn":     "arn:aws-cn:s3:::b",
		"aws-us-gov": "arn:aws-us-gov:s3:::b",
	} {
		if got := bucketARN(partition, "b"); got != want {
			t.Errorf("bucketARN(%q) = %q, want %q", partition, got, want)
		}
	}
	t.Setenv("AWS_REGION", "")
	m := newMeta("test")
	_ = m.setAWS(t.Context(), &awsModel{Region: types.StringValue("cn-northwest-1")})
	if p, known := m.Partition(t.Context()); !known || p != "aws-cn" {
		t.Errorf("partition of cn-northwest-1: %q (known %v), want aws-cn", p, known)
	}
}

// The role's documents in each partition: the permission ARNs carry the
// partition of the provider's region, the Pod Identity trust names the
// service principal AWS documents for every partition
// (iampolicy.PodIdentityPrincipal), never one built from the partition's
// DNS suffix (pods.eks.amazonaws.com.cn).
func TestIAMRoleDocumentsPerPartition(t *testing.T) {
	for region, partition := range map[string]string{
		"eu-west-1":     "aws",
		"cn-north-1":    "aws-cn",
		"us-gov-west-1": "aws-us-gov",
	} {
		t.Run(partition, func(t *testing.T) {
			t.Setenv("AWS_REGION", "")
			m := newMeta("test")
			if d := m.setAWS(t.Context(), &awsModel{Region: types.StringValue(region)}); d.HasError() {
				t.Fatal(d)
			}
			role := &iamRoleModel{
				PodIdentity: &podIdentityModel{
					Namespace:      types.StringValue("data-processing"),
					ServiceAccount: types.StringValue("flink-orders"),
					ClusterName:    types.StringValue("prod"),
				},
				StateStoreIDs: types.ListValueMust(types.StringType, []attr.Value{types.StringValue("acme-state/flink/orders")}),
				KMSKeyARNs:    types.ListNull(types.StringType),
			}
			var diags diag.Diagnostics
			trust, perm, ok := role.documents(t.Context(), m, &diags)
			if !ok || diags.HasError() {
				t.Fatalf("documents: ok %v, %v", ok, diags)
			}
			if got := iampolicy.ParseTrust(trust); got.Kind != "pod_identity" || got.Namespace != "data-processing" {
				t.Errorf("trust %s is not a Pod Identity trust: %+v", trust, got)
			}
			if !strings.Contains(trust, `"Service":"pods.eks.amazonaws.com"`) {
				t.Errorf("trust %s does not name pods.eks.amazonaws.com", trust)
			}
			if want := "arn:" + partition + ":s3:::acme-state"; !strings.Contains(perm, `"`+want+`"`) {
				t.Errorf("permissions %s lack %s", perm, want)
			}
			if partition != "aws" && strings.Contains(perm, "arn:aws:") {
				t.Errorf("permissions %s carry the aws partition in %s", perm, partition)
			}
		})
	}
}

// The provider's own roles to assume are in the partition of its region:
// STS of one partition cannot assume a role of another.
func TestAssumeRolePartition(t *testing.T) {
	for _, tc := range []struct {
		region, arn string
		refused     bool
	}{
		{"us-east-1", "arn:aws-cn:iam::123456789012:role/deployer", true},
		{"us-east-1", "arn:aws-us-gov:iam::123456789012:role/deployer", true},
		{"cn-north-1", "arn:aws:iam::123456789012:role/deployer", true},
		{"us-gov-east-1", "arn:aws-cn:iam::123456789012:role/deployer", true},
		{"cn-north-1", "arn:aws-cn:iam::123456789012:role/deployer", false},
		{"us-east-1", "arn:aws:iam::123456789012:role/deployer", false},
	} {
		for _, web := range []bool{false, true} {
			t.Setenv("AWS_REGION", "")
			m := newMeta("test")
			a := &awsModel{Region: types.StringValue(tc.region)}
			want := "aws.assume_role.role_arn"
			if web {
				a.AssumeRoleWithWebIdentity = &webIdentityModel{RoleARN: types.StringValue(tc.arn), WebIdentityTokenFile: types.StringValue("/tmp/token")}
				want = "aws.assume_role_with_web_identity.role_arn"
			} else {
				a.AssumeRole = &assumeRoleModel{RoleARN: types.StringValue(tc.arn)}
			}
			d := m.setAWS(t.Context(), a)
			refused := false
			for _, e := range d.Errors() {
				refused = refused || strings.Contains(e.Summary(), "another AWS partition") && strings.Contains(e.Detail(), want+" "+tc.arn)
			}
			if refused != tc.refused {
				t.Errorf("region %s, %s %s: refused %v, want %v (%v)", tc.region, want, tc.arn, refused, tc.refused, d)
			}
		}
	}
}
