package s3state

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// ReplicationAPI is the part of the S3 client a state bucket's replication
// uses.
type ReplicationAPI interface {
	GetBucketReplication(ctx context.Context, in *s3.GetBucketReplicationInput, opts ...func(*s3.Options)) (*s3.GetBucketReplicationOutput, error)
	PutBucketReplication(ctx context.Context, in *s3.PutBucketReplicationInput, opts ...func(*s3.Options)) (*s3.PutBucketReplicationOutput, error)
	DeleteBucketReplication(ctx context.Context, in *s3.DeleteBucketReplicationInput, opts ...func(*s3.Options)) (*s3.DeleteBucketReplicationOutput, error)
	GetBucketVersioning(ctx context.Context, in *s3.GetBucketVersioningInput, opts ...func(*s3.Options)) (*s3.GetBucketVersioningOutput, error)
	GetBucketLocation(ctx context.Context, in *s3.GetBucketLocationInput, opts ...func(*s3.Options)) (*s3.GetBucketLocationOutput, error)
}

// Replication is a state bucket's replication as the provider writes it:
// one rule per state prefix, to one destination bucket, with one role.
type Replication struct {
	RoleARN       string
	Destination   string // the destination bucket's name
	Prefixes      []string
	DeleteMarkers bool
	// Foreign names the rules that are not the provider's shape (another
	// destination, a tag filter, disabled, or a prefix not of the form
	// "<state prefix>/"): the next apply replaces them.
	Foreign []string
}

// ReplicationRuleID is the ID of a state prefix's rule.
func ReplicationRuleID(prefix string) string { return "flinkstate:" + prefix }

// ReplicationConfiguration is the configuration of r (S3 User Guide,
// "Replication configuration file elements"): for each prefix, in order, a
// V2 rule (a Filter on "<prefix>/", so app1 does not reach app10), Enabled,
// with DeleteMarkerReplication as asked (required with a Filter), the
// destination bucket's ARN in the partition, and a distinct priority.
func ReplicationConfiguration(partition string, r Replication) *s3types.ReplicationConfiguration {
	if partition == "" {
		partition = "aws"
	}
	dm := s3types.DeleteMarkerReplicationStatusDisabled
	if r.DeleteMarkers {
		dm = s3types.DeleteMarkerReplicationStatusEnabled
	}
	c := &s3types.ReplicationConfiguration{Role: aws.String(r.RoleARN)}
	for i, p := range r.Prefixes {
		c.Rules = append(c.Rules, s3types.ReplicationRule{
			ID:                      aws.String(ReplicationRuleID(p)),
			Priority:                aws.Int32(int32(i + 1)),
			Status:                  s3types.ReplicationRuleStatusEnabled,
			Filter:                  &s3types.ReplicationRuleFilter{Prefix: aws.String(iampolicy.ReplicationRulePrefix(p))},
			DeleteMarkerReplication: &s3types.DeleteMarkerReplication{Status: dm},
			Destination:             &s3types.Destination{Bucket: aws.String(fmt.Sprintf("arn:%s:s3:::%s", partition, r.Destination))},
		})
	}
	return c
}

// ParseReplication reads a configuration back: the prefixes of the enabled
// V2 rules on "<prefix>/" (in priority order), the destination of the first
// of them, delete-marker replication when any of them replicates delete
// markers (weaker than the provider's default, so it shows as drift), and
// the rules that are not of this shape.
func ParseReplication(c *s3types.ReplicationConfiguration) Replication {
	var r Replication
	if c == nil {
		return r
	}
	r.RoleARN = aws.ToString(c.Role)
	rules := append([]s3types.ReplicationRule(nil), c.Rules...)
	sort.SliceStable(rules, func(i, j int) bool { return aws.ToInt32(rules[i].Priority) < aws.ToInt32(rules[j].Priority) })
	for i, rule := range rules {
		name := aws.ToString(rule.ID)
		if name == "" {
			name = fmt.Sprintf("rule %d", i+1)
		}
		var prefix string
		ok := rule.Status == s3types.ReplicationRuleStatusEnabled && rule.Filter != nil && rule.Filter.Prefix != nil &&
			rule.Filter.Tag == nil && rule.Filter.And == nil && rule.Destination != nil
		if ok {
			prefix, ok = strings.CutSuffix(aws.ToString(rule.Filter.Prefix), "/")
			ok = ok && iampolicy.ValidateReplicationPrefix(prefix) == ""
		}
		dest := ""
		if ok {
			dest = bucketOfARN(aws.ToString(rule.Destination.Bucket))
			ok = dest != "" && (r.Destination == "" || dest == r.Destination)
		}
		if !ok {
			r.Foreign = append(r.Foreign, name)
			continue
		}
		r.Destination = dest
		r.Prefixes = append(r.Prefixes, prefix)
		if rule.DeleteMarkerReplication != nil && rule.DeleteMarkerReplication.Status == s3types.DeleteMarkerReplicationStatusEnabled {
			r.DeleteMarkers = true
		}
	}
	return r
}

// bucketOfARN is the bucket an S3 bucket ARN names, "" for anything else.
func bucketOfARN(s string) string {
	rest, ok := strings.CutPrefix(s, "arn:")
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, ":", 5)
	if len(parts) != 5 || parts[1] != "s3" || parts[2] != "" || parts[3] != "" || strings.Contains(parts[4], "/") {
		return ""
	}
	return parts[4]
}

// FindReplication reads a bucket's replication configuration; a
// *notfound.Error when it has none (S3 API Reference,
// GetBucketReplication: ReplicationConfigurationNotFoundError).
func FindReplication(ctx context.Context, c ReplicationAPI, bucket string) (*s3types.ReplicationConfiguration, error) {
	out, err := c.GetBucketReplication(ctx, &s3.GetBucketReplicationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return nil, notFoundOn("replication configuration of bucket "+bucket, err, "ReplicationConfigurationNotFoundError")
	}
	return out.ReplicationConfiguration, nil
}

// inRegion sends a call to a bucket's region: S3 refuses a request signed
// for another (S3 API Reference, "Error responses":
// AuthorizationHeaderMalformed, "the region ... is wrong").
func inRegion(region string) func(*s3.Options) {
	return func(o *s3.Options) {
		if region != "" {
			o.Region = region
		}
	}
}

// BucketRegion is a bucket's region by GetBucketLocation, which any region
// answers; us-east-1 is the empty constraint and "EU" the legacy eu-west-1
// (S3 API Reference, GetBucketLocation).
func BucketRegion(ctx context.Context, c ReplicationAPI, bucket string) (string, error) {
	out, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return "", awsclient.NotFound("bucket "+bucket, err)
	}
	switch out.LocationConstraint {
	case "":
		return "us-east-1", nil
	case "EU":
		return "eu-west-1", nil
	}
	return string(out.LocationConstraint), nil
}

// VersioningEnabled tells whether a bucket (in region; "" for the client's
// own) has versioning Enabled: S3 replication needs it on the source and
// on the destination (S3 User Guide, "Requirements and considerations for
// replication").
func VersioningEnabled(ctx context.Context, c ReplicationAPI, bucket, region string) (bool, error) {
	out, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)}, inRegion(region))
	if err != nil {
		return false, awsclient.NotFound("bucket "+bucket, err)
	}
	return out.Status == s3types.BucketVersioningStatusEnabled, nil
}

// replicationPropagating is what hashicorp/aws retries PutBucketReplication
// on, and nothing else (internal/service/s3/bucket_replication_configuration.go):
// a bucket created moments ago not seen yet (NoSuchBucket), or its
// versioning, just enabled, not seen yet (InvalidRequest "Versioning must
// be 'Enabled' on the bucket"). The caller has checked versioning itself
// before, so a retry only rides out that propagation. hashicorp/aws creates
// the role and the configuration in one apply and retries no role error
// here, so none is retried here either: S3 assumes the role when it
// replicates, not when the configuration is written (a role it cannot
// assume shows as the replication failure AssumeRoleNotPermitted, S3 User
// Guide, "Amazon S3 replication failure reasons").
func replicationPropagating(err error) bool {
	switch awsclient.ErrorCode(err) {
	case "NoSuchBucket":
		return true
	case "InvalidRequest":
		return strings.Contains(err.Error(), "Versioning must be 'Enabled' on the bucket")
	}
	return false
}

// PutReplication writes the configuration, riding out bucket propagation
// within timeout.
func PutReplication(ctx context.Context, c ReplicationAPI, bucket string, cfg *s3types.ReplicationConfiguration, timeout time.Duration) error {
	err := awsclient.Retry(ctx, timeout, replicationPropagating, func() error {
		_, err := c.PutBucketReplication(ctx, &s3.PutBucketReplicationInput{Bucket: aws.String(bucket), ReplicationConfiguration: cfg})
		return err
	})
	if err != nil {
		return fmt.Errorf("s3:PutBucketReplication %s: %w", bucket, err)
	}
	return nil
}

// DeleteReplication removes the configuration; none there, or no bucket,
// is fine. Objects are never touched.
func DeleteReplication(ctx context.Context, c ReplicationAPI, bucket string) error {
	_, err := c.DeleteBucketReplication(ctx, &s3.DeleteBucketReplicationInput{Bucket: aws.String(bucket)})
	if err = awsclient.NotFound("bucket "+bucket, err); err != nil && !notfound.Is(err) {
		return fmt.Errorf("s3:DeleteBucketReplication %s: %w", bucket, err)
	}
	return nil
}
