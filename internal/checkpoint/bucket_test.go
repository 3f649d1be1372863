package checkpoint

import (
	"context"
	"testing"
	"time"
)

// The newest completed checkpoint of a bucket is found whatever store
// (prefix) holds it; open checkpoints, savepoints and look-alikes that are
// not <job-id>/chk-N/_metadata are not checkpoints.
func TestNewestInBucket(t *testing.T) {
	keys := map[string]time.Time{}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	layout(keys, "flink/orders/checkpoints", jobA, []int{8, 9, 10}, []int{11}, 20, t0)
	layout(keys, "flink/payments/checkpoints", jobB, []int{2, 3}, []int{4}, 0, t0.Add(time.Hour))
	keys["flink/payments/savepoints/savepoint-9f3c2a-0a1b2c3d4e5f/_metadata"] = t0.Add(3 * time.Hour)
	keys["flink/x/not-a-job/chk-99/_metadata"] = t0.Add(4 * time.Hour)
	keys[jobA+"/chk-1/_metadata"] = t0 // a checkpoint directory at the bucket root
	s := newMemS3(keys)

	cp, seen, truncated, err := NewestInBucket(context.Background(), s, "b", 10000)
	if err != nil || cp == nil || truncated || seen != len(keys) {
		t.Fatalf("NewestInBucket = %v, %d keys of %d, %v, %v", cp, seen, len(keys), truncated, err)
	}
	if want := "s3://b/flink/payments/checkpoints/" + jobB + "/chk-3"; cp.Path != want || cp.JobID != jobB || cp.ID != 3 {
		t.Errorf("newest = %+v, want %s", cp, want)
	}
}

// Listing stops after maxKeys keys and says so.
func TestNewestInBucket_bounded(t *testing.T) {
	keys := map[string]time.Time{}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	layout(keys, "cp", jobA, []int{1}, nil, 2500, t0)
	s := newMemS3(keys)
	cp, seen, truncated, err := NewestInBucket(context.Background(), s, "b", 1500)
	if err != nil || !truncated || seen != 2000 {
		t.Fatalf("want truncated after 2 pages (2000 keys), got %v %d %v %v", cp, seen, truncated, err)
	}
	if cp == nil || cp.ID != 1 {
		t.Errorf("chk-1 sorts before shared/ and was read: got %+v", cp)
	}
	if len(s.requests) != 2 {
		t.Errorf("requests = %v, want 2 pages", s.requests)
	}
}

func TestNewestInBucket_empty(t *testing.T) {
	cp, seen, truncated, err := NewestInBucket(context.Background(), newMemS3(map[string]time.Time{}), "b", 10)
	if err != nil || cp != nil || truncated || seen != 0 {
		t.Fatalf("empty bucket: %v %v %v", cp, truncated, err)
	}
}

// Within a job the highest chk-N wins even when an older one's _metadata
// is newer (as Latest orders them).
func TestNewestInBucket_numericWithinJob(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	keys := map[string]time.Time{
		"cp/" + jobA + "/chk-9/_metadata":  t0.Add(time.Second),
		"cp/" + jobA + "/chk-10/_metadata": t0,
	}
	cp, _, _, err := NewestInBucket(context.Background(), newMemS3(keys), "b", 100)
	if err != nil || cp == nil || cp.ID != 10 {
		t.Fatalf("want chk-10, got %+v %v", cp, err)
	}
}
