package s3state

import (
	"encoding/json"
	"fmt"
	"strings"

	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// RulePrefix is the key prefix a lifecycle rule applies to: the filter's
// prefix (alone or inside And), the deprecated top-level Prefix, or ""
// (every key) for a rule filtered by tags or size only, or not at all.
func RulePrefix(r s3types.LifecycleRule) string {
	if f := r.Filter; f != nil {
		if f.Prefix != nil {
			return *f.Prefix
		}
		if f.And != nil && f.And.Prefix != nil {
			return *f.And.Prefix
		}
		return ""
	}
	if p := r.Prefix; p != nil { //nolint:staticcheck // the deprecated field is still what older rules carry
		return *p
	}
	return ""
}

// ExpiresCurrent tells whether an enabled rule deletes or moves current
// object versions: Expiration by Days or Date, or any Transition (S3 User
// Guide, "Lifecycle configuration elements": Expiration and Transition act
// on current versions; the Noncurrent* actions and AbortIncompleteMultipartUpload
// do not). A shared checkpoint file is old and still needed, so either one
// breaks restores.
func ExpiresCurrent(r s3types.LifecycleRule) bool {
	if r.Status != s3types.ExpirationStatusEnabled {
		return false
	}
	if e := r.Expiration; e != nil && (e.Days != nil && *e.Days > 0 || e.Date != nil) {
		return true
	}
	return len(r.Transitions) > 0
}

// PrefixReaches tells whether a rule on rulePrefix reaches keys under the
// store key prefix storeKeyPrefix ("flink/app1/"): the rule's prefix is a
// parent of it (or "", the whole bucket), or lies inside it.
func PrefixReaches(rulePrefix, storeKeyPrefix string) bool {
	return strings.HasPrefix(storeKeyPrefix, rulePrefix) || strings.HasPrefix(rulePrefix, storeKeyPrefix)
}

// UnsafeRules names the rules that expire or transition current versions
// and for which reaches(rule) is true. A rule without ID is named by its
// position.
func UnsafeRules(rules []s3types.LifecycleRule, reaches func(s3types.LifecycleRule) bool) []string {
	var out []string
	for i, r := range rules {
		if ExpiresCurrent(r) && reaches(r) {
			out = append(out, ruleName(r, i))
		}
	}
	return out
}

func ruleName(r s3types.LifecycleRule, i int) string {
	if r.ID != nil && *r.ID != "" {
		return *r.ID
	}
	return fmt.Sprintf("#%d", i)
}

// WithoutCurrentExpiry returns the rules with the expiration of current
// versions and the transitions removed from the named rules; a rule left
// with no action is dropped. Everything else is kept as it is.
func WithoutCurrentExpiry(rules []s3types.LifecycleRule, names []string) []s3types.LifecycleRule {
	strip := map[string]bool{}
	for _, n := range names {
		strip[n] = true
	}
	var out []s3types.LifecycleRule
	for i, r := range rules {
		if strip[ruleName(r, i)] {
			if r.Expiration != nil && r.Expiration.ExpiredObjectDeleteMarker != nil && *r.Expiration.ExpiredObjectDeleteMarker {
				r.Expiration = &s3types.LifecycleExpiration{ExpiredObjectDeleteMarker: r.Expiration.ExpiredObjectDeleteMarker}
			} else {
				r.Expiration = nil
			}
			r.Transitions = nil
			if r.Expiration == nil && r.AbortIncompleteMultipartUpload == nil && r.NoncurrentVersionExpiration == nil &&
				len(r.NoncurrentVersionTransitions) == 0 {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// ForeignStatements names the statements of a bucket policy that the
// provider did not write (any Sid but DenyInsecureTransportSID, or none),
// in the way hashicorp/aws's *_exclusive resources treat what the
// configuration does not name: drift, removed on the next apply.
func ForeignStatements(policy string) []string {
	var doc struct {
		Statement json.RawMessage `json:"Statement"`
	}
	if json.Unmarshal([]byte(policy), &doc) != nil {
		return []string{"(unparseable policy)"}
	}
	type stmt struct {
		Sid string `json:"Sid"`
	}
	var many []stmt
	if json.Unmarshal(doc.Statement, &many) != nil {
		var one stmt
		if json.Unmarshal(doc.Statement, &one) != nil {
			return []string{"(unparseable policy)"}
		}
		many = []stmt{one}
	}
	var out []string
	for i, s := range many {
		switch s.Sid {
		case DenyInsecureTransportSID:
		case "":
			out = append(out, fmt.Sprintf("#%d", i))
		default:
			out = append(out, s.Sid)
		}
	}
	return out
}
