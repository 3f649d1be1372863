package iampolicy

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws/arn"
)

// The AWS naming rules the provider checks at plan time, each declared once.

// roleNameRE: IAM role names are 1-64 characters of letters, digits and
// +=,.@_- (IAM API reference, CreateRole, RoleName).
var roleNameRE = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)

// ValidateRoleName returns what is wrong with an IAM role name, or "".
func ValidateRoleName(s string) string {
	if !roleNameRE.MatchString(s) {
		return "must be 1 to 64 letters, digits and +=,.@_- (IAM CreateRole, RoleName)"
	}
	return ""
}

// rolePathNameRE is what follows "role/" in a role ARN: an optional path
// and the name (IAM identifiers: path up to 512 characters).
var rolePathNameRE = regexp.MustCompile(`^role/([\x21-\x7e]{0,510}/)?[\w+=,.@-]{1,64}$`)

// ValidateRoleARN returns what is wrong with an IAM role ARN, or "".
func ValidateRoleARN(s string) string {
	a, err := arn.Parse(s)
	if err != nil || a.Service != "iam" || a.Region != "" || !accountRE.MatchString(a.AccountID) || !rolePathNameRE.MatchString(a.Resource) || !partitionRE.MatchString(a.Partition) {
		return "must be an IAM role ARN (arn:PARTITION:iam::ACCOUNT:role/NAME)"
	}
	return ""
}

// ValidateAccountID returns what is wrong with an AWS account ID, or "": it
// is 12 digits (AWS Account Management Reference Guide, "View AWS account
// identifiers").
func ValidateAccountID(s string) string {
	if !accountRE.MatchString(s) {
		return "must be a 12-digit AWS account ID"
	}
	return ""
}

// oidcIssuer returns the issuer an IAM OIDC provider ARN names
// (arn:PARTITION:iam::ACCOUNT:oidc-provider/ISSUER; IAM User Guide, "IAM
// identifiers", OIDC providers).
func oidcIssuer(s string) (string, bool) {
	a, err := arn.Parse(s)
	if err != nil || a.Service != "iam" || a.Region != "" || !accountRE.MatchString(a.AccountID) || !partitionRE.MatchString(a.Partition) {
		return "", false
	}
	issuer, ok := strings.CutPrefix(a.Resource, "oidc-provider/")
	if !ok || issuer == "" {
		return "", false
	}
	return issuer, true
}

// bucketOfARN returns the bucket an S3 bucket ARN names
// (arn:PARTITION:s3:::BUCKET: no region, no account; S3 User Guide, "Policy
// resources for Amazon S3").
func bucketOfARN(s string) (string, bool) {
	a, err := arn.Parse(s)
	if err != nil || a.Service != "s3" || a.Region != "" || a.AccountID != "" || !partitionRE.MatchString(a.Partition) ||
		a.Resource == "" || strings.Contains(a.Resource, "/") {
		return "", false
	}
	return a.Resource, true
}

var (
	accountRE   = regexp.MustCompile(`^\d{12}$`)
	partitionRE = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	regionRE    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)
)

// KMSKey is a parsed KMS key or alias ARN.
type KMSKey struct {
	Partition, Region, Account string
	Alias                      bool
}

// ParseKMSARN parses arn:PARTITION:kms:REGION:ACCOUNT:key/ID or
// .../alias/NAME (KMS developer guide, "Key identifiers (KeyId)").
func ParseKMSARN(s string) (KMSKey, error) {
	a, err := arn.Parse(s)
	if err == nil && a.Service == "kms" && regionRE.MatchString(a.Region) && accountRE.MatchString(a.AccountID) && partitionRE.MatchString(a.Partition) {
		kind, id, _ := strings.Cut(a.Resource, "/")
		if id != "" && (kind == "key" || kind == "alias") {
			return KMSKey{Partition: a.Partition, Region: a.Region, Account: a.AccountID, Alias: kind == "alias"}, nil
		}
	}
	return KMSKey{}, fmt.Errorf("must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID)")
}

// ValidateKMSKeyARN accepts key ARNs only: an IAM policy grants kms:Decrypt
// and kms:GenerateDataKey on the key's ARN; a statement on an alias ARN
// does not reach the key (KMS developer guide, "Using aliases to control
// access to KMS keys").
func ValidateKMSKeyARN(s string) string {
	k, err := ParseKMSARN(s)
	switch {
	case err != nil:
		return err.Error()
	case k.Alias:
		return "is an alias ARN: IAM permissions on an alias do not reach the key; give the key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID)"
	}
	return ""
}

// ValidateKMSKeyOrAliasARN accepts a key or an alias ARN, as S3 default
// encryption does (S3 PutBucketEncryption, KMSMasterKeyID).
func ValidateKMSKeyOrAliasARN(s string) string {
	if _, err := ParseKMSARN(s); err != nil {
		return "must be a KMS key or alias ARN (arn:aws:kms:REGION:ACCOUNT:key/ID or alias/NAME)"
	}
	return ""
}

// eksClusterNameRE: 1-100 characters, alphanumerics, hyphens and
// underscores, starting with an alphanumeric (EKS API reference,
// CreateCluster, name).
var eksClusterNameRE = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)

// ValidateEKSClusterName returns what is wrong with an EKS cluster name, or "".
func ValidateEKSClusterName(s string) string {
	if !eksClusterNameRE.MatchString(s) {
		return "must be 1 to 100 letters, digits, hyphens and underscores, starting with a letter or digit (EKS CreateCluster)"
	}
	return ""
}

// Tag rules shared by IAM and S3: keys of 1-128 and values of 0-256
// Unicode characters, letters, digits, white space and _.:/=+-@, and the
// aws: prefix reserved for AWS (IAM User Guide, "Tagging IAM resources",
// tag naming rules; S3 User Guide, "Categorizing your storage using tags").
func validTagChars(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsSpace(r) && !strings.ContainsRune("_.:/=+-@", r) {
			return false
		}
	}
	return true
}

// ValidateTagKey returns what is wrong with an IAM or S3 tag key, or "".
func ValidateTagKey(k string) string {
	switch n := utf8.RuneCountInString(k); {
	case n < 1 || n > 128:
		return fmt.Sprintf("must be 1 to 128 characters long, got %d", n)
	case strings.HasPrefix(strings.ToLower(k), "aws:"):
		return "uses the prefix aws:, which AWS reserves for its own tags: choose another key"
	case !validTagChars(k):
		return "may contain only letters, digits, spaces and _.:/=+-@"
	}
	return ""
}

// ValidateTagValue returns what is wrong with an IAM or S3 tag value, or "".
func ValidateTagValue(v string) string {
	switch n := utf8.RuneCountInString(v); {
	case n > 256:
		return fmt.Sprintf("must be at most 256 characters long, got %d", n)
	case !validTagChars(v):
		return "may contain only letters, digits, spaces and _.:/=+-@"
	}
	return ""
}
