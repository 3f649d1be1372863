package awsclient

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The partition comes from the SDK's endpoint data for the region.
func TestPartition(t *testing.T) {
	for region, want := range map[string]string{
		"eu-west-1":      "aws",
		"us-east-1":      "aws",
		"cn-north-1":     "aws-cn",
		"cn-northwest-1": "aws-cn",
		"us-gov-west-1":  "aws-us-gov",
		"":               "aws",
	} {
		if got := Partition(region); got != want {
			t.Errorf("Partition(%q) = %q, want %q", region, got, want)
		}
	}
}

// Without max_retries/retry_mode the SDK's own defaults apply, and with
// them AWS_MAX_ATTEMPTS and AWS_RETRY_MODE; the block wins when set.
func TestRetrySettings(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_MAX_ATTEMPTS", "")
	t.Setenv("AWS_RETRY_MODE", "")
	cfg, err := Config{}.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := s3.NewFromConfig(cfg).Options().Retryer.MaxAttempts(); n != 3 {
		t.Errorf("default max attempts = %d, want the SDK's 3", n)
	}

	t.Setenv("AWS_MAX_ATTEMPTS", "11")
	t.Setenv("AWS_RETRY_MODE", "adaptive")
	cfg, err = Config{}.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := s3.NewFromConfig(cfg).Options().Retryer.MaxAttempts(); n != 11 {
		t.Errorf("with AWS_MAX_ATTEMPTS=11: max attempts = %d, want 11", n)
	}
	if cfg.RetryMode != "adaptive" {
		t.Errorf("with AWS_RETRY_MODE=adaptive: mode = %q", cfg.RetryMode)
	}

	cfg, err = Config{MaxRetries: 4, RetryMode: "standard"}.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := s3.NewFromConfig(cfg).Options().Retryer.MaxAttempts(); n != 4 {
		t.Errorf("max_retries = 4: max attempts = %d, want 4", n)
	}
	if cfg.RetryMode != "standard" {
		t.Errorf("retry_mode = standard: mode = %q", cfg.RetryMode)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{AssumeRole: &AssumeRole{RoleARN: "a"}, AssumeRoleWithWebIdentity: &WebIdentity{RoleARN: "b"}}, "aws.assume_role and aws.assume_role_with_web_identity"},
		{Config{RetryMode: "legacy"}, `aws.retry_mode "legacy"`},
		{Config{AllowedAccountIDs: []string{"1"}, ForbiddenAccountIDs: []string{"2"}}, "aws.allowed_account_ids and aws.forbidden_account_ids"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tc.c, err, tc.want)
		}
	}
	if err := (Config{RetryMode: "adaptive"}).Validate(); err != nil {
		t.Errorf("retry_mode adaptive: %v", err)
	}
}

func TestCheckAccount(t *testing.T) {
	if err := (Config{AllowedAccountIDs: []string{"111111111111"}}).checkAccount("222222222222"); err == nil ||
		!strings.Contains(err.Error(), "aws.allowed_account_ids") {
		t.Errorf("account not allowed: %v", err)
	}
	if err := (Config{ForbiddenAccountIDs: []string{"222222222222"}}).checkAccount("222222222222"); err == nil ||
		!strings.Contains(err.Error(), "aws.forbidden_account_ids") {
		t.Errorf("account forbidden: %v", err)
	}
	if err := (Config{AllowedAccountIDs: []string{"222222222222"}, ForbiddenAccountIDs: nil}).checkAccount("222222222222"); err != nil {
		t.Errorf("allowed account: %v", err)
	}
}

// shared_config_files / shared_credentials_files replace the default files:
// the profile's region (and so the partition) and keys come from them.
func TestSharedFiles(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	creds := filepath.Join(dir, "credentials")
	if err := os.WriteFile(conf, []byte("[profile china]\nregion = cn-north-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, []byte("[china]\naws_access_key_id = AKIDFROMFILE\naws_secret_access_key = s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	c := Config{Profile: "china", SharedConfigFiles: []string{conf}, SharedCredentialsFiles: []string{creds}}
	cfg, err := c.load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "cn-north-1" || Partition(cfg.Region) != "aws-cn" {
		t.Fatalf("region %q partition %q, want cn-north-1 in aws-cn", cfg.Region, Partition(cfg.Region))
	}
	got, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || got.AccessKeyID != "AKIDFROMFILE" {
		t.Fatalf("credentials from the shared credentials file: %v %v", got.AccessKeyID, err)
	}
}

// endpoints.<service> wins over endpoint for its service only.
func TestEndpoints(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ENDPOINT_URL", "")
	cl, err := New(context.Background(), Config{
		Endpoint:                  "http://all.example:4566",
		Endpoints:                 map[string]string{"s3": "http://s3.example:9000", "kms": "http://kms.example"},
		SkipCredentialsValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*string{
		"s3": cl.S3.Options().BaseEndpoint, "kms": cl.KMS.Options().BaseEndpoint,
		"iam": cl.IAM.Options().BaseEndpoint, "sts": cl.STS.Options().BaseEndpoint, "eks": cl.EKS.Options().BaseEndpoint,
	} {
		want := map[string]string{"s3": "http://s3.example:9000", "kms": "http://kms.example"}[name]
		if want == "" {
			want = "http://all.example:4566"
		}
		if got == nil || *got != want {
			t.Errorf("%s endpoint %v, want %s", name, got, want)
		}
	}
}
