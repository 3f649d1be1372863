package s3state

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func TestUnsafeRulesAndStrip(t *testing.T) {
	on := s3types.ExpirationStatusEnabled
	rules := []s3types.LifecycleRule{
		{ID: aws.String(AbortMultipartRuleID), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")},
			AbortIncompleteMultipartUpload: &s3types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)},
			Expiration:                     &s3types.LifecycleExpiration{Days: aws.Int32(7)}}, // added inside the provider's rule
		{ID: aws.String("parent-7d"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("flink/")},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)}},
		{ID: aws.String("logs"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)}},
		{ID: aws.String("glacier-inside"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("flink/app1/savepoints/")},
			Transitions: []s3types.Transition{{Days: aws.Int32(30), StorageClass: s3types.TransitionStorageClassGlacier}}},
		{ID: aws.String("sibling"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("flink/app10/")},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)}},
		{ID: aws.String("disabled"), Status: s3types.ExpirationStatusDisabled, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(1)}},
		{ID: aws.String("noncurrent"), Status: on, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")},
			NoncurrentVersionExpiration: &s3types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}},
	}
	got := UnsafeRules(rules, func(r s3types.LifecycleRule) bool { return PrefixReaches(RulePrefix(r), "flink/app1/") })
	want := []string{AbortMultipartRuleID, "parent-7d", "glacier-inside"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unsafe %v, want %v", got, want)
	}
	kept := WithoutCurrentExpiry(rules, got)
	if len(kept) != len(rules)-2 {
		t.Fatalf("kept %d rules, want the provider's rule (without its expiration) and the untouched ones", len(kept))
	}
	if aws.ToString(kept[0].ID) != AbortMultipartRuleID || kept[0].Expiration != nil || kept[0].AbortIncompleteMultipartUpload == nil {
		t.Fatalf("provider's rule %+v", kept[0])
	}
	if UnsafeRules(kept, func(s3types.LifecycleRule) bool { return true })[0] != "logs" {
		t.Fatal("rules not reaching the store were changed")
	}
}

func TestForeignStatements(t *testing.T) {
	own := TLSPolicy("aws", "b")
	if got := ForeignStatements(own); len(got) != 0 {
		t.Fatalf("own policy has foreign statements %v", got)
	}
	withForeign := `{"Version":"2012-10-17","Statement":[{"Sid":"DenyInsecureTransport","Effect":"Deny"},{"Sid":"CrossAccount","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"s3:*"},{"Effect":"Allow"}]}`
	if got := ForeignStatements(withForeign); !reflect.DeepEqual(got, []string{"CrossAccount", "#2"}) {
		t.Fatalf("foreign %v", got)
	}
}
