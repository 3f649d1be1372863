package testbed

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

// replBed is a source bucket in the test bed's region and a destination
// bucket in the second region, both versioned unless asked otherwise.
type replBed struct {
	ctx      context.Context
	a, b     *s3.Client // clients signing for region A and region B
	src, dst string
	ctl      *awsfront.ReplicationControl
}

func newReplBed(t *testing.T, versionSrc, versionDst bool) *replBed {
	t.Helper()
	env, _ := testbedEnv(t)
	ctx := context.Background()
	ca, err := newEnvAWS(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := newRegionAWS(ctx, env, SecondRegion)
	if err != nil {
		t.Fatal(err)
	}
	rb := &replBed{ctx: ctx, a: ca.S3, b: cb.S3, src: "repl-src-" + randomHex(4), dst: "repl-dst-" + randomHex(4), ctl: env.ReplicationControl()}
	if _, err := rb.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(rb.src)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(rb.dst),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(SecondRegion)}}); err != nil {
		t.Fatal(err)
	}
	version := func(c *s3.Client, b string) {
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(b),
			VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
	}
	if versionSrc {
		version(rb.a, rb.src)
	}
	if versionDst {
		version(rb.b, rb.dst)
	}
	if err := rb.ctl.SetLag(ctx, awsfront.DefaultReplicationLag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rb.ctl.Release(ctx)
		_ = rb.ctl.Resume(ctx)
		_ = rb.ctl.SetLag(ctx, awsfront.DefaultReplicationLag)
		_, _ = rb.a.DeleteBucketReplication(ctx, &s3.DeleteBucketReplicationInput{Bucket: aws.String(rb.src)})
	})
	return rb
}

// newRegionAWS is newEnvAWS with clients signing for region.
func newRegionAWS(ctx context.Context, env Env, region string) (*awsclient.Clients, error) {
	if _, err := newEnvAWS(ctx, env); err != nil {
		return nil, err
	}
	return awsclient.New(ctx, awsclient.Config{Region: region, Endpoint: env.AWSEndpoint})
}

func (rb *replBed) rule(prefix string, deleteMarkers bool) error {
	dm := s3types.DeleteMarkerReplicationStatusDisabled
	if deleteMarkers {
		dm = s3types.DeleteMarkerReplicationStatusEnabled
	}
	_, err := rb.a.PutBucketReplication(rb.ctx, &s3.PutBucketReplicationInput{Bucket: aws.String(rb.src),
		ReplicationConfiguration: &s3types.ReplicationConfiguration{
			Role: aws.String("arn:aws:iam::123456789012:role/flink-state-replication"),
			Rules: []s3types.ReplicationRule{{
				ID: aws.String("state"), Priority: aws.Int32(1), Status: s3types.ReplicationRuleStatusEnabled,
				Filter:                  &s3types.ReplicationRuleFilter{Prefix: aws.String(prefix)},
				DeleteMarkerReplication: &s3types.DeleteMarkerReplication{Status: dm},
				Destination:             &s3types.Destination{Bucket: aws.String("arn:aws:s3:::" + rb.dst)},
			}},
		}})
	return err
}

func (rb *replBed) put(t *testing.T, key, body string) {
	t.Helper()
	if _, err := rb.a.PutObject(rb.ctx, &s3.PutObjectInput{Bucket: aws.String(rb.src), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

// replica reads key in the destination ("" and false when absent).
func (rb *replBed) replica(t *testing.T, key string) (string, bool) {
	t.Helper()
	out, err := rb.b.GetObject(rb.ctx, &s3.GetObjectInput{Bucket: aws.String(rb.dst), Key: aws.String(key)})
	if err != nil {
		var nsk *s3types.NoSuchKey
		var api smithy.APIError
		if errors.As(err, &nsk) || (errors.As(err, &api) && api.ErrorCode() == "NotFound") {
			return "", false
		}
		t.Fatalf("GetObject %s/%s: %v", rb.dst, key, err)
	}
	defer out.Body.Close()
	b, _ := io.ReadAll(out.Body)
	return string(b), true
}

func (rb *replBed) idle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(rb.ctx, 20*time.Second)
	defer cancel()
	if err := rb.ctl.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}

func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// Only objects written after the rule replicate, and only under its
// prefix; a replica arrives after the lag, not before.
func TestAWSFront_replicationAfterRuleUnderPrefix(t *testing.T) {
	rb := newReplBed(t, true, true)
	rb.put(t, "flink/orders/before", "old")
	if err := rb.rule("flink/orders/", false); err != nil {
		t.Fatal(err)
	}
	if err := rb.ctl.SetLag(rb.ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	rb.put(t, "flink/orders/after", "new")
	rb.put(t, "flink/other/after", "elsewhere")
	if _, ok := rb.replica(t, "flink/orders/after"); ok {
		t.Fatal("the replica arrived before the lag of 2s")
	}
	rb.idle(t)
	if got, ok := rb.replica(t, "flink/orders/after"); !ok || got != "new" {
		t.Errorf("replica of flink/orders/after = %q, %v; want new", got, ok)
	}
	if _, ok := rb.replica(t, "flink/orders/before"); ok {
		t.Error("an object written before the rule replicated")
	}
	if _, ok := rb.replica(t, "flink/other/after"); ok {
		t.Error("an object outside the rule's prefix replicated")
	}
}

// PutBucketReplication needs versioning on the source and the destination.
func TestAWSFront_replicationNeedsVersioning(t *testing.T) {
	rb := newReplBed(t, false, true)
	if err := rb.rule("a/", false); apiCode(err) != "InvalidRequest" || !strings.Contains(err.Error(), "Versioning must be 'Enabled'") {
		t.Errorf("unversioned source: %v, want InvalidRequest about versioning", err)
	}
	rb2 := newReplBed(t, true, false)
	if err := rb2.rule("a/", false); apiCode(err) != "InvalidRequest" || !strings.Contains(err.Error(), "must have versioning enabled") {
		t.Errorf("unversioned destination: %v, want InvalidRequest about the destination's versioning", err)
	}
	if _, err := rb2.a.GetBucketReplication(rb2.ctx, &s3.GetBucketReplicationInput{Bucket: aws.String(rb2.src)}); apiCode(err) != "ReplicationConfigurationNotFoundError" {
		t.Errorf("after the refusal GetBucketReplication: %v, want ReplicationConfigurationNotFoundError", err)
	}
}

// Deletes are not replicated by default; with DeleteMarkerReplication
// Enabled the delete marker is; a DELETE of a version never is.
func TestAWSFront_replicationDeletes(t *testing.T) {
	rb := newReplBed(t, true, true)
	if err := rb.rule("p/", false); err != nil {
		t.Fatal(err)
	}
	rb.put(t, "p/kept", "x")
	rb.idle(t)
	if _, err := rb.a.DeleteObject(rb.ctx, &s3.DeleteObjectInput{Bucket: aws.String(rb.src), Key: aws.String("p/kept")}); err != nil {
		t.Fatal(err)
	}
	rb.idle(t)
	if _, ok := rb.replica(t, "p/kept"); !ok {
		t.Fatal("a delete marker replicated without DeleteMarkerReplication")
	}
	if err := rb.rule("p/", true); err != nil {
		t.Fatal(err)
	}
	rb.put(t, "p/gone", "y")
	put, err := rb.a.PutObject(rb.ctx, &s3.PutObjectInput{Bucket: aws.String(rb.src), Key: aws.String("p/version"), Body: strings.NewReader("z")})
	if err != nil || aws.ToString(put.VersionId) == "" {
		t.Fatalf("PutObject p/version: version %q, %v", aws.ToString(put.VersionId), err)
	}
	rb.idle(t)
	if _, err := rb.a.DeleteObjects(rb.ctx, &s3.DeleteObjectsInput{Bucket: aws.String(rb.src),
		Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{{Key: aws.String("p/gone")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.a.DeleteObject(rb.ctx, &s3.DeleteObjectInput{Bucket: aws.String(rb.src), Key: aws.String("p/version"), VersionId: put.VersionId}); err != nil {
		t.Fatal(err)
	}
	rb.idle(t)
	if _, ok := rb.replica(t, "p/gone"); ok {
		t.Error("the delete marker did not replicate with DeleteMarkerReplication Enabled")
	}
	if _, ok := rb.replica(t, "p/version"); !ok {
		t.Error("a DELETE of a version replicated")
	}
}

// A hold keeps matching keys from arriving, Pending names them, and
// Release lets them arrive; Pause stops all copying until Resume.
func TestAWSFront_replicationHoldAndPause(t *testing.T) {
	rb := newReplBed(t, true, true)
	if err := rb.rule("chk/", false); err != nil {
		t.Fatal(err)
	}
	if err := rb.ctl.Hold(rb.ctx, `^chk/.*/shared/`); err != nil {
		t.Fatal(err)
	}
	rb.put(t, "chk/1/_metadata", "m")
	rb.put(t, "chk/1/shared/f1", "f")
	rb.idle(t)
	if _, ok := rb.replica(t, "chk/1/_metadata"); !ok {
		t.Error("the unheld _metadata did not arrive")
	}
	if _, ok := rb.replica(t, "chk/1/shared/f1"); ok {
		t.Error("a held key arrived")
	}
	pending, err := rb.ctl.Pending(rb.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var named bool
	for _, p := range pending {
		if p.Bucket == rb.src && p.Key == "chk/1/shared/f1" && p.Destination == rb.dst && p.Held {
			named = true
		}
	}
	if !named {
		t.Errorf("Pending = %+v, want the held chk/1/shared/f1", pending)
	}
	if err := rb.ctl.Release(rb.ctx); err != nil {
		t.Fatal(err)
	}
	rb.idle(t)
	if _, ok := rb.replica(t, "chk/1/shared/f1"); !ok {
		t.Error("the released key did not arrive")
	}
	if err := rb.ctl.Pause(rb.ctx); err != nil {
		t.Fatal(err)
	}
	rb.put(t, "chk/2/_metadata", "m2")
	time.Sleep(3 * awsfront.DefaultReplicationLag)
	if _, ok := rb.replica(t, "chk/2/_metadata"); ok {
		t.Error("an object arrived while replication was paused")
	}
	if err := rb.ctl.Resume(rb.ctx); err != nil {
		t.Fatal(err)
	}
	rb.idle(t)
	if _, ok := rb.replica(t, "chk/2/_metadata"); !ok {
		t.Error("the object did not arrive after Resume")
	}
}

// A bucket keeps the region it was created in: GetBucketLocation says so,
// and a request signed for another region is refused as S3 refuses it.
func TestAWSFront_secondRegion(t *testing.T) {
	rb := newReplBed(t, false, false)
	loc, err := rb.a.GetBucketLocation(rb.ctx, &s3.GetBucketLocationInput{Bucket: aws.String(rb.dst)})
	if err != nil || string(loc.LocationConstraint) != SecondRegion {
		t.Errorf("GetBucketLocation(%s) = %v, %v; want %s", rb.dst, loc, err, SecondRegion)
	}
	loc, err = rb.b.GetBucketLocation(rb.ctx, &s3.GetBucketLocationInput{Bucket: aws.String(rb.src)})
	if err != nil || loc.LocationConstraint != "" {
		t.Errorf("GetBucketLocation(%s) = %v, %v; want the empty us-east-1 constraint", rb.src, loc, err)
	}
	_, err = rb.a.PutObject(rb.ctx, &s3.PutObjectInput{Bucket: aws.String(rb.dst), Key: aws.String("k"), Body: strings.NewReader("")})
	if apiCode(err) != "AuthorizationHeaderMalformed" || !strings.Contains(err.Error(), "expecting '"+SecondRegion+"'") {
		t.Errorf("PutObject to a %s bucket signed for us-east-1: %v, want AuthorizationHeaderMalformed", SecondRegion, err)
	}
	_, err = rb.a.CreateBucket(rb.ctx, &s3.CreateBucketInput{Bucket: aws.String("repl-bad-" + randomHex(4)),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(SecondRegion)}})
	if apiCode(err) != "IllegalLocationConstraintException" {
		t.Errorf("CreateBucket in %s sent to us-east-1: %v, want IllegalLocationConstraintException", SecondRegion, err)
	}
}

// Real Flink runs "in region B": with FlinkJob.Region it reaches a
// us-west-2 bucket at that region's endpoint, its requests signed for that
// region (the front refuses any other), and completes checkpoints there.
func TestRealFlink_secondRegionCheckpoints(t *testing.T) {
	ctx := context.Background()
	env, dist := realFlink(t)
	cb, err := newRegionAWS(ctx, env, SecondRegion)
	if err != nil {
		t.Fatal(err)
	}
	b := &realBed{env: env, dist: dist, bucket: "realflink-west-" + randomHex(4)}
	if _, err := cb.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b.bucket),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(SecondRegion)}}); err != nil {
		t.Fatal(err)
	}
	conf, dir := realFlinkConf(t, b.bucket, "irsa")
	job := b.irsaJob(t, conf, "arn:aws:iam::000000000000:role/realflink-west-"+randomHex(3))
	job.Region = SecondRegion
	c, jobID := b.run(t, job)
	if got := c.Configuration["s3.endpoint"]; got != "https://s3."+SecondRegion+".amazonaws.com" {
		t.Errorf("s3.endpoint = %q, want the %s endpoint", got, SecondRegion)
	}
	chk, err := c.WaitCheckpoints(ctx, jobID, 1, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + "/" + jobID + "/chk-"; !strings.HasPrefix(chk, want) {
		t.Fatalf("checkpoint path %s, want under %s", chk, want)
	}
	c.Stop()
	reqs, err := ReadS3Requests(env.S3RequestLog)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range reqs {
		if r.Bucket == b.bucket && r.AccessKey != env.AccessKey {
			n++
			if r.Status == 400 {
				t.Errorf("Flink's %s %s/%s was refused (signed for another region?)", r.Method, r.Bucket, r.Key)
			}
		}
	}
	if n == 0 {
		t.Fatal("the request log has no S3 request of Flink's in the second region")
	}
}

// A replica is not replicated again: with a rule from the destination to a
// third bucket, an object replicated into the destination stays there,
// while an object written to the destination itself goes on.
func TestAWSFront_replicasAreNotReplicatedAgain(t *testing.T) {
	rb := newReplBed(t, true, true)
	third := "repl-third-" + randomHex(4)
	if _, err := rb.b.CreateBucket(rb.ctx, &s3.CreateBucketInput{Bucket: aws.String(third),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(SecondRegion)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.b.PutBucketVersioning(rb.ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(third),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if err := rb.rule("p/", false); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.b.PutBucketReplication(rb.ctx, &s3.PutBucketReplicationInput{Bucket: aws.String(rb.dst),
		ReplicationConfiguration: &s3types.ReplicationConfiguration{
			Role: aws.String("arn:aws:iam::123456789012:role/r"),
			Rules: []s3types.ReplicationRule{{ID: aws.String("onward"), Priority: aws.Int32(1), Status: s3types.ReplicationRuleStatusEnabled,
				Filter:                  &s3types.ReplicationRuleFilter{Prefix: aws.String("p/")},
				DeleteMarkerReplication: &s3types.DeleteMarkerReplication{Status: s3types.DeleteMarkerReplicationStatusDisabled},
				Destination:             &s3types.Destination{Bucket: aws.String("arn:aws:s3:::" + third)}}},
		}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = rb.b.DeleteBucketReplication(rb.ctx, &s3.DeleteBucketReplicationInput{Bucket: aws.String(rb.dst)})
	})
	rb.put(t, "p/from-source", "a")
	if _, err := rb.b.PutObject(rb.ctx, &s3.PutObjectInput{Bucket: aws.String(rb.dst), Key: aws.String("p/written-in-destination"), Body: strings.NewReader("b")}); err != nil {
		t.Fatal(err)
	}
	rb.idle(t)
	if _, ok := rb.replica(t, "p/from-source"); !ok {
		t.Fatal("the object did not reach the destination")
	}
	inThird := func(key string) bool {
		_, err := rb.b.HeadObject(rb.ctx, &s3.HeadObjectInput{Bucket: aws.String(third), Key: aws.String(key)})
		return err == nil
	}
	if inThird("p/from-source") {
		t.Error("a replica was replicated again")
	}
	if !inThird("p/written-in-destination") {
		t.Error("an object written to the destination did not go on to the third bucket")
	}
}

// What real Flink writes in region A (S3A's multipart uploads of
// _metadata, its directory markers, shared RocksDB files) replicates to a
// bucket in region B: once replication is idle, every object under the
// replicated prefix is in the replica with its size.
func TestRealFlink_checkpointsReplicateToSecondRegion(t *testing.T) {
	ctx := context.Background()
	env, dist := realFlink(t)
	rb := newReplBed(t, true, true)
	if err := rb.rule("flink/counts/", false); err != nil {
		t.Fatal(err)
	}
	b := &realBed{env: env, dist: dist, bucket: rb.src}
	conf, _ := realFlinkConf(t, b.bucket, "irsa")
	c, jobID := b.run(t, b.irsaJob(t, conf, "arn:aws:iam::000000000000:role/realflink-repl-"+randomHex(3)))
	if _, err := c.WaitCheckpoints(ctx, jobID, 2, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	rb.idle(t)
	sizes := func(cl *s3.Client, bucket string) map[string]int64 {
		out := map[string]int64{}
		p := s3.NewListObjectsV2Paginator(cl, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("flink/counts/")})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.Contents {
				out[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
			}
		}
		return out
	}
	src, dst := sizes(rb.a, rb.src), sizes(rb.b, rb.dst)
	var metadata int
	for k, n := range src {
		if strings.HasSuffix(k, "/_metadata") {
			metadata++
		}
		if m, ok := dst[k]; !ok || m != n {
			t.Errorf("%s (%d bytes) in the replica: %d bytes, present %v", k, n, m, ok)
		}
	}
	if metadata == 0 {
		t.Fatalf("no _metadata under flink/counts/ in the source: %v", src)
	}
	t.Logf("%d objects under flink/counts/ (%d _metadata) replicated", len(src), metadata)
}

// In a versioned bucket a deleted key (its current version a delete
// marker) is gone for HEAD and listings, as in S3, and back when written
// again or when its delete marker is deleted.
func TestAWSFront_deleteMarkersHideKeys(t *testing.T) {
	rb := newReplBed(t, true, false)
	c, ctx, b := rb.a, rb.ctx, rb.src
	listed := func(key string) bool {
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b), Prefix: aws.String("d/")})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			if aws.ToString(o.Key) == key {
				return true
			}
		}
		if int(aws.ToInt32(out.KeyCount)) != len(out.Contents) {
			t.Errorf("KeyCount %d for %d objects", aws.ToInt32(out.KeyCount), len(out.Contents))
		}
		return false
	}
	head := func(key string) error {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(key)})
		return err
	}
	rb.put(t, "d/k", "x")
	rb.put(t, "d/other", "y")
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("d/k")}); err != nil {
		t.Fatal(err)
	}
	if err := head("d/k"); apiCode(err) != "NotFound" || listed("d/k") {
		t.Fatalf("after the delete: HEAD %v, listed %v; want NotFound and not listed", err, listed("d/k"))
	}
	if err := head("d/other"); err != nil || !listed("d/other") {
		t.Fatalf("the other key: HEAD %v, listed %v", err, listed("d/other"))
	}
	rb.put(t, "d/k", "again")
	if err := head("d/k"); err != nil || !listed("d/k") {
		t.Fatalf("written again: HEAD %v, listed %v", err, listed("d/k"))
	}
	del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b),
		Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{{Key: aws.String("d/k")}}}})
	if err != nil || len(del.Deleted) != 1 || !aws.ToBool(del.Deleted[0].DeleteMarker) {
		t.Fatalf("DeleteObjects: %+v, %v", del, err)
	}
	if err := head("d/k"); apiCode(err) != "NotFound" || listed("d/k") {
		t.Fatalf("after DeleteObjects: HEAD %v, listed %v", err, listed("d/k"))
	}
	marker := del.Deleted[0].DeleteMarkerVersionId
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("d/k"), VersionId: marker}); err != nil {
		t.Fatal(err)
	}
	if err := head("d/k"); err != nil || !listed("d/k") {
		t.Fatalf("its delete marker deleted: HEAD %v, listed %v; want the object back", err, listed("d/k"))
	}
	// Quiet mode (as S3A deletes its directory markers) answers no Deleted
	// entries; the keys are gone all the same.
	if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b),
		Delete: &s3types.Delete{Quiet: aws.Bool(true), Objects: []s3types.ObjectIdentifier{{Key: aws.String("d/other")}, {Key: aws.String("d/never/")}}}}); err != nil {
		t.Fatal(err)
	}
	if err := head("d/other"); apiCode(err) != "NotFound" || listed("d/other") || listed("d/never/") {
		t.Fatalf("after a quiet DeleteObjects: HEAD %v, listed %v, %v", err, listed("d/other"), listed("d/never/"))
	}
	// A delimited listing names only the prefixes that still hold a key.
	rb.put(t, "d/chk-1/_metadata", "m1")
	rb.put(t, "d/chk-2/_metadata", "m2")
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("d/chk-1/_metadata")}); err != nil {
		t.Fatal(err)
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b), Prefix: aws.String("d/"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	for _, p := range out.CommonPrefixes {
		prefixes = append(prefixes, aws.ToString(p.Prefix))
	}
	if strings.Join(prefixes, ",") != "d/chk-2/" {
		t.Errorf("delimited listing of d/: prefixes %v, want only d/chk-2/ (every key under d/chk-1/ is deleted)", prefixes)
	}
}
