package checkpoint

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func jobDirOf(t *testing.T) (f fixture, jobDir string) {
	f = loadFixture(t, "incremental-rocksdb-checkpoint")
	return f, strings.TrimSuffix(key(f.listed+"x"), "x")
}

func TestOrphans_recordedJobHasNone(t *testing.T) {
	s := fixtureS3(t, "incremental-rocksdb-checkpoint")
	_, jobDir := jobDirOf(t)
	r, err := Orphans(context.Background(), s, s.bucket, jobDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checkpoints) != 1 || r.Checkpoints[0] != 3 || r.Listed != 1 || r.Referenced != 1 || len(r.Orphans) != 0 || len(r.Unsettled) != 0 || r.Truncated {
		t.Errorf("%+v, want chk-3 read and its one shared file referenced", r)
	}
	for _, req := range s.requests {
		if strings.HasPrefix(req, "HEAD") || (strings.HasPrefix(req, "GET") && !strings.HasSuffix(req, "/_metadata")) {
			t.Errorf("request %s: Orphans reads _metadata and lists, nothing else", req)
		}
	}
}

func TestOrphans_planted(t *testing.T) {
	s := fixtureS3(t, "incremental-rocksdb-checkpoint")
	_, jobDir := jobDirOf(t)
	s.put(jobDir+"shared/planted-old", make([]byte, 123), t0.Add(-time.Hour))
	s.put(jobDir+"taskowned/planted-old", make([]byte, 7), t0)
	s.put(jobDir+"shared/planted-new", make([]byte, 50), t0.Add(time.Minute))
	r, err := Orphans(context.Background(), s, s.bucket, jobDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Keys(), " "); got != jobDir+"shared/planted-old "+jobDir+"taskowned/planted-old" || r.OrphanBytes != 130 {
		t.Errorf("orphans %s (%d bytes), want the two planted before the checkpoint (130 bytes)", got, r.OrphanBytes)
	}
	if len(r.Unsettled) != 1 || r.Unsettled[0].Key != jobDir+"shared/planted-new" || r.UnsettledBytes != 50 {
		t.Errorf("unsettled %+v, want the one written after the newest _metadata", r.Unsettled)
	}
	if r.Listed != 4 || r.Referenced != 1 || !r.NewestMetadata.Equal(t0) {
		t.Errorf("%+v", r)
	}
	if _, ok := s.objects[jobDir+"shared/planted-old"]; !ok {
		t.Error("Orphans deleted something")
	}
}

func TestOrphans_inProgressAndNoCheckpoint(t *testing.T) {
	s := fixtureS3(t, "incremental-rocksdb-checkpoint")
	_, jobDir := jobDirOf(t)
	s.put(jobDir+"chk-4/part", []byte("x"), t0)
	s.put(jobDir+"shared/planted", []byte("x"), t0.Add(-time.Hour))
	delete(s.objects, jobDir+"chk-3/_metadata")
	r, err := Orphans(context.Background(), s, s.bucket, jobDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checkpoints) != 0 || fmt.Sprint(r.InProgress) != "[4 3]" || len(r.Orphans) != 0 || len(r.Unsettled) != 2 {
		t.Errorf("%+v: without a retained checkpoint nothing is an orphan, all unsettled", r)
	}
}

func TestOrphans_unreadableMetadataRefused(t *testing.T) {
	s := fixtureS3(t, "incremental-rocksdb-checkpoint")
	f, jobDir := jobDirOf(t)
	s.put(jobDir+"chk-3/_metadata", f.meta[:len(f.meta)-1], t0)
	if _, err := Orphans(context.Background(), s, s.bucket, jobDir); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("err %v, want the truncated _metadata refused", err)
	}
	if _, err := Orphans(context.Background(), s, s.bucket, "/"); err == nil {
		t.Error("the bucket's root accepted as a job directory")
	}
}
