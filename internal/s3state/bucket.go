// Package s3state holds the S3 knowledge of the provider without Terraform:
// what a bucket hardened for Flink state looks like (policy, lifecycle,
// encryption), bucket name rules, and emptying a bucket or a prefix safely.
package s3state

import (
	"encoding/json"
	"fmt"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// ValidateBucketName is the one bucket-name rule, store's.
func ValidateBucketName(name string) string { return store.ValidateBucketName(name) }

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
