package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// countingS3 counts the requests the finder makes.
type countingS3 struct {
	S3API
	n atomic.Int64
}

func (c *countingS3) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, o ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	c.n.Add(1)
	return c.S3API.ListObjectsV2(ctx, in, o...)
}

func (c *countingS3) HeadObject(ctx context.Context, in *s3.HeadObjectInput, o ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	c.n.Add(1)
	return c.S3API.HeadObject(ctx, in, o...)
}

// BenchmarkLatestCheckpoint runs the finder against the test bed's S3 (make
// bench starts it) on a job directory with 10 checkpoint dirs and 0 or
// 100,000 shared state files, and reports S3 requests per lookup. Setup
// (writing 100,000 objects) is excluded from the timing.
func BenchmarkLatestCheckpoint(b *testing.B) {
	ctx := context.Background()
	cl := benchAWS(b)
	for _, shared := range []int{0, 100000} {
		bucket := fmt.Sprintf("fs-bench-shared-%d", shared)
		seedBenchBucket(b, cl.S3, bucket, shared)
		for _, job := range []string{"", jobA} {
			name := fmt.Sprintf("shared=%d/any-job", shared)
			if job != "" {
				name = fmt.Sprintf("shared=%d/job_id", shared)
			}
			b.Run(name, func(b *testing.B) {
				c := &countingS3{S3API: cl.S3}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					cp, err := Latest(ctx, c, bucket, "flink/orders/checkpoints", job)
					if err != nil || cp == nil || cp.ID != 10 {
						b.Fatalf("%+v %v", cp, err)
					}
				}
				b.ReportMetric(float64(c.n.Load())/float64(b.N), "requests/op")
			})
		}
	}
}

// benchAWS is an AWS client of the running test bed (make bench starts
// it); the benchmark is skipped without one.
func benchAWS(b *testing.B) *awsclient.Clients {
	b.Helper()
	root, err := testbed.FindRoot()
	if err != nil {
		b.Fatal(err)
	}
	env, err := testbed.Load(root)
	if err != nil {
		b.Skip("no test bed running: make testbed-up (make bench does it)")
	}
	for _, kv := range env.Vars() {
		b.Setenv(kv[0], kv[1])
	}
	cl, err := awsclient.New(context.Background(), awsclient.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return cl
}

// seedBenchBucket writes the layout once; a bucket that already holds it is reused.
func seedBenchBucket(b *testing.B, c *s3.Client, bucket string, shared int) {
	ctx := context.Background()
	dir := "flink/orders/checkpoints/" + jobA
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(dir + "/chk-10/_metadata")}); err == nil {
		return
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") {
		b.Fatal(err)
	}
	var keys []string
	for i := 0; i < shared; i++ {
		keys = append(keys, fmt.Sprintf("%s/shared/%08d-sst", dir, i))
	}
	for id := 1; id <= 10; id++ {
		keys = append(keys, fmt.Sprintf("%s/chk-%d/_metadata", dir, id)) // _metadata last: the checkpoints complete after their files
	}
	work := make(chan string)
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// countingReader counts the requests of a _metadata read too.
type countingReader struct {
	countingS3
	r S3Reader
}

func (c *countingReader) GetObject(ctx context.Context, in *s3.GetObjectInput, o ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	c.n.Add(1)
	return c.r.GetObject(ctx, in, o...)
}

// BenchmarkPreflightRead is what the restore pre-flight reads at apply
// (issue 44): the newest completed checkpoint of the running job in a
// store holding 100 of them (Latest with the job id), then its _metadata
// (ReadMetadataAt, a real Flink 2.2.1 checkpoint's), against the test bed's
// S3; it reports S3 requests per pre-flight.
func BenchmarkPreflightRead(b *testing.B) {
	ctx := context.Background()
	cl := benchAWS(b)
	meta, err := os.ReadFile(filepath.Join("testdata", "incremental-rocksdb-checkpoint", MetadataFile))
	if err != nil {
		b.Fatal(err)
	}
	const bucket = "fs-bench-preflight"
	dir := "flink/orders/checkpoints/" + jobA
	if _, err := cl.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") {
		b.Fatal(err)
	}
	for id := 1; id <= 100; id++ {
		if _, err := cl.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("%s/chk-%d/%s", dir, id, MetadataFile)),
			Body: bytes.NewReader(meta)}); err != nil {
			b.Fatal(err)
		}
	}
	c := &countingReader{countingS3: countingS3{S3API: cl.S3}, r: cl.S3}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cp, err := Latest(ctx, c, bucket, "flink/orders/checkpoints", jobA)
		if err != nil || cp == nil || cp.ID != 100 {
			b.Fatalf("%+v %v", cp, err)
		}
		if m, err := ReadMetadataAt(ctx, c, cp.Path); err != nil || len(m.Operators) == 0 {
			b.Fatalf("%+v %v", m, err)
		}
	}
	b.ReportMetric(float64(c.n.Load())/float64(b.N), "requests/op")
}
