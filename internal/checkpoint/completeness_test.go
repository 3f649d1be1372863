package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// objS3 is an in-memory bucket with object bodies and sizes, answering
// ListObjectsV2 (prefix, delimiter, pages of pageSize), HeadObject and
// GetObject, and recording each request.
type objS3 struct {
	bucket   string
	objects  map[string]fakeObject
	pageSize int
	requests []string
}

type fakeObject struct {
	data     []byte
	size     int64
	modified time.Time
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fixtureS3 is a bucket holding what objects.txt recorded for the named
// fixtures, the _metadata bodies included, all written at t0.
func fixtureS3(t *testing.T, names ...string) *objS3 {
	t.Helper()
	bucket, err := recordedBucket()
	if err != nil {
		t.Fatal(err)
	}
	s := &objS3{bucket: bucket, objects: map[string]fakeObject{}, pageSize: 1000}
	for _, name := range names {
		f := loadFixture(t, name)
		_, prefix, _ := strings.Cut(strings.TrimPrefix(f.listed, "s3://"), "/")
		for rel, size := range f.objects {
			o := fakeObject{size: size, modified: t0}
			if rel == MetadataFile || strings.HasSuffix(rel, "/"+MetadataFile) {
				o.data = f.meta
			}
			s.objects[prefix+rel] = o
		}
	}
	return s
}

func (s *objS3) put(key string, data []byte, modified time.Time) {
	s.objects[key] = fakeObject{data: data, size: int64(len(data)), modified: modified}
}

func (s *objS3) keys() []string {
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *objS3) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	prefix, delim := aws.ToString(in.Prefix), aws.ToString(in.Delimiter)
	s.requests = append(s.requests, "LIST "+prefix)
	if aws.ToString(in.Bucket) != s.bucket {
		return nil, &s3types.NoSuchBucket{}
	}
	after := aws.ToString(in.ContinuationToken)
	out := &s3.ListObjectsV2Output{IsTruncated: aws.Bool(false)}
	seen := map[string]bool{}
	n := 0
	for _, k := range s.keys() {
		if !strings.HasPrefix(k, prefix) || (after != "" && k <= after) {
			continue
		}
		rest := k[len(prefix):]
		if j := strings.Index(rest, delim); delim != "" && j >= 0 {
			cp := prefix + rest[:j+1]
			if seen[cp] {
				continue
			}
			if after != "" && cp <= after {
				continue
			}
			if n == s.pageSize {
				out.IsTruncated, out.NextContinuationToken = aws.Bool(true), aws.String(after)
				return out, nil
			}
			seen[cp] = true
			out.CommonPrefixes = append(out.CommonPrefixes, s3types.CommonPrefix{Prefix: aws.String(cp)})
			n++
			after = cp + "\xff" // skip the rest of the rolled-up prefix
			continue
		}
		if n == s.pageSize {
			out.IsTruncated, out.NextContinuationToken = aws.Bool(true), aws.String(after)
			return out, nil
		}
		o := s.objects[k]
		out.Contents = append(out.Contents, s3types.Object{Key: aws.String(k), Size: aws.Int64(o.size), LastModified: aws.Time(o.modified)})
		n++
		after = k
	}
	return out, nil
}

func (s *objS3) HeadObject(_ context.Context, in *s3.HeadObjectInput, _ ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	key := aws.ToString(in.Key)
	s.requests = append(s.requests, "HEAD "+key)
	o, ok := s.objects[key]
	if !ok || aws.ToString(in.Bucket) != s.bucket {
		return nil, &s3types.NotFound{}
	}
	return &s3.HeadObjectOutput{ContentLength: aws.Int64(o.size), LastModified: aws.Time(o.modified)}, nil
}

func (s *objS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	key := aws.ToString(in.Key)
	s.requests = append(s.requests, "GET "+key)
	o, ok := s.objects[key]
	if !ok || aws.ToString(in.Bucket) != s.bucket {
		return nil, &s3types.NoSuchKey{}
	}
	data := o.data
	if data == nil {
		data = make([]byte, o.size)
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(data)), ContentLength: aws.Int64(int64(len(data))), LastModified: aws.Time(o.modified)}, nil
}

func (s *objS3) count(verb string) int {
	n := 0
	for _, r := range s.requests {
		if strings.HasPrefix(r, verb+" ") {
			n++
		}
	}
	return n
}

func key(uri string) string {
	_, k, _ := splitObjectURI(uri)
	return k
}

// The recorded snapshots are complete, each checked with one GET and one
// listing of the one directory its files are in.
func TestCheckComplete_realFixtures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		referenced int
	}{
		{"incremental-rocksdb-checkpoint", 1},
		{"canonical-savepoint", 1},
		{"native-savepoint", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixtureS3(t, tc.name)
			target := loadFixture(t, tc.name).snapshot
			c, err := CheckComplete(context.Background(), s, target)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Complete() || c.Err() != nil || c.Referenced != tc.referenced || c.Present != tc.referenced || c.Metadata == nil {
				t.Errorf("%+v, want complete with %d files", c, tc.referenced)
			}
			if s.count("GET") != 1 || s.count("LIST") != 1 || s.count("HEAD") != 0 || c.Requests != 2 {
				t.Errorf("requests %v (counted %d), want one GET and one LIST", s.requests, c.Requests)
			}
			if !c.MetadataModified.Equal(t0) || c.MetadataURI != target+"/_metadata" {
				t.Errorf("metadata %s written %v", c.MetadataURI, c.MetadataModified)
			}
		})
	}
}

func TestCheckComplete_missingSharedFile(t *testing.T) {
	s := fixtureS3(t, "incremental-rocksdb-checkpoint")
	f := loadFixture(t, "incremental-rocksdb-checkpoint")
	gone := f.listed + "shared/635450c3-59b5-4a4b-8e33-cb642e9dbc67"
	delete(s.objects, key(gone))
	c, err := CheckComplete(context.Background(), s, f.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if c.Complete() || len(c.Missing) != 1 || c.Missing[0] != gone || c.Present != 0 || c.Referenced != 1 {
		t.Fatalf("%+v, want %s missing", c, gone)
	}
	var inc *IncompleteError
	if err := c.Err(); !errors.As(err, &inc) || inc.MetadataMissing || !strings.Contains(err.Error(), "1 of the 1 files") || !strings.Contains(err.Error(), gone) {
		t.Errorf("Err() = %v", err)
	}
}

func TestCheckComplete_noMetadata(t *testing.T) {
	s := fixtureS3(t, "native-savepoint")
	f := loadFixture(t, "native-savepoint")
	delete(s.objects, key(f.snapshot+"/_metadata"))
	c, err := CheckComplete(context.Background(), s, f.snapshot+"/")
	if err != nil {
		t.Fatal(err)
	}
	var inc *IncompleteError
	if c.Metadata != nil || len(c.Missing) != 1 || c.Missing[0] != f.snapshot+"/_metadata" || !errors.As(c.Err(), &inc) || !inc.MetadataMissing {
		t.Errorf("%+v (%v), want the _metadata missing", c, c.Err())
	}
}

func TestCheckComplete_unreadableMetadata(t *testing.T) {
	s := fixtureS3(t, "canonical-savepoint")
	f := loadFixture(t, "canonical-savepoint")
	s.put(key(f.snapshot+"/_metadata"), f.meta[:100], t0)
	_, err := CheckComplete(context.Background(), s, f.snapshot)
	var me *MetadataError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), f.snapshot+"/_metadata") {
		t.Errorf("err %v, want a *MetadataError naming the file", err)
	}
}

// A directory longer than the listing bound: the files not reached are
// asked for one by one.
func TestCheckComplete_boundedListingFallsBackToHead(t *testing.T) {
	s := fixtureS3(t, "native-savepoint")
	f := loadFixture(t, "native-savepoint")
	dir := key(f.snapshot + "/x")
	dir = dir[:len(dir)-1]
	for i := 0; i < 30; i++ { // sorted before the savepoint's own files
		s.put(fmt.Sprintf("%s0000-filler-%02d", dir, i), nil, t0)
	}
	s.pageSize = 1
	c, err := CheckComplete(context.Background(), s, f.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Complete() || s.count("LIST") != maxListPagesPerDir || s.count("HEAD") != 2 {
		t.Errorf("%+v, requests %v: want complete after %d pages and 2 HEADs", c, s.requests, maxListPagesPerDir)
	}
	delete(s.objects, dir+"1612cf8c-51a2-4472-a86e-1d931d1070c6")
	s.requests = nil
	c, err = CheckComplete(context.Background(), s, f.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Missing) != 1 || !strings.HasSuffix(c.Missing[0], "/1612cf8c-51a2-4472-a86e-1d931d1070c6") {
		t.Errorf("missing %v", c.Missing)
	}
}

// A listing that ends proves absence: no HEAD.
func TestCheckComplete_pagedListingNoHead(t *testing.T) {
	s := fixtureS3(t, "native-savepoint")
	f := loadFixture(t, "native-savepoint")
	delete(s.objects, key(f.snapshot+"/2b81e1be-c640-4180-85a2-fcca0f3824f8"))
	s.pageSize = 1
	c, err := CheckComplete(context.Background(), s, f.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Missing) != 1 || s.count("HEAD") != 0 || s.count("LIST") != 3 {
		t.Errorf("missing %v, requests %v: want one missing, three pages, no HEAD", c.Missing, s.requests)
	}
}

func TestCheckComplete_fileOutsideS3Refused(t *testing.T) {
	s := &objS3{bucket: "b", objects: map[string]fakeObject{}, pageSize: 1000}
	s.put("sp/savepoint-1/_metadata", synthetic(6, func(w *mdw) {
		w.u8(12).i32(0).i32(0)
		fileHandle(w, 1, "hdfs://namenode/flink/x")
		w.utf("id")
	}), t0)
	_, err := CheckComplete(context.Background(), s, "s3://b/sp/savepoint-1")
	if err == nil || !strings.Contains(err.Error(), "hdfs://namenode/flink/x is not an S3 object") {
		t.Errorf("err %v", err)
	}
}

func latestSetup(t *testing.T) (s *objS3, f fixture, dir, job string) {
	s = fixtureS3(t, "incremental-rocksdb-checkpoint")
	f, jobDir := jobDirOf(t)
	jobDir = strings.TrimSuffix(jobDir, "/")
	i := strings.LastIndex(jobDir, "/")
	return s, f, jobDir[:i], jobDir[i+1:]
}

func TestLatestComplete_recorded(t *testing.T) {
	s, f, dir, job := latestSetup(t)
	r, err := LatestComplete(context.Background(), s, s.bucket, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpoint == nil || r.Checkpoint.ID != 3 || r.Checkpoint.Path != f.snapshot || !r.Checkpoint.LastModified.Equal(t0) || len(r.Skipped) != 0 || !r.Completeness.Complete() {
		t.Errorf("%+v, want chk-3", r)
	}
}

func TestLatestComplete_skipsWithReasons(t *testing.T) {
	s, f, dir, job := latestSetup(t)
	jobDir := dir + "/" + job + "/"
	s.put(jobDir+"chk-7/_metadata", f.meta[:500], t0)           // cannot be read
	s.put(jobDir+"chk-6/part", []byte("x"), t0)                 // in progress
	s.put(jobDir+"chk-5/_metadata", f.meta, t0)                 // complete
	s.put(jobDir+"chk-10/_metadata", f.meta, t0.Add(time.Hour)) // complete, newest
	r, err := LatestComplete(context.Background(), s, s.bucket, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpoint == nil || r.Checkpoint.ID != 10 || len(r.Skipped) != 0 {
		t.Fatalf("%+v, want chk-10 (numeric order)", r)
	}
	delete(s.objects, jobDir+"chk-10/_metadata")
	s.put(jobDir+"chk-10/part", []byte("x"), t0) // as if it were still being written
	r, err = LatestComplete(context.Background(), s, s.bucket, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpoint == nil || r.Checkpoint.ID != 5 || len(r.Skipped) != 3 {
		t.Fatalf("%+v, want chk-5 after skipping 10, 7 and 6", r)
	}
	for i, want := range []struct {
		id     int64
		reason string
	}{{10, "no _metadata"}, {7, "cannot be read"}, {6, "no _metadata"}} {
		if sk := r.Skipped[i]; sk.ID != want.id || !strings.Contains(sk.Reason, want.reason) {
			t.Errorf("skipped %d: %+v, want chk-%d: %q", i, sk, want.id, want.reason)
		}
	}
}

func TestLatestComplete_noneComplete(t *testing.T) {
	s, f, dir, job := latestSetup(t)
	jobDir := dir + "/" + job + "/"
	s.put(jobDir+"chk-4/_metadata", f.meta, t0)
	delete(s.objects, jobDir+"shared/635450c3-59b5-4a4b-8e33-cb642e9dbc67")
	r, err := LatestComplete(context.Background(), s, s.bucket, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpoint != nil || len(r.Skipped) != 2 {
		t.Fatalf("%+v, want none and two skipped", r)
	}
	for _, sk := range r.Skipped {
		if len(sk.Missing) != 1 || !strings.HasSuffix(sk.Missing[0], "shared/635450c3-59b5-4a4b-8e33-cb642e9dbc67") || !strings.Contains(sk.Reason, "1 of the 1 files") {
			t.Errorf("skipped %+v", sk)
		}
	}
	if _, err := LatestComplete(context.Background(), s, s.bucket, dir, "not-a-job"); err == nil {
		t.Error("an invalid job ID accepted")
	}
}

// S3Reader adds to S3API: what uses S3API still takes the reader.
var _ S3API = S3Reader(nil)
