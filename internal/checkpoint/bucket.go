package checkpoint

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// metadataKeyRE matches a completed checkpoint's metadata file anywhere in a
// bucket: <dir>/<job-id>/chk-<N>/_metadata (Flink's layout, see the package
// comment: AbstractFsCheckpointStorageAccess names the job directory after the
// JobID and each checkpoint chk-<N>; _metadata is written last).
var metadataKeyRE = regexp.MustCompile(`^(?:(.*)/)?([0-9a-f]{32})/chk-(\d+)/_metadata$`)

// NewestInBucket reads the keys of a whole bucket, a page at a time until
// at least maxKeys were seen (as s3state.Contents counts them), and returns
// how many it saw, whether keys were left unread, and the newest completed
// checkpoint among them, whatever store holds it: what a bucket's
// force_destroy would delete, from one listing. It lists without a delimiter
// (the bucket's stores are not known), so its cost is bounded by maxKeys,
// not by the bucket. A nil checkpoint means none was seen.
func NewestInBucket(ctx context.Context, c S3API, bucket string, maxKeys int) (best *Checkpoint, seen int, truncated bool, err error) {
	// As Latest: within a job the highest chk-N wins (numeric order, as
	// Flink numbers checkpoints); across jobs, the newest _metadata.
	perJob := map[string]*Checkpoint{}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket)}
	for {
		out, err := c.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, seen, false, fmt.Errorf("listing s3://%s: %w", bucket, err)
		}
		for _, o := range out.Contents {
			if aws.ToString(o.Key) != store.BucketMarkerKey {
				seen++
			}
		}
		for _, o := range out.Contents {
			m := metadataKeyRE.FindStringSubmatch(aws.ToString(o.Key))
			if m == nil {
				continue
			}
			id, perr := strconv.ParseInt(m[3], 10, 64)
			if perr != nil {
				continue
			}
			job := trimJoin(m[1], m[2])
			if cur := perJob[job]; cur != nil && cur.ID >= id {
				continue
			}
			path := fmt.Sprintf("s3://%s/%s/chk-%d", bucket, job, id)
			perJob[job] = &Checkpoint{Bucket: bucket, JobID: m[2], ID: id, Path: path, MetadataPath: path + "/_metadata", LastModified: aws.ToTime(o.LastModified)}
		}
		truncated = aws.ToBool(out.IsTruncated) && out.NextContinuationToken != nil
		if seen >= maxKeys || !truncated {
			break
		}
		in.ContinuationToken = out.NextContinuationToken
	}
	for _, cp := range perJob {
		if best == nil || cp.LastModified.After(best.LastModified) || (cp.LastModified.Equal(best.LastModified) && cp.Path > best.Path) {
			best = cp
		}
	}
	return best, seen, truncated, nil
}

func trimJoin(dir, job string) string {
	if dir == "" {
		return job
	}
	return dir + "/" + job
}
