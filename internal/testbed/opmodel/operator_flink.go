package opmodel

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// What Flink itself would do, for the operator model: job ids and the files
// of checkpoints and savepoints.

// Flink's file layout (flink-runtime AbstractFsCheckpointStorageAccess).
const (
	checkpointDirPrefix = "chk-"
	sharedStateDir      = "shared"
	taskOwnedStateDir   = "taskowned"
	metadataFileName    = "_metadata"
)

// newJobID is JobID.generate().toHexString(): 16 random bytes, 32 hex digits.
func newJobID() string { return randomHex(16) }

func splitS3(uri string) (bucket, key string, ok bool) {
	rest, found := strings.CutPrefix(uri, "s3://")
	if !found {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, strings.TrimSuffix(key, "/"), bucket != ""
}

func (o *Operator) put(ctx context.Context, uri, body string) error {
	bucket, key, ok := splitS3(uri)
	if !ok {
		return fmt.Errorf("not an s3:// path: %s", uri)
	}
	_, err := o.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)})
	return err
}

// writeCheckpoint completes checkpoint n of a job as Flink lays it out under
// the checkpoint base dir (FsCheckpointStorageAccess: <dir>/<job-id>, with
// shared/ and taskowned/ beside chk-<n>/): state files first, _metadata
// last, as PendingCheckpoint.finalizeCheckpoint writes the metadata only once
// every task acknowledged. The _metadata is in Flink's format and
// references the three state files (operator_metadata.go). It returns the
// checkpoint's directory.
func (o *Operator) writeCheckpoint(ctx context.Context, dir, jobID string, n int, par jobParallelism) (string, error) {
	jobDir := strings.TrimSuffix(dir, "/") + "/" + jobID
	chk := fmt.Sprintf("%s/%s%d", jobDir, checkpointDirPrefix, n)
	if o.S3 == nil {
		return chk, nil
	}
	const body = "flink state (test bed)"
	size := int64(len(body))
	shared := modelFile{jobDir + "/" + sharedStateDir + "/" + randomHex(16), size}
	taskOwned := modelFile{jobDir + "/" + taskOwnedStateDir + "/" + randomHex(16), size}
	exclusive := modelFile{chk + "/" + randomHex(16), size}
	meta, err := checkpointMetadata(int64(n), par, taskOwned, exclusive, shared)
	if err != nil {
		return "", err
	}
	for _, f := range []modelFile{shared, taskOwned, exclusive} {
		if err := o.put(ctx, f.uri, body); err != nil {
			return "", err
		}
	}
	if err := o.put(ctx, chk+"/"+metadataFileName, string(meta)); err != nil {
		return "", err
	}
	return chk, nil
}

// writeSavepoint writes a savepoint of a job under dir, named as
// AbstractFsCheckpointStorageAccess.initializeLocationForSavepoint names it:
// "savepoint-" + the job id's first 6 characters + "-" + 12 random hex
// digits (FileUtils.getRandomFilename); its state file first, _metadata (in
// Flink's format, referencing it) last.
func (o *Operator) writeSavepoint(ctx context.Context, dir, jobID string, par jobParallelism) (string, error) {
	sp := fmt.Sprintf("%s/savepoint-%s-%s", strings.TrimSuffix(dir, "/"), jobID[:6], randomHex(6))
	if o.S3 == nil {
		return sp, nil
	}
	const body = "flink savepoint (test bed)"
	name := randomHex(16)
	meta, err := savepointMetadata(int64(o.lastCheckpoint(jobID)), par, name, int64(len(body)))
	if err != nil {
		return "", err
	}
	if err := o.put(ctx, sp+"/"+name, body); err != nil {
		return "", err
	}
	if err := o.put(ctx, sp+"/"+metadataFileName, string(meta)); err != nil {
		return "", err
	}
	return sp, nil
}

// restorable is Flink's check when a job starts from a path
// (AbstractFsCheckpointStorageAccess.resolveCheckpointPointer): the path is a
// checkpoint or savepoint directory holding _metadata, or the _metadata file
// itself. It returns Flink's error message, or "" when the path resolves.
func (o *Operator) restorable(ctx context.Context, path string) string {
	if o.S3 == nil {
		return ""
	}
	notFound := fmt.Sprintf("Cannot find checkpoint or savepoint file/directory '%s' on file system 's3'.", path)
	bucket, key, ok := splitS3(path)
	if !ok {
		return notFound
	}
	exists := func(k string) (bool, error) {
		_, err := o.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if notfound.Is(awsclient.NotFound(k, err)) {
			return false, nil
		}
		return err == nil, err
	}
	if strings.HasSuffix("/"+key, "/"+metadataFileName) {
		found, err := exists(key)
		switch {
		case err != nil:
			return err.Error()
		case !found:
			return notFound
		}
		return ""
	}
	found, err := exists(strings.TrimPrefix(key+"/"+metadataFileName, "/"))
	if err != nil {
		return err.Error()
	}
	if found {
		return ""
	}
	// A directory without _metadata, or nothing at all.
	out, err := o.S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key + "/"), MaxKeys: aws.Int32(1)})
	if err == nil && len(out.Contents) > 0 {
		return fmt.Sprintf("Cannot find meta data file '%s' in directory '%s'. Please try to load the checkpoint/savepoint directly from the metadata file instead of the directory.", metadataFileName, path)
	}
	return notFound
}

// disposeSavepoint deletes a savepoint's files, as Flink's disposeSavepoint
// does for the operator's StateSnapshotReconciler.cleanup.
func (o *Operator) disposeSavepoint(ctx context.Context, path string) error {
	if o.S3 == nil {
		return nil
	}
	bucket, key, ok := splitS3(strings.TrimSuffix(path, "/"+metadataFileName))
	if !ok {
		return fmt.Errorf("not an s3:// path: %s", path)
	}
	p := s3.NewListObjectsV2Paginator(o.S3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key + "/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, obj := range page.Contents {
			if _, err := o.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: obj.Key}); err != nil {
				return err
			}
		}
	}
	return nil
}

// completedCheckpoint tells whether a job has a completed checkpoint under
// the checkpoint dir: a chk-N/_metadata in its job directory (Flink's layout
// above; the metadata is written last).
func (o *Operator) completedCheckpoint(ctx context.Context, dir, jobID string) bool {
	bucket, key, ok := splitS3(strings.TrimSuffix(dir, "/") + "/" + jobID + "/" + checkpointDirPrefix)
	if !ok || o.S3 == nil {
		return false
	}
	out, err := o.S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		return false
	}
	for _, obj := range out.Contents {
		if strings.HasSuffix(aws.ToString(obj.Key), "/"+metadataFileName) {
			return true
		}
	}
	return false
}
