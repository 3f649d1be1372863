package iampolicy

import "testing"

func TestARNPartition(t *testing.T) {
	for s, want := range map[string]string{
		"arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/A":        "aws",
		"arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/A": "aws-cn",
		"arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/x":                                  "aws-us-gov",
		"not-an-arn":     "",
		"arn:AWS:s3:::b": "",
	} {
		if got := ARNPartition(s); got != want {
			t.Errorf("ARNPartition(%q) = %q, want %q", s, got, want)
		}
	}
}

// Every pair of the three partitions, in both orders, is refused at the
// second ARN; ARNs of one partition pass.
func TestSamePartition(t *testing.T) {
	oidc := func(p string) string {
		return "arn:" + p + ":iam::123456789012:oidc-provider/oidc.eks.r-1.amazonaws.com/id/A"
	}
	kms := func(p string) string { return "arn:" + p + ":kms:us-east-1:123456789012:key/k" }
	parts := []string{"aws", "aws-cn", "aws-us-gov"}
	for _, a := range parts {
		for _, b := range parts {
			arns := []NamedARN{{"irsa.oidc_provider_arn", oidc(a)}, {"kms_key_arns[0]", kms(a)}, {"kms_key_arns[1]", kms(b)}}
			i, ref := SamePartition(arns)
			if a == b {
				if i != -1 || ref != -1 {
					t.Errorf("%s/%s: %d %d, want none", a, b, i, ref)
				}
				continue
			}
			if i != 2 || ref != 0 {
				t.Errorf("%s/%s: %d %d, want 2 0", a, b, i, ref)
			}
			if i, ref := SamePartition([]NamedARN{{"irsa.oidc_provider_arn", oidc(a)}, {"kms_key_arns[0]", kms(b)}}); i != 1 || ref != 0 {
				t.Errorf("OIDC %s, key %s: %d %d, want 1 0", a, b, i, ref)
			}
		}
	}
	if i, ref := SamePartition([]NamedARN{{"a", "junk"}, {"b", kms("aws-cn")}, {"c", kms("aws-cn")}}); i != -1 || ref != -1 {
		t.Errorf("an unparsable ARN is not the reference: %d %d", i, ref)
	}
	if i, ref := SamePartition([]NamedARN{{"a", "junk"}, {"b", kms("aws-cn")}, {"c", kms("aws")}}); i != 2 || ref != 1 {
		t.Errorf("after an unparsable ARN: %d %d, want 2 1", i, ref)
	}
}

func TestOutsidePartition(t *testing.T) {
	for _, tc := range []struct{ arn, partition, got string }{
		{"arn:aws-cn:iam::123456789012:oidc-provider/x", "aws", "aws-cn"},
		{"arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/k", "aws", "aws-us-gov"},
		{"arn:aws:iam::123456789012:role/r", "aws-cn", "aws"},
		{"arn:aws:iam::123456789012:role/r", "aws-us-gov", "aws"},
		{"arn:aws-cn:iam::123456789012:role/r", "aws-us-gov", "aws-cn"},
	} {
		if got, outside := OutsidePartition(tc.arn, tc.partition); !outside || got != tc.got {
			t.Errorf("OutsidePartition(%q, %q) = %q %v, want %q true", tc.arn, tc.partition, got, outside, tc.got)
		}
	}
	for _, tc := range []struct{ arn, partition string }{
		{"arn:aws:iam::123456789012:role/r", "aws"}, {"arn:aws-cn:iam::123456789012:role/r", "aws-cn"}, {"junk", "aws"}, {"arn:aws:iam::123456789012:role/r", ""},
	} {
		if _, outside := OutsidePartition(tc.arn, tc.partition); outside {
			t.Errorf("OutsidePartition(%q, %q): outside", tc.arn, tc.partition)
		}
	}
}

func TestOIDCIssuerRegion(t *testing.T) {
	for a, want := range map[string]string{
		"arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC":          "us-east-1",
		"arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/ABC":   "cn-north-1",
		"arn:aws-us-gov:iam::123456789012:oidc-provider/oidc.eks.us-gov-west-1.amazonaws.com/id/A": "us-gov-west-1",
		"arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com":              "",
		"junk": "",
	} {
		if got := OIDCIssuerRegion(a); got != want {
			t.Errorf("OIDCIssuerRegion(%q) = %q, want %q", a, got, want)
		}
	}
}
