package s3state

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateBucketName(t *testing.T) {
	ok := []string{"acme-flink-state", "abc", "a.b-c", strings.Repeat("a", 63)}
	for _, n := range ok {
		if msg := ValidateBucketName(n); msg != "" {
			t.Errorf("%q rejected: %s", n, msg)
		}
	}
	bad := map[string]string{
		"ab":                    "3 to 63",
		strings.Repeat("a", 64): "3 to 63",
		"Acme":                  "lowercase",
		"-acme":                 "begin and end",
		"acme_state":            "lowercase",
		"a..b":                  "adjacent periods",
		"10.0.0.1":              "IP address",
		"xn--acme":              "reserved prefixes",
		"acme-s3alias":          "reserved suffix",
	}
	for n, want := range bad {
		if msg := ValidateBucketName(n); !strings.Contains(msg, want) {
			t.Errorf("%q: got %q, want a message containing %q", n, msg, want)
		}
	}
}

func TestTLSPolicy(t *testing.T) {
	p := TLSPolicy("aws", "b")
	var doc struct {
		Statement []struct {
			Effect    string
			Resource  []string
			Condition map[string]map[string]string
		}
	}
	if err := json.Unmarshal([]byte(p), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Statement[0]
	if s.Effect != "Deny" || s.Condition["Bool"]["aws:SecureTransport"] != "false" ||
		len(s.Resource) != 2 || s.Resource[0] != "arn:aws:s3:::b" || s.Resource[1] != "arn:aws:s3:::b/*" {
		t.Fatalf("policy %s", p)
	}
	if !PolicyDeniesInsecureTransport(p) {
		t.Fatal("own policy not recognised")
	}
	if PolicyDeniesInsecureTransport(`{"Statement":[{"Sid":"Other","Effect":"Deny"}]}`) || PolicyDeniesInsecureTransport("not json") {
		t.Fatal("foreign policy recognised as the TLS policy")
	}
}

func TestLifecycleNeverExpiresCurrentObjects(t *testing.T) {
	for _, versioning := range []bool{false, true} {
		rules := Lifecycle(1, versioning, 30)
		if rules[0].ID != AbortMultipartRuleID || rules[0].AbortIncompleteMultipartDays != 1 {
			t.Fatalf("first rule %+v", rules[0])
		}
		want := 1
		if versioning {
			want = 2
		}
		if len(rules) != want {
			t.Fatalf("versioning=%v: %d rules, want %d", versioning, len(rules), want)
		}
	}
	if r := Lifecycle(1, true, 30)[1]; r.NoncurrentVersionDays != 30 {
		t.Fatalf("noncurrent rule %+v", r)
	}
}
