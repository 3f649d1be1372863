// Package s3state holds the S3 knowledge of the provider without Terraform:
// what a bucket hardened for Flink state looks like (policy, lifecycle,
// encryption), bucket name rules, and emptying a bucket or a prefix safely.
package s3state

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
)

var bucketNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ValidateBucketName applies S3's general purpose bucket naming rules and
// returns a sentence saying what is wrong, or "".
func ValidateBucketName(name string) string {
	switch {
	case len(name) < 3 || len(name) > 63:
		return fmt.Sprintf("must be 3 to 63 characters long, got %d", len(name))
	case !bucketNameRE.MatchString(name):
		return "may contain only lowercase letters, digits, dots and hyphens, and must begin and end with a letter or digit"
	case strings.Contains(name, ".."):
		return "must not contain two adjacent periods"
	case net.ParseIP(name) != nil:
		return "must not be formatted as an IP address"
	case strings.HasPrefix(name, "xn--"), strings.HasPrefix(name, "sthree-"), strings.HasPrefix(name, "amzn-s3-demo-"):
		return "must not start with the reserved prefixes xn--, sthree- or amzn-s3-demo-"
	case strings.HasSuffix(name, "-s3alias"), strings.HasSuffix(name, "--ol-s3"), strings.HasSuffix(name, ".mrap"), strings.HasSuffix(name, "--x-s3"), strings.HasSuffix(name, "--table-s3"):
		return "must not end with a reserved suffix (-s3alias, --ol-s3, .mrap, --x-s3, --table-s3)"
	}
	return ""
}

// DenyInsecureTransportSID is the statement ID the provider owns in a bucket policy.
const DenyInsecureTransportSID = "DenyInsecureTransport"

// TLSPolicy is the bucket policy denying every request not made over TLS.
func TLSPolicy(partition, bucket string) string {
	arn := fmt.Sprintf("arn:%s:s3:::%s", partition, bucket)
	doc := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid":       DenyInsecureTransportSID,
			"Effect":    "Deny",
			"Principal": "*",
			"Action":    "s3:*",
			"Resource":  []string{arn, arn + "/*"},
			"Condition": map[string]any{"Bool": map[string]string{"aws:SecureTransport": "false"}},
		}},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

// PolicyDeniesInsecureTransport tells whether a bucket policy holds the
// provider's deny-non-TLS statement.
func PolicyDeniesInsecureTransport(policy string) bool {
	var doc struct {
		Statement []struct {
			Sid    string `json:"Sid"`
			Effect string `json:"Effect"`
		} `json:"Statement"`
	}
	if json.Unmarshal([]byte(policy), &doc) != nil {
		return false
	}
	for _, s := range doc.Statement {
		if s.Sid == DenyInsecureTransportSID && s.Effect == "Deny" {
			return true
		}
	}
	return false
}

// Lifecycle rule IDs the provider owns.
const (
	AbortMultipartRuleID     = "flinkstate-abort-incomplete-multipart"
	NoncurrentVersionsRuleID = "flinkstate-expire-noncurrent-versions"
)

// LifecycleRule is a provider-neutral lifecycle rule. There is deliberately
// no way to express an expiration of current objects: incremental
// checkpoints share files across checkpoints, and an age-based expiration
// deletes files that live checkpoints still reference.
type LifecycleRule struct {
	ID                           string
	AbortIncompleteMultipartDays int32
	NoncurrentVersionDays        int32
}

// Lifecycle returns the rules of a state bucket.
func Lifecycle(abortDays int32, versioning bool, noncurrentDays int32) []LifecycleRule {
	rules := []LifecycleRule{{ID: AbortMultipartRuleID, AbortIncompleteMultipartDays: abortDays}}
	if versioning && noncurrentDays > 0 {
		rules = append(rules, LifecycleRule{ID: NoncurrentVersionsRuleID, NoncurrentVersionDays: noncurrentDays})
	}
	return rules
}
