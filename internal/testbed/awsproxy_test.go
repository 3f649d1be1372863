package testbed

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

// Through the test bed's AWS front, "a/b/" and "a/b" are distinct keys, as
// in S3 (the emulator alone stores "a/b/" as "a/b": see s3markers.go), and
// the request log names the key the client sent.
func TestAWSFront_directoryMarkersAreDistinctKeys(t *testing.T) {
	env, _ := testbedEnv(t)
	ctx := context.Background()
	ac, err := newEnvAWS(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	c := ac.S3
	bucket := "front-markers-" + randomHex(4)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("a/b/"), Body: strings.NewReader("")}); err != nil {
		t.Fatal(err)
	}
	var nf *s3types.NotFound
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("a/b")}); !errors.As(err, &nf) {
		t.Fatalf("HEAD a/b after PUT a/b/: %v, want NotFound", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("a/b/")}); err != nil {
		t.Fatalf("HEAD a/b/: %v", err)
	}
	top, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("a/"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(top.CommonPrefixes) != 1 || aws.ToString(top.CommonPrefixes[0].Prefix) != "a/b/" || len(top.Contents) != 0 {
		t.Fatalf("listing a/ with delimiter: prefixes %v, contents %d; want [a/b/] and none", top.CommonPrefixes, len(top.Contents))
	}
	in, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("a/b/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Contents) != 1 || aws.ToString(in.Contents[0].Key) != "a/b/" {
		t.Fatalf("listing a/b/: %d objects, want exactly a/b/", len(in.Contents))
	}
	del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
		Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{{Key: aws.String("a/b/")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(del.Deleted) != 1 || aws.ToString(del.Deleted[0].Key) != "a/b/" {
		t.Fatalf("DeleteObjects answered %v, want a/b/ deleted", del.Deleted)
	}
	if left, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)}); err != nil || len(left.Contents) != 0 {
		t.Fatalf("after DeleteObjects: %v objects (%v)", left, err)
	}
	reqs, err := ReadS3Requests(env.S3RequestLog)
	if err != nil {
		t.Fatal(err)
	}
	var put bool
	for _, r := range reqs {
		if r.Bucket == bucket && r.Method == "PUT" && r.Key == "a/b/" {
			put = true
		}
		if r.Bucket == bucket && strings.Contains(r.Key, awsfront.MarkerSuffix) {
			t.Errorf("the log names the emulator's key %q", r.Key)
		}
	}
	if !put {
		t.Error("the request log has no PUT of a/b/")
	}
}

// testbedEnv starts (or reuses) the test bed; it skips without TF_ACC,
// like the other test bed tests.
func testbedEnv(t *testing.T) (Env, string) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("needs the test bed: set TF_ACC=1")
	}
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	env, started, err := Up(ctx, root, t.Logf)
	if err != nil {
		t.Fatalf("test bed: %v", err)
	}
	if started {
		t.Cleanup(func() { _ = Down(root) })
	}
	return env, root
}
