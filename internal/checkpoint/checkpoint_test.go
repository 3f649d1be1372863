package checkpoint

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// memS3 is an in-memory bucket answering ListObjectsV2 (prefix, delimiter,
// pages of at most 1000 entries) and HeadObject, recording each request.
type memS3 struct {
	keys     []string // sorted
	modified map[string]time.Time
	requests []string
}

func newMemS3(keys map[string]time.Time) *memS3 {
	m := &memS3{modified: keys}
	for k := range keys {
		m.keys = append(m.keys, k)
	}
	sort.Strings(m.keys)
	return m
}

func (m *memS3) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	prefix, delim := aws.ToString(in.Prefix), aws.ToString(in.Delimiter)
	m.requests = append(m.requests, "LIST "+prefix)
	start := 0
	if tok := aws.ToString(in.ContinuationToken); tok != "" {
		start = sort.SearchStrings(m.keys, tok)
	}
	out := &s3.ListObjectsV2Output{}
	seen := map[string]bool{}
	n := 0
	i := sort.SearchStrings(m.keys, prefix)
	if start > i {
		i = start
	}
	for ; i < len(m.keys) && strings.HasPrefix(m.keys[i], prefix); i++ {
		if n == 1000 {
			out.IsTruncated = aws.Bool(true)
			out.NextContinuationToken = aws.String(m.keys[i])
			return out, nil
		}
		rest := m.keys[i][len(prefix):]
		if j := strings.Index(rest, delim); delim != "" && j >= 0 {
			cp := prefix + rest[:j+1]
			if !seen[cp] {
				seen[cp] = true
				out.CommonPrefixes = append(out.CommonPrefixes, s3types.CommonPrefix{Prefix: aws.String(cp)})
				n++
			}
			continue
		}
		out.Contents = append(out.Contents, s3types.Object{Key: aws.String(m.keys[i]), LastModified: aws.Time(m.modified[m.keys[i]])})
		n++
	}
	out.IsTruncated = aws.Bool(false)
	return out, nil
}

func (m *memS3) HeadObject(_ context.Context, in *s3.HeadObjectInput, _ ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	key := aws.ToString(in.Key)
	m.requests = append(m.requests, "HEAD "+key)
	t, ok := m.modified[key]
	if !ok {
		return nil, &s3types.NotFound{}
	}
	return &s3.HeadObjectOutput{LastModified: aws.Time(t)}, nil
}

const (
	jobA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	jobB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// layout builds a job directory: completed chk-N (with _metadata), open
// chk-N (without), and shared files.
func layout(keys map[string]time.Time, dir, job string, complete, open []int, shared int, at time.Time) {
	for _, id := range complete {
		keys[fmt.Sprintf("%s/%s/chk-%d/_metadata", dir, job, id)] = at.Add(time.Duration(id) * time.Second)
	}
	for _, id := range open {
		keys[fmt.Sprintf("%s/%s/chk-%d/part-0", dir, job, id)] = at
	}
	for i := 0; i < shared; i++ {
		keys[fmt.Sprintf("%s/%s/shared/%08d-sst", dir, job, i)] = at
	}
	keys[fmt.Sprintf("%s/%s/taskowned/x", dir, job)] = at
}

func TestLatest_numericOrderInProgressAndJobs(t *testing.T) {
	keys := map[string]time.Time{}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	layout(keys, "cp", jobA, []int{8, 9, 10}, []int{11}, 50, t0)
	layout(keys, "cp", jobB, []int{2, 3}, nil, 0, t0.Add(time.Hour))
	keys["cp/not-a-job/chk-99/_metadata"] = t0.Add(2 * time.Hour)
	s := newMemS3(keys)

	cp, err := Latest(context.Background(), s, "b", "cp", jobA)
	if err != nil || cp == nil {
		t.Fatalf("%v %v", cp, err)
	}
	if cp.ID != 10 || cp.Path != "s3://b/cp/"+jobA+"/chk-10" || cp.MetadataPath != cp.Path+"/_metadata" {
		t.Fatalf("job A: %+v (want chk-10: numeric order, in-progress chk-11 skipped)", cp)
	}
	cp, err = Latest(context.Background(), s, "b", "cp/", "")
	if err != nil || cp == nil || cp.JobID != jobB || cp.ID != 3 {
		t.Fatalf("any job: %+v %v (want job B's chk-3, the newest _metadata; not-a-job ignored)", cp, err)
	}
	if cp, err := Latest(context.Background(), s, "b", "elsewhere", ""); cp != nil || err != nil {
		t.Fatalf("empty dir: %+v %v", cp, err)
	}
}

func TestLatest_paginatesPast1000CheckpointDirs(t *testing.T) {
	keys := map[string]time.Time{}
	var complete []int
	for i := 1; i <= 1200; i++ {
		complete = append(complete, i)
	}
	layout(keys, "cp", jobA, complete, []int{1201}, 0, time.Now())
	s := newMemS3(keys)
	cp, err := Latest(context.Background(), s, "b", "cp", jobA)
	if err != nil || cp == nil || cp.ID != 1200 {
		t.Fatalf("%+v %v: want chk-1200", cp, err)
	}
	lists := 0
	for _, r := range s.requests {
		if strings.HasPrefix(r, "LIST") {
			lists++
		}
	}
	if lists != 2 {
		t.Fatalf("%d list requests for 1202 checkpoint dirs, want 2 pages: %v", lists, s.requests)
	}
}

// The cost does not grow with shared state files: the same requests with 0
// and 100,000 of them, at most 3 for one job with under 1000 checkpoint
// dirs, and no listing inside shared/ or taskowned/.
func TestLatest_costIndependentOfSharedFiles(t *testing.T) {
	var runs [][]string
	for _, shared := range []int{0, 100000} {
		keys := map[string]time.Time{}
		layout(keys, "cp", jobA, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, nil, shared, time.Now())
		s := newMemS3(keys)
		cp, err := Latest(context.Background(), s, "b", "cp", "")
		if err != nil || cp == nil || cp.ID != 10 {
			t.Fatalf("shared=%d: %+v %v", shared, cp, err)
		}
		for _, r := range s.requests {
			if strings.Contains(r, "/shared/") || strings.Contains(r, "/taskowned/") {
				t.Fatalf("shared=%d: listed inside state files: %s", shared, r)
			}
		}
		runs = append(runs, s.requests)
	}
	if fmt.Sprint(runs[0]) != fmt.Sprint(runs[1]) {
		t.Fatalf("requests differ with shared files:\n%v\n%v", runs[0], runs[1])
	}
	if n := len(runs[0]); n > 3 {
		t.Fatalf("%d requests for one job with 10 checkpoint dirs, want at most 3: %v", n, runs[0])
	}
}

func TestParseS3URI(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b/flink/orders/checkpoints":   "b|flink/orders/checkpoints",
		"s3a://b/flink/orders/checkpoints/": "b|flink/orders/checkpoints",
	} {
		b, p, err := ParseS3URI(in)
		if err != nil || b+"|"+p != want {
			t.Errorf("%s: %s %s %v", in, b, p, err)
		}
	}
	for _, bad := range []string{"s3://b", "s3://b/", "/tmp/x", "gs://b/x"} {
		if _, _, err := ParseS3URI(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestMetadataURI(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b/p/checkpoints/j/chk-7":              "s3://b/p/checkpoints/j/chk-7/_metadata",
		"s3://b/p/checkpoints/j/chk-7/":             "s3://b/p/checkpoints/j/chk-7/_metadata",
		"s3://b/p/savepoints/savepoint-1/_metadata": "s3://b/p/savepoints/savepoint-1/_metadata",
	} {
		if got := MetadataURI(in); got != want {
			t.Errorf("MetadataURI(%q) = %q, want %q", in, got, want)
		}
	}
}
