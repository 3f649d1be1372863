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
)

// Snapshot kinds, as LatestRestorable reports them.
const (
	KindSavepoint  = "savepoint"
	KindCheckpoint = "checkpoint"
)

// Candidate is a savepoint or checkpoint directory LatestRestorable looked at.
type Candidate struct {
	Kind string // KindSavepoint or KindCheckpoint
	// Path is the directory, s3://bucket/…/savepoint-x or …/<job>/chk-N.
	Path string
	// HasMetadata: its _metadata is there. Time is when it was written,
	// or, without one, when the newest object in the directory was.
	HasMetadata bool
	Time        time.Time
}

// SkippedSnapshot is a snapshot newer than the one LatestRestorable
// returned, and why it cannot restore from where it is.
type SkippedSnapshot struct {
	Candidate
	Reason string
	// Missing are the referenced files that are not there (partly
	// arrived); Outside the files it names by absolute path outside its
	// directory (not relocatable).
	Missing, Outside []string
}

// Line is the skipped snapshot as one line: "<path>: <why>", naming the
// first missing file or absolute path.
func (s SkippedSnapshot) Line() string {
	first, n := "", 0
	switch {
	case len(s.Outside) > 0:
		first, n = s.Outside[0], len(s.Outside)
	case len(s.Missing) > 0:
		first, n = s.Missing[0], len(s.Missing)
	default:
		return s.Path + ": " + s.Reason
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more)", n-1)
	}
	return fmt.Sprintf("%s: %s: %s%s", s.Path, s.Reason, first, more)
}

// RestorableResult is what LatestRestorable found.
type RestorableResult struct {
	// Snapshot is the newest restorable snapshot, nil if there is none;
	// Check its check.
	Snapshot *Candidate
	Check    *Restorability
	// Skipped are the newer snapshots passed over, newest first.
	Skipped []SkippedSnapshot
	// Looked is how many savepoint and checkpoint directories were found.
	Looked int
}

// LatestRestorable returns the newest snapshot under savepointDir and
// checkpointDir (s3:// directories; either may be "") that restores from
// where it is on its own (CheckRestorable with OwnDirectory): its _metadata
// is there, every file it names lies in its own directory, and every one of
// them exists. That is what a copy in another region can be restored from:
// S3 replication copies object by object, asynchronously and in no
// guaranteed order, so the newest _metadata may have arrived before the
// files it references (Amazon S3 User Guide, "Replicating objects within
// and across Regions"), and a checkpoint's files are named by absolute path
// in the bucket it was written to (measured: TestRealFlink_relocation).
//
// Snapshots are ordered by when their _metadata was written (Flink writes
// it last: Checkpoints.storeCheckpointMetadata), those without one by their
// newest object; from the newest down, each is checked until one passes.
// jobID ("" for all) limits the checkpoints to one job. Cost: a listing of
// each directory, one of each savepoint and chk-N directory, then for each
// snapshot checked a GET of its _metadata and a listing of the directories
// its files are in.
func LatestRestorable(ctx context.Context, c S3Reader, savepointDir, checkpointDir, jobID string) (*RestorableResult, error) {
	var cands []Candidate
	if savepointDir != "" {
		bucket, dir, err := ParseS3URI(savepointDir)
		if err != nil {
			return nil, err
		}
		names, err := listDirs(ctx, c, bucket, dir+"/")
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			// Flink names a savepoint directory savepoint-<job id's first
			// 6 hex>-<random 12 hex> (AbstractFsCheckpointStorageAccess.
			// initializeLocationForSavepoint, prefix "savepoint-").
			if !strings.HasPrefix(n, "savepoint-") {
				continue
			}
			cand, err := describe(ctx, c, bucket, dir+"/"+n+"/", KindSavepoint)
			if err != nil {
				return nil, err
			}
			cands = append(cands, cand)
		}
	}
	if checkpointDir != "" {
		bucket, dir, err := ParseS3URI(checkpointDir)
		if err != nil {
			return nil, err
		}
		jobs := []string{jobID}
		if jobID == "" {
			all, err := listDirs(ctx, c, bucket, dir+"/")
			if err != nil {
				return nil, err
			}
			jobs = nil
			for _, j := range all {
				if ValidJobID(j) {
					jobs = append(jobs, j)
				}
			}
		}
		for _, j := range jobs {
			ids, err := checkpointIDs(ctx, c, bucket, dir+"/"+j+"/")
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				cand, err := describe(ctx, c, bucket, fmt.Sprintf("%s/%s/chk-%d/", dir, j, id), KindCheckpoint)
				if err != nil {
					return nil, err
				}
				cands = append(cands, cand)
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if !cands[i].Time.Equal(cands[j].Time) {
			return cands[i].Time.After(cands[j].Time)
		}
		return cands[i].Path > cands[j].Path
	})
	res := &RestorableResult{Looked: len(cands)}
	for i := range cands {
		cand := cands[i]
		if !cand.HasMetadata {
			res.Skipped = append(res.Skipped, SkippedSnapshot{Candidate: cand,
				Reason: "no " + MetadataFile + " (in progress, not yet replicated, or abandoned)"})
			continue
		}
		rs, err := CheckRestorable(ctx, c, cand.Path, OwnDirectory)
		var me *MetadataError
		switch {
		case errors.As(err, &me):
			res.Skipped = append(res.Skipped, SkippedSnapshot{Candidate: cand, Reason: "its " + MetadataFile + " cannot be read: " + err.Error()})
			continue
		case err != nil:
			return nil, err
		case rs.Completeness.Metadata == nil:
			res.Skipped = append(res.Skipped, SkippedSnapshot{Candidate: cand, Reason: "no " + MetadataFile + " (deleted while being read)"})
			continue
		case !rs.Relocation.Relocatable():
			r := rs.Relocation
			res.Skipped = append(res.Skipped, SkippedSnapshot{Candidate: cand, Outside: r.Outside,
				Reason: fmt.Sprintf("not relocatable: %d of the %d files it references are named by absolute path outside its directory", len(r.Outside), r.Files)})
			continue
		case !rs.Completeness.Complete():
			comp := rs.Completeness
			res.Skipped = append(res.Skipped, SkippedSnapshot{Candidate: cand, Missing: comp.Missing,
				Reason: fmt.Sprintf("partly arrived: %d of the %d files it references are missing", len(comp.Missing), comp.Referenced)})
			continue
		}
		cand.Time = rs.Completeness.MetadataModified
		res.Snapshot, res.Check = &cand, rs
		return res, nil
	}
	return res, nil
}

// describe lists the directory prefix (its own objects only) of a
// snapshot: whether _metadata is there and when it, or else the newest
// object, was written.
func describe(ctx context.Context, c S3API, bucket, prefix, kind string) (Candidate, error) {
	cand := Candidate{Kind: kind, Path: "s3://" + bucket + "/" + strings.TrimSuffix(prefix, "/")}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/")}
	for {
		page, err := c.ListObjectsV2(ctx, in)
		if err != nil {
			return cand, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			t := aws.ToTime(o.LastModified)
			if aws.ToString(o.Key) == prefix+MetadataFile {
				cand.HasMetadata, cand.Time = true, t
				return cand, nil
			}
			if t.After(cand.Time) {
				cand.Time = t
			}
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			return cand, nil
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}
