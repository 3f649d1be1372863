package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// maxOrphanListPages bounds the listing of a job's shared/ or taskowned/
// directory (1000 keys a page); past it the report says Truncated.
const maxOrphanListPages = 1000

// Flink's directories beside the chk-N ones in a job's checkpoint directory
// (AbstractFsCheckpointStorageAccess.CHECKPOINT_SHARED_STATE_DIR and
// CHECKPOINT_TASK_OWNED_STATE_DIR).
var orphanDirs = []string{"shared/", "taskowned/"}

// OrphanFile is a file of a job's shared/ or taskowned/ directory that no
// retained checkpoint references.
type OrphanFile struct {
	Key          string
	Size         int64
	LastModified time.Time
}

// OrphanReport is what Orphans found.
type OrphanReport struct {
	Bucket, JobDir string
	// Checkpoints are the retained chk-N whose _metadata was read, newest
	// first; InProgress the chk-N directories without one.
	Checkpoints, InProgress []int64
	// NewestMetadata is when the newest retained _metadata was written.
	NewestMetadata time.Time
	// Listed is how many files shared/ and taskowned/ hold (directory
	// markers aside); Referenced how many of them a checkpoint references.
	Listed, Referenced int
	// Orphans are the unreferenced files written before NewestMetadata,
	// sorted by key; OrphanBytes their total size.
	Orphans     []OrphanFile
	OrphanBytes int64
	// Unsettled are the unreferenced files written after NewestMetadata
	// (all of them when no checkpoint is retained): a checkpoint in
	// progress may be writing them, so they are not counted as orphans.
	Unsettled      []OrphanFile
	UnsettledBytes int64
	// Truncated says the listing stopped at its bound (maxOrphanListPages
	// per directory): files past it were not looked at.
	Truncated bool
}

// Keys returns the orphans' keys.
func (r *OrphanReport) Keys() []string {
	keys := make([]string, len(r.Orphans))
	for i, o := range r.Orphans {
		keys[i] = o.Key
	}
	return keys
}

// Orphans reads every retained checkpoint of a job (each chk-N/_metadata
// under jobDir, a key prefix such as flink/orders/checkpoints/<job-id>),
// lists the job's shared/ and taskowned/ directories, and reports the files
// there that no retained checkpoint references. It only reads.
//
// What it cannot see: a checkpoint in progress writes its files before its
// _metadata (those written after the newest _metadata are reported apart,
// as Unsettled; with concurrent checkpoints even older ones may be such),
// and a job restored from one of these checkpoints in CLAIM mode references
// this job's shared files from its own checkpoints, which live elsewhere.
// Read the report with that in mind before deleting anything.
//
// A _metadata that cannot be read is an error: what it references is
// unknown, so nothing can be called unreferenced.
func Orphans(ctx context.Context, c S3Reader, bucket, jobDir string) (*OrphanReport, error) {
	jobDir = strings.Trim(jobDir, "/")
	if jobDir == "" {
		return nil, errors.New("a job's checkpoint directory is needed, not the bucket's root")
	}
	jobPrefix := jobDir + "/"
	rep := &OrphanReport{Bucket: bucket, JobDir: jobDir}
	ids, err := checkpointIDs(ctx, c, bucket, jobPrefix)
	if err != nil {
		return nil, err
	}
	referenced := map[string]bool{}
	for _, id := range ids {
		uri := fmt.Sprintf("s3://%s/%schk-%d/%s", bucket, jobPrefix, id, MetadataFile)
		m, modified, err := readMetadataObject(ctx, c, uri)
		if notfound.Is(awsclient.NotFound(uri, err)) {
			rep.InProgress = append(rep.InProgress, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		rep.Checkpoints = append(rep.Checkpoints, id)
		if modified.After(rep.NewestMetadata) {
			rep.NewestMetadata = modified
		}
		for _, f := range m.Files {
			if b, key, ok := splitObjectURI(f.URI); ok && b == bucket {
				referenced[key] = true
			}
		}
	}
	for _, d := range orphanDirs {
		in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(jobPrefix + d)}
		for page := 0; ; page++ {
			if page == maxOrphanListPages {
				rep.Truncated = true
				break
			}
			out, err := c.ListObjectsV2(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("listing s3://%s/%s%s: %w", bucket, jobPrefix, d, err)
			}
			for _, o := range out.Contents {
				key := aws.ToString(o.Key)
				if strings.HasSuffix(key, "/") {
					continue // a directory marker
				}
				rep.Listed++
				if referenced[key] {
					rep.Referenced++
					continue
				}
				f := OrphanFile{Key: key, Size: aws.ToInt64(o.Size), LastModified: aws.ToTime(o.LastModified)}
				if len(rep.Checkpoints) > 0 && !f.LastModified.After(rep.NewestMetadata) {
					rep.Orphans = append(rep.Orphans, f)
					rep.OrphanBytes += f.Size
				} else {
					rep.Unsettled = append(rep.Unsettled, f)
					rep.UnsettledBytes += f.Size
				}
			}
			if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
				break
			}
			in.ContinuationToken = out.NextContinuationToken
		}
	}
	sort.Slice(rep.Orphans, func(i, j int) bool { return rep.Orphans[i].Key < rep.Orphans[j].Key })
	sort.Slice(rep.Unsettled, func(i, j int) bool { return rep.Unsettled[i].Key < rep.Unsettled[j].Key })
	return rep, nil
}
