// Package checkpoint finds the newest completed Flink checkpoint in S3.
//
// Flink lays out a job's checkpoints as <dir>/<job-id>/chk-<N>/ (one per
// retained checkpoint), plus <dir>/<job-id>/shared/ (incremental state files
// shared by checkpoints) and <dir>/<job-id>/taskowned/. A checkpoint is
// complete once chk-<N>/_metadata exists. The finder lists with a delimiter,
// so its cost grows with the number of chk-N directories and never with the
// number of shared files, and it never lists inside shared/ or taskowned/.
package checkpoint

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// S3API is the part of the S3 client the finder uses.
type S3API interface {
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
}

// Checkpoint is a completed checkpoint.
type Checkpoint struct {
	Bucket       string
	JobID        string
	ID           int64
	Path         string // s3://bucket/dir/job/chk-N
	MetadataPath string // .../chk-N/_metadata
	LastModified time.Time
}

var (
	jobIDRE  = regexp.MustCompile(`^[0-9a-f]{32}$`)
	chkNumRE = regexp.MustCompile(`^(\d+)$`) // what follows "chk-"
)

// ValidJobID tells whether s is a Flink JobID (32 lowercase hex characters).
func ValidJobID(s string) bool { return jobIDRE.MatchString(s) }

// ParseS3URI splits s3://bucket/key/prefix into bucket and key prefix (no
// leading or trailing slash).
func ParseS3URI(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		if rest, ok = strings.CutPrefix(uri, "s3a://"); !ok {
			return "", "", fmt.Errorf("%q is not an s3:// URI", uri)
		}
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if bucket == "" || prefix == "" {
		return "", "", fmt.Errorf("%q must name a bucket and a directory (s3://bucket/dir)", uri)
	}
	return bucket, prefix, nil
}

// Latest returns the newest completed checkpoint under dir (a key prefix,
// e.g. "flink/orders/checkpoints"). With jobID, only that job is looked at;
// without, the job whose newest completed checkpoint has the newest
// _metadata wins. nil and no error means none was found.
func Latest(ctx context.Context, c S3API, bucket, dir, jobID string) (*Checkpoint, error) {
	dir = strings.Trim(dir, "/")
	var jobs []string
	if jobID != "" {
		jobs = []string{jobID}
	} else {
		dirs, err := listDirs(ctx, c, bucket, dir+"/")
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			if ValidJobID(d) {
				jobs = append(jobs, d)
			}
		}
	}
	var best *Checkpoint
	for _, job := range jobs {
		cp, err := latestOfJob(ctx, c, bucket, dir, job)
		if err != nil {
			return nil, err
		}
		if cp != nil && (best == nil || cp.LastModified.After(best.LastModified)) {
			best = cp
		}
	}
	return best, nil
}

// InStore is Latest in the checkpoint directory of a state store.
func InStore(ctx context.Context, c S3API, s store.Store, jobID string) (*Checkpoint, error) {
	return Latest(ctx, c, s.Bucket, s.DirKey(store.CheckpointsDir), jobID)
}

func latestOfJob(ctx context.Context, c S3API, bucket, dir, job string) (*Checkpoint, error) {
	jobPrefix := dir + "/" + job + "/"
	ids, err := checkpointIDs(ctx, c, bucket, jobPrefix)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		key := fmt.Sprintf("%schk-%d/_metadata", jobPrefix, id)
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if notfound.Is(awsclient.NotFound(key, err)) {
			continue // in progress, or abandoned: no _metadata
		}
		if err != nil {
			return nil, fmt.Errorf("reading s3://%s/%s: %w", bucket, key, err)
		}
		path := fmt.Sprintf("s3://%s/%schk-%d", bucket, jobPrefix, id)
		return &Checkpoint{
			Bucket:       bucket,
			JobID:        job,
			ID:           id,
			Path:         path,
			MetadataPath: path + "/_metadata",
			LastModified: aws.ToTime(head.LastModified),
		}, nil
	}
	return nil, nil
}

// checkpointIDs lists the chk-N directories of a job directory (jobPrefix
// ends with "/"), newest (highest N) first.
func checkpointIDs(ctx context.Context, c S3API, bucket, jobPrefix string) ([]int64, error) {
	// Listing "<job>/chk-" (not "<job>/") keeps shared/ and taskowned/ out
	// of the request entirely: the server never rolls their files up.
	dirs, err := listDirs(ctx, c, bucket, jobPrefix+"chk-")
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, d := range dirs {
		if m := chkNumRE.FindStringSubmatch(d); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
	}
	// chk-10 after chk-9: numeric, not lexical, order.
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	return ids, nil
}

// listDirs lists, with a delimiter and following pagination, the
// "subdirectories" starting with prefix, returned without the prefix and
// the trailing "/".
func listDirs(ctx context.Context, c S3API, bucket, prefix string) ([]string, error) {
	var out []string
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/")}
	for {
		page, err := c.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, cp := range page.CommonPrefixes {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/"))
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			return out, nil
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}

// ValidateJobID returns what is wrong with a Flink JobID, or "".
func ValidateJobID(s string) string {
	if !ValidJobID(s) {
		return "must be a Flink JobID: 32 lowercase hexadecimal characters"
	}
	return ""
}
