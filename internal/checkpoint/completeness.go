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

// S3Reader is S3API and GetObject: what reading a snapshot's _metadata
// needs.
type S3Reader interface {
	S3API
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// maxListPagesPerDir bounds the listing of one directory when checking that
// a snapshot's files exist (1000 keys a page); the files not seen by then
// are checked one by one with HEAD.
const maxListPagesPerDir = 20

// Completeness is what CheckComplete found.
type Completeness struct {
	// Target is the snapshot as given; MetadataURI its _metadata.
	Target, MetadataURI string
	// Metadata is the parsed _metadata, nil when it is missing;
	// MetadataModified is when it was written.
	Metadata         *Metadata
	MetadataModified time.Time
	// Referenced is how many distinct files the snapshot references,
	// Present how many of them exist.
	Referenced, Present int
	// Missing are the s3:// URIs of what a restore would need and is not
	// there, sorted: the _metadata itself, or referenced files.
	Missing []string
	// Requests is how many S3 requests the check made.
	Requests int
}

// Complete tells whether everything the snapshot needs is there.
func (c *Completeness) Complete() bool { return len(c.Missing) == 0 }

// Err is nil for a complete snapshot, else an *IncompleteError.
func (c *Completeness) Err() error {
	if c.Complete() {
		return nil
	}
	return &IncompleteError{Target: c.Target, MetadataMissing: c.Metadata == nil, Referenced: c.Referenced, Missing: c.Missing}
}

// IncompleteError says a snapshot cannot be restored: files it needs are
// missing (sorted s3:// URIs).
type IncompleteError struct {
	Target string
	// MetadataMissing: the _metadata itself is missing (Missing holds it).
	MetadataMissing bool
	Referenced      int
	Missing         []string
}

func (e *IncompleteError) Error() string {
	if e.MetadataMissing {
		return fmt.Sprintf("%s has no %s: it is not a completed checkpoint or savepoint", e.Target, MetadataFile)
	}
	shown := e.Missing
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(e.Missing)-5)
	}
	return fmt.Sprintf("%s is incomplete: %d of the %d files its %s references are missing: %s%s",
		e.Target, len(e.Missing), e.Referenced, MetadataFile, strings.Join(shown, ", "), more)
}

// splitObjectURI splits an S3 URI as Flink's S3 file systems write them
// (s3:// for both, s3a:// for flink-s3-fs-hadoop, s3p:// for
// flink-s3-fs-presto) into bucket and key.
func splitObjectURI(uri string) (bucket, key string, ok bool) {
	for _, scheme := range []string{"s3://", "s3a://", "s3p://"} {
		if rest, found := strings.CutPrefix(uri, scheme); found {
			bucket, key, _ = strings.Cut(rest, "/")
			return bucket, key, bucket != "" && key != "" && !strings.HasSuffix(key, "/")
		}
	}
	return "", "", false
}

// ReadMetadataAt reads and parses the _metadata of target (a snapshot
// directory or its _metadata). A missing _metadata is an error that
// awsclient.NotFound recognises (S3's typed answer); one that cannot be parsed wraps a
// *MetadataError.
func ReadMetadataAt(ctx context.Context, c S3Reader, target string) (*Metadata, error) {
	m, _, err := readMetadataObject(ctx, c, MetadataURI(target))
	return m, err
}

func readMetadataObject(ctx context.Context, c S3Reader, uri string) (*Metadata, time.Time, error) {
	bucket, key, ok := splitObjectURI(uri)
	if !ok {
		return nil, time.Time{}, fmt.Errorf("%q is not an s3:// URI of a file", uri)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading %s: %w", uri, err)
	}
	defer out.Body.Close()
	m, err := ReadMetadata(out.Body, uri)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading %s: %w", uri, err)
	}
	return m, aws.ToTime(out.LastModified), nil
}

// CheckComplete reads the _metadata of target (a chk-N or savepoint
// directory, or its _metadata) and checks that every file it references
// exists. It lists each directory holding referenced files (bounded, see
// maxListPagesPerDir) rather than asking for each file. A missing
// _metadata or missing files are reported in the result (see Err); the
// error is for what kept the check from being made: S3 errors, a _metadata
// that cannot be read, a referenced file outside S3.
func CheckComplete(ctx context.Context, c S3Reader, target string) (*Completeness, error) {
	res, found, err := openCheck(ctx, c, target)
	if err != nil || !found {
		return res, err
	}
	if err := res.lookForReferenced(ctx, c); err != nil {
		return nil, err
	}
	return res, nil
}

// openCheck starts the check of target: it reads the _metadata into a
// Completeness and counts the files it references. found is false when
// there is no _metadata (Missing then names it).
func openCheck(ctx context.Context, c S3Reader, target string) (res *Completeness, found bool, err error) {
	res = &Completeness{Target: target, MetadataURI: MetadataURI(target), Requests: 1}
	m, modified, err := readMetadataObject(ctx, c, res.MetadataURI)
	if notfound.Is(awsclient.NotFound(res.MetadataURI, err)) {
		res.Missing = []string{res.MetadataURI}
		return res, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	res.Metadata, res.MetadataModified = m, modified
	res.Referenced = len(m.FileURIs())
	return res, true, nil
}

// lookForReferenced checks that every file the _metadata references
// exists, by the _metadata and not by listing alone.
func (res *Completeness) lookForReferenced(ctx context.Context, c S3Reader) error {
	missing, requests, err := missingObjects(ctx, c, res.Metadata.FileURIs())
	res.Requests += requests
	if err != nil {
		return fmt.Errorf("checking the files %s references: %w", res.MetadataURI, err)
	}
	res.Missing = missing
	res.Present = res.Referenced - len(missing)
	return nil
}

// missingObjects returns which of uris (distinct s3:// object URIs) do not
// exist, sorted, and how many requests it took: one listing (with a
// delimiter, so only the directory's own files) per directory, stopping
// once every file of it was seen, the listing ended, or maxListPagesPerDir
// pages were read; a file not seen by a listing that did not end is asked
// for with HEAD. Correctness does not rest on the listing's order.
func missingObjects(ctx context.Context, c S3API, uris []string) (missing []string, requests int, err error) {
	type dirKey struct{ bucket, prefix string }
	dirs := map[dirKey]map[string]string{} // key -> uri
	for _, u := range uris {
		bucket, key, ok := splitObjectURI(u)
		if !ok {
			return nil, requests, fmt.Errorf("%s is not an S3 object: its existence cannot be checked", u)
		}
		dk := dirKey{bucket, key[:strings.LastIndex(key, "/")+1]}
		if dirs[dk] == nil {
			dirs[dk] = map[string]string{}
		}
		dirs[dk][key] = u
	}
	order := make([]dirKey, 0, len(dirs))
	for dk := range dirs {
		order = append(order, dk)
	}
	sort.Slice(order, func(i, j int) bool {
		return order[i].bucket+"/"+order[i].prefix < order[j].bucket+"/"+order[j].prefix
	})
	for _, dk := range order {
		want := dirs[dk]
		unseen := len(want)
		seen := map[string]bool{}
		ended := false
		in := &s3.ListObjectsV2Input{Bucket: aws.String(dk.bucket), Prefix: aws.String(dk.prefix), Delimiter: aws.String("/")}
		for page := 0; page < maxListPagesPerDir && unseen > 0; page++ {
			out, err := c.ListObjectsV2(ctx, in)
			requests++
			if err != nil {
				return nil, requests, fmt.Errorf("listing s3://%s/%s: %w", dk.bucket, dk.prefix, err)
			}
			for _, o := range out.Contents {
				k := aws.ToString(o.Key)
				if _, ok := want[k]; ok && !seen[k] {
					seen[k] = true
					unseen--
				}
			}
			if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
				ended = true
				break
			}
			in.ContinuationToken = out.NextContinuationToken
		}
		for k, u := range want {
			if seen[k] {
				continue
			}
			if ended {
				missing = append(missing, u)
				continue
			}
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(dk.bucket), Key: aws.String(k)})
			requests++
			if notfound.Is(awsclient.NotFound(u, err)) {
				missing = append(missing, u)
			} else if err != nil {
				return nil, requests, fmt.Errorf("checking %s: %w", u, err)
			}
		}
	}
	sort.Strings(missing)
	return missing, requests, nil
}

// SkippedCheckpoint is a checkpoint newer than the one LatestComplete
// returned, and why it cannot be restored.
type SkippedCheckpoint struct {
	ID     int64
	Path   string // s3://bucket/dir/job/chk-N
	Reason string
	// Missing are the files it references that are missing, if that is
	// the reason.
	Missing []string
}

// LatestCompleteResult is what LatestComplete found.
type LatestCompleteResult struct {
	// Checkpoint is the newest complete checkpoint, nil if there is none.
	Checkpoint *Checkpoint
	// Completeness is its check.
	Completeness *Completeness
	// Skipped are the newer chk-N directories, newest first.
	Skipped []SkippedCheckpoint
}

// LatestComplete returns the newest checkpoint of a job (under dir, a key
// prefix of the checkpoint directory) that can be restored: its _metadata
// is there and readable, and every file it references exists (as
// CheckComplete). It goes from the highest chk-N down, and reports the ones
// it skipped and why. An S3 error is an error; a _metadata that cannot be
// parsed makes its checkpoint skipped.
func LatestComplete(ctx context.Context, c S3Reader, bucket, dir, jobID string) (*LatestCompleteResult, error) {
	if !ValidJobID(jobID) {
		return nil, fmt.Errorf("job ID %q: %s", jobID, ValidateJobID(jobID))
	}
	dir = strings.Trim(dir, "/")
	jobPrefix := dir + "/" + jobID + "/"
	ids, err := checkpointIDs(ctx, c, bucket, jobPrefix)
	if err != nil {
		return nil, err
	}
	res := &LatestCompleteResult{}
	for _, id := range ids {
		path := fmt.Sprintf("s3://%s/%schk-%d", bucket, jobPrefix, id)
		comp, err := CheckComplete(ctx, c, path)
		var me *MetadataError
		switch {
		case errors.As(err, &me):
			res.Skipped = append(res.Skipped, SkippedCheckpoint{ID: id, Path: path, Reason: "its " + MetadataFile + " cannot be read: " + err.Error()})
			continue
		case err != nil:
			return nil, err
		case comp.Metadata == nil:
			res.Skipped = append(res.Skipped, SkippedCheckpoint{ID: id, Path: path, Reason: "no " + MetadataFile + " (in progress, or abandoned)"})
			continue
		case !comp.Complete():
			res.Skipped = append(res.Skipped, SkippedCheckpoint{ID: id, Path: path, Missing: comp.Missing,
				Reason: fmt.Sprintf("%d of the %d files it references are missing", len(comp.Missing), comp.Referenced)})
			continue
		}
		res.Checkpoint = &Checkpoint{Bucket: bucket, JobID: jobID, ID: id, Path: path,
			MetadataPath: comp.MetadataURI, LastModified: comp.MetadataModified}
		res.Completeness = comp
		return res, nil
	}
	return res, nil
}
