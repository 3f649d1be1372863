package checkpoint

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A replica mid-replication: the newest savepoint has files but no
// _metadata yet, a newer checkpoint copy names the source bucket, a newer
// savepoint's _metadata arrived before one of its files; the oldest
// savepoint is whole. LatestRestorable returns the whole one and says why
// each newer one was passed over, newest first.
func TestLatestRestorable_replica(t *testing.T) {
	ctx := context.Background()
	const replica = "acme-flink-state-dr"
	s := &objS3{bucket: replica, objects: map[string]fakeObject{}, pageSize: 1000}
	sp := loadFixture(t, "canonical-savepoint")
	var spFile string
	var spSize int64
	for rel, size := range sp.objects {
		if rel != MetadataFile && rel != "" {
			spFile, spSize = rel, size
		}
	}
	base := "flink/orders"
	putSavepoint := func(name string, at time.Time, withFile, withMeta bool) {
		dir := base + "/savepoints/" + name + "/"
		if withFile {
			s.objects[dir+spFile] = fakeObject{size: spSize, modified: at}
		}
		if withMeta {
			s.objects[dir+MetadataFile] = fakeObject{data: sp.meta, size: int64(len(sp.meta)), modified: at}
		}
	}
	putSavepoint("savepoint-2d6fb8-000000000001", t0, true, true)
	putSavepoint("savepoint-2d6fb8-000000000002", t0.Add(time.Minute), false, true)
	chk := loadFixture(t, "incremental-rocksdb-checkpoint")
	_, chkKey, _ := splitObjectURI(chk.snapshot + "/" + MetadataFile)
	_, jobAndChk, _ := strings.Cut(chkKey, "/checkpoints/")
	s.objects[base+"/checkpoints/"+jobAndChk] = fakeObject{data: chk.meta, size: int64(len(chk.meta)), modified: t0.Add(2 * time.Minute)}
	putSavepoint("savepoint-2d6fb8-000000000003", t0.Add(3*time.Minute), true, false)

	res, err := LatestRestorable(ctx, s, "s3://"+replica+"/"+base+"/savepoints", "s3://"+replica+"/"+base+"/checkpoints", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "s3://" + replica + "/" + base + "/savepoints/savepoint-2d6fb8-000000000001"
	if res.Snapshot == nil || res.Snapshot.Path != want || res.Snapshot.Kind != KindSavepoint || !res.Snapshot.Time.Equal(t0) {
		t.Fatalf("snapshot %+v, want %s", res.Snapshot, want)
	}
	if res.Looked != 4 {
		t.Errorf("looked at %d snapshots, want 4", res.Looked)
	}
	var lines []string
	for _, sk := range res.Skipped {
		lines = append(lines, sk.Line())
	}
	wantLines := []string{
		"savepoint-2d6fb8-000000000003: no _metadata (in progress, not yet replicated, or abandoned)",
		"chk-3: not relocatable: 1 of the 1 files it references are named by absolute path outside its directory: s3://" + chk.snapshot[5:strings.Index(chk.snapshot[5:], "/")+5] + "/",
		"savepoint-2d6fb8-000000000002: partly arrived: 1 of the 1 files it references are missing: s3://" + replica + "/" + base + "/savepoints/savepoint-2d6fb8-000000000002/" + spFile,
	}
	if len(lines) != len(wantLines) {
		t.Fatalf("skipped:\n%s", strings.Join(lines, "\n"))
	}
	for i := range lines {
		if !strings.Contains(lines[i], wantLines[i]) {
			t.Errorf("skipped[%d] = %q\nwant it to contain %q", i, lines[i], wantLines[i])
		}
	}

	// Only checkpoints: none restores from the replica.
	res, err = LatestRestorable(ctx, s, "", "s3://"+replica+"/"+base+"/checkpoints", "")
	if err != nil || res.Snapshot != nil || len(res.Skipped) != 1 || len(res.Skipped[0].Outside) != 1 {
		t.Fatalf("checkpoints only: %v, %+v", err, res)
	}
	// A job filter that matches nothing finds nothing.
	res, err = LatestRestorable(ctx, s, "", "s3://"+replica+"/"+base+"/checkpoints", strings.Repeat("0", 32))
	if err != nil || res.Snapshot != nil || res.Looked != 0 {
		t.Fatalf("other job: %v, %+v", err, res)
	}
}

// A skipped snapshot's line names the first absolute path (or missing
// file) and how many more there are.
func TestSkippedSnapshotLine(t *testing.T) {
	c := Candidate{Kind: KindCheckpoint, Path: "s3://dr/p/job/chk-7"}
	for _, tc := range []struct {
		s    SkippedSnapshot
		want string
	}{
		{SkippedSnapshot{Candidate: c, Reason: "no _metadata"}, "s3://dr/p/job/chk-7: no _metadata"},
		{SkippedSnapshot{Candidate: c, Reason: "not relocatable", Outside: []string{"s3://a/x", "s3://a/y", "s3://a/z"}},
			"s3://dr/p/job/chk-7: not relocatable: s3://a/x (and 2 more)"},
		{SkippedSnapshot{Candidate: c, Reason: "partly arrived", Missing: []string{"s3://dr/p/job/shared/1"}},
			"s3://dr/p/job/chk-7: partly arrived: s3://dr/p/job/shared/1"},
	} {
		if got := tc.s.Line(); got != tc.want {
			t.Errorf("Line() = %q, want %q", got, tc.want)
		}
	}
}
