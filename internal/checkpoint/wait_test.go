package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

const waitJob = "0123456789abcdef0123456789abcdef"

func waitBucket(t *testing.T) (*objS3, []byte) {
	t.Helper()
	meta := loadFixture(t, "incremental-rocksdb-checkpoint").meta
	s := &objS3{bucket: "b", objects: map[string]fakeObject{}, pageSize: 1000}
	s.put("cp/"+waitJob+"/chk-3/_metadata", meta, t0)
	return s, meta
}

// A checkpoint at or below the baseline is the old spec's: the wait goes on
// until one above it completed, and returns it with what its _metadata says.
func TestWaitNew_waitsForACheckpointAboveTheBaseline(t *testing.T) {
	s, meta := waitBucket(t)
	polls := 0
	cp, md, err := WaitNew(context.Background(), s, NewCheckpoint{Bucket: "b", Dir: "cp", JobID: waitJob, After: 3, Every: time.Millisecond, CallTimeout: time.Second},
		func(context.Context) error {
			if polls++; polls == 2 {
				s.put("cp/"+waitJob+"/chk-5/", nil, t0) // in progress: no _metadata yet
			}
			if polls == 4 {
				s.put("cp/"+waitJob+"/chk-4/_metadata", meta, t0.Add(time.Minute))
			}
			return nil
		})
	if err != nil || cp == nil || cp.ID != 4 || md == nil || len(md.Operators) == 0 {
		t.Fatalf("%+v %v, %v", cp, md, err)
	}
}

// With no new checkpoint the wait ends with the context, naming the newest
// one it saw.
func TestWaitNew_endsNamingTheNewestSeen(t *testing.T) {
	s, _ := waitBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, _, err := WaitNew(ctx, s, NewCheckpoint{Bucket: "b", Dir: "cp", JobID: waitJob, After: 3, Every: time.Millisecond, CallTimeout: time.Second}, nil)
	if !errors.Is(err, ErrNoNewCheckpoint) || !strings.Contains(err.Error(), "chk-3 (id 3, the change's baseline 3)") {
		t.Fatalf("%v", err)
	}
}

// still's error (a job that failed) ends the wait at once.
func TestWaitNew_stillEndsTheWait(t *testing.T) {
	s, _ := waitBucket(t)
	failed := errors.New("the job FAILED")
	_, _, err := WaitNew(context.Background(), s, NewCheckpoint{Bucket: "b", Dir: "cp", JobID: waitJob, After: 3, Every: time.Millisecond, CallTimeout: time.Second},
		func(context.Context) error { return failed })
	if !errors.Is(err, failed) {
		t.Fatalf("%v", err)
	}
}
