package s3state

import (
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

func TestReplicationConfiguration_roundTrip(t *testing.T) {
	want := Replication{RoleARN: "arn:aws-us-gov:iam::123456789012:role/r", Destination: "dr", Prefixes: []string{"flink/b", "flink/a"}}
	c := ReplicationConfiguration("aws-us-gov", want)
	if len(c.Rules) != 2 || aws.ToString(c.Rules[0].Filter.Prefix) != "flink/b/" || aws.ToInt32(c.Rules[1].Priority) != 2 ||
		aws.ToString(c.Rules[0].Destination.Bucket) != "arn:aws-us-gov:s3:::dr" || c.Rules[0].DeleteMarkerReplication.Status != s3types.DeleteMarkerReplicationStatusDisabled {
		t.Fatalf("configuration %+v", c.Rules)
	}
	got := ParseReplication(c)
	if got.RoleARN != want.RoleARN || got.Destination != "dr" || !slices.Equal(got.Prefixes, want.Prefixes) || got.DeleteMarkers || len(got.Foreign) != 0 {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

// Drift: a disabled rule, a rule with a tag filter or another destination
// is foreign (and its prefix is not the provider's); delete markers turned
// on in any rule read as on.
func TestParseReplication_drift(t *testing.T) {
	c := ReplicationConfiguration("aws", Replication{RoleARN: "arn:aws:iam::1:role/r", Destination: "dr", Prefixes: []string{"a", "b", "c", "d"}})
	c.Rules[1].Status = s3types.ReplicationRuleStatusDisabled
	c.Rules[2].Destination.Bucket = aws.String("arn:aws:s3:::elsewhere")
	c.Rules[3].DeleteMarkerReplication.Status = s3types.DeleteMarkerReplicationStatusEnabled
	c.Rules = append(c.Rules, s3types.ReplicationRule{ID: aws.String("tags"), Status: s3types.ReplicationRuleStatusEnabled,
		Filter: &s3types.ReplicationRuleFilter{Tag: &s3types.Tag{Key: aws.String("k"), Value: aws.String("v")}}, Priority: aws.Int32(9),
		Destination: &s3types.Destination{Bucket: aws.String("arn:aws:s3:::dr")}})
	got := ParseReplication(c)
	if !slices.Equal(got.Prefixes, []string{"a", "d"}) || !got.DeleteMarkers ||
		!slices.Equal(got.Foreign, []string{"flinkstate:b", "flinkstate:c", "tags"}) {
		t.Errorf("read %+v", got)
	}
}

func TestReplicationPropagating_narrow(t *testing.T) {
	for err, want := range map[error]bool{
		&smithy.GenericAPIError{Code: "NoSuchBucket"}:                                                               true,
		&smithy.GenericAPIError{Code: "InvalidRequest", Message: "Versioning must be 'Enabled' on the bucket"}:      true,
		&smithy.GenericAPIError{Code: "InvalidRequest", Message: "Destination bucket must have versioning enabled"}: false,
		&smithy.GenericAPIError{Code: "AccessDenied"}:                                                               false,
		errors.New("timeout"): false,
	} {
		if got := replicationPropagating(err); got != want {
			t.Errorf("replicationPropagating(%v) = %v, want %v", err, got, want)
		}
	}
}
