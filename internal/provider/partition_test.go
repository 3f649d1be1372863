package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The bucket's ARN carries the partition of the provider's region.
func TestBucketARNPartition(t *testing.T) {
	for partition, want := range map[string]string{
		"aws":        "arn:aws:s3:::b",
		"aws-cn":     "arn:aws-cn:s3:::b",
		"aws-us-gov": "arn:aws-us-gov:s3:::b",
	} {
		if got := bucketARN(partition, "b"); got != want {
			t.Errorf("bucketARN(%q) = %q, want %q", partition, got, want)
		}
	}
	t.Setenv("AWS_REGION", "")
	m := newMeta("test")
	_ = m.setAWS(t.Context(), &awsModel{Region: types.StringValue("cn-northwest-1")})
	if p, known := m.Partition(t.Context()); !known || p != "aws-cn" {
		t.Errorf("partition of cn-northwest-1: %q (known %v), want aws-cn", p, known)
	}
}
