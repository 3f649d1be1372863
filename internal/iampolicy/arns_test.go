package iampolicy

import "testing"

func TestValidateAccountID(t *testing.T) {
	for s, ok := range map[string]bool{"123456789012": true, "000000000000": true, "1234": false, "12345678901a": false, "1234567890123": false} {
		if got := ValidateAccountID(s) == ""; got != ok {
			t.Errorf("ValidateAccountID(%q) accepted %v, want %v", s, got, ok)
		}
	}
}

// The ARN rules are aws/arn's parse plus the service's shape, in every
// partition.
func TestARNParts(t *testing.T) {
	for s, want := range map[string]string{
		"arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC":           "oidc.eks.eu-west-1.amazonaws.com/id/ABC",
		"arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/ABC":    "oidc.eks.cn-north-1.amazonaws.com.cn/id/ABC",
		"arn:aws-us-gov:iam::123456789012:oidc-provider/oidc.eks.us-gov-west-1.amazonaws.com/id/AB": "oidc.eks.us-gov-west-1.amazonaws.com/id/AB",
		"arn:aws:iam::123456789012:role/r":                   "",
		"arn:aws:iam::1234:oidc-provider/x":                  "",
		"arn:aws:iam:eu-west-1:123456789012:oidc-provider/x": "",
		"arn:aws:iam::123456789012:oidc-provider/":           "",
	} {
		got, ok := oidcIssuer(s)
		if ok != (want != "") || got != want {
			t.Errorf("oidcIssuer(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	for s, want := range map[string]string{
		"arn:aws:s3:::acme": "acme", "arn:aws-cn:s3:::acme": "acme", "arn:aws-us-gov:s3:::acme": "acme",
		"arn:aws:s3:::acme/flink/*": "", "arn:aws:s3:eu-west-1::acme": "", "arn:aws:iam:::acme": "", "acme": "",
	} {
		got, ok := bucketOfARN(s)
		if ok != (want != "") || got != want {
			t.Errorf("bucketOfARN(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
}
