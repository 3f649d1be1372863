package awsclient

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// An unreadable web identity token file fails New, naming the block, the
// role and the file, even with skip_credentials_validation (the role is
// assumed on first use, before any other call).
func TestNewWebIdentityTokenFileMissing(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	missing := filepath.Join(t.TempDir(), "no-such-token")
	_, err := New(context.Background(), Config{
		Region:                    "eu-west-1",
		Endpoint:                  "http://127.0.0.1:1", // never reached: the file is read first
		SkipCredentialsValidation: true,
		AssumeRoleWithWebIdentity: &WebIdentity{RoleARN: "arn:aws:iam::123456789012:role/r", TokenFile: missing},
	})
	if err == nil {
		t.Fatal("New succeeded with a missing token file")
	}
	for _, want := range []string{"aws.assume_role_with_web_identity", "arn:aws:iam::123456789012:role/r", missing} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
