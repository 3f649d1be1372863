package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// relocated is one snapshot of the relocation test: where it was taken
// (bucket A), the prefix its objects are copied from, and what restoring
// its copy in bucket B gave.
type relocated struct {
	format string
	path   string // s3://A/... as Flink reported it
	prefix string // key prefix in A whose objects are copied
	copy   string // the same path in B
	// what the copy's _metadata says, read from B
	rel *checkpoint.Relocation
	// the backend the snapshot was taken with, and restored with (a
	// checkpoint is in its backend's own format: Flink restores it only
	// with that backend; only a canonical savepoint switches backends)
	edit func(*flinkconf.Input)
	// the restore from B
	restored bool
	outcome  string
}

// TestRealFlink_relocation measures which snapshots real Flink 2.2.1
// restores from a copy in another bucket, the question a cross-region
// replica poses (issue 35). The repository's stateful job runs with S3
// state in bucket A (RocksDB, incremental checkpoints, retained on
// cancellation); it takes a canonical and a native savepoint, keeps its
// latest incremental checkpoint (which references files under the job's
// shared/), and a second run with the hashmap backend keeps a full
// checkpoint. Every object of each is copied to bucket B under the same key
// (S3 CopyObject, as replication would); then the originals in A are
// deleted (region A is lost: a path that still points at A would otherwise
// silently work on the one emulator) and each copy is restored in a fresh
// cluster whose execution.state-recovery.path is the copy.
//
// Measured (2026-12-01, Flink 2.2.1, this test bed, 278 s):
//
//	format                          _metadata references (read from the copy)    restore from the copy
//	canonical savepoint (RocksDB)   1 file, relative                             restores, counters continue (first counts 50)
//	native savepoint (RocksDB)      2 files, relative                            restores, counters continue (first counts 57)
//	incremental RocksDB checkpoint  2 files, absolute s3://A/…/<job>/shared/…    fails, restarting over and over:
//	                                                                             java.io.FileNotFoundException: No such file or
//	                                                                             directory: s3://A/…/<job>/shared/<uuid>
//	full hashmap checkpoint         1 file, relative (in chk-N)                  restores, counters continue (first counts 38)
//
// A checkpoint is in its backend's own format: the hashmap one is restored
// with the hashmap backend (restoring it into RocksDB fails with an
// EOFException whatever the bucket; only a canonical savepoint switches
// backends).
//
// The test asserts that the provider's rule (checkpoint.CheckRelocation:
// every file named by absolute path lies under the snapshot's own
// directory) refuses exactly the snapshots real Flink failed to restore
// from the copy, and that Flink's failure names the source bucket.
func TestRealFlink_relocation(t *testing.T) {
	a := newRealBed(t, "reloc-a-")
	ctx, s3c := context.Background(), a.ac.S3
	bucketB := "reloc-b-" + randomHex(4)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucketB)}); err != nil {
		t.Fatal(err)
	}
	role := "arn:aws:iam::000000000000:role/relocation"

	// RocksDB, incremental: two savepoints, then the latest retained checkpoint.
	conf, chkDir := realFlinkConf(t, a.bucket, "irsa")
	c, jobID := a.run(t, a.irsaJob(t, conf, role))
	if _, err := c.WaitCheckpoints(ctx, jobID, 3, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitCounts(ctx, 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	canonical, err := c.TriggerSavepoint(ctx, jobID, "", "CANONICAL", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	native, err := c.TriggerSavepoint(ctx, jobID, "", "NATIVE", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := c.CompletedCheckpoints(ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitCheckpoints(ctx, jobID, n+1, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	// Killed, not stopped: a FINISHED job discards its checkpoints even
	// when they are retained on cancellation (CheckpointProperties), a
	// killed one keeps them, as a lost region does.
	c.Stop()
	incremental := latestKept(ctx, t, a, chkDir, jobID)

	// hashmap: a full checkpoint.
	hashmap := func(in *flinkconf.Input) {
		in.State.Backend = flinkconf.BackendHashMap
		delete(in.Values, "state.incremental")
	}
	hconf, _ := realFlinkConf(t, a.bucket, "irsa", hashmap)
	hc, hjob := a.run(t, a.irsaJob(t, hconf, role))
	if _, err := hc.WaitCheckpoints(ctx, hjob, 2, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hc.WaitCounts(ctx, 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	hc.Stop()
	full := latestKept(ctx, t, a, chkDir, hjob)

	snaps := []*relocated{
		{format: "canonical savepoint (RocksDB)", path: canonical},
		{format: "native savepoint (RocksDB)", path: native},
		{format: "incremental RocksDB checkpoint", path: incremental},
		{format: "full hashmap checkpoint", path: full, edit: hashmap},
	}
	for _, s := range snaps {
		_, key, err := checkpoint.ParseS3URI(s.path)
		if err != nil {
			t.Fatal(err)
		}
		s.prefix = strings.TrimSuffix(key, "/") + "/"
		if strings.Contains(s.format, "checkpoint") {
			// A checkpoint's files are under its job's directory
			// (chk-N, shared, taskowned): replicating the state
			// prefix copies all of them.
			s.prefix = s.prefix[:strings.LastIndex(strings.TrimSuffix(s.prefix, "/"), "/")+1]
		}
		s.copy = strings.Replace(s.path, "s3://"+a.bucket+"/", "s3://"+bucketB+"/", 1)
		copied := copyPrefix(ctx, t, s3c, a.bucket, bucketB, s.prefix)
		t.Logf("%s: %s, %d objects copied to s3://%s/%s", s.format, s.path, copied, bucketB, s.prefix)
	}
	// Region A is lost.
	deleted := deletePrefix(ctx, t, s3c, a.bucket, "flink/")
	t.Logf("deleted the %d objects of s3://%s/flink/", deleted, a.bucket)

	for _, s := range snaps {
		meta, err := checkpoint.ReadMetadataAt(ctx, s3c, s.copy)
		if err != nil {
			t.Fatalf("%s: %v", s.format, err)
		}
		s.rel = checkpoint.CheckRelocation(meta, s.copy)
		s.restored, s.outcome = restoreCopy(ctx, t, a, bucketB, role, s.copy, s.edit)
	}

	var table []string
	for _, s := range snaps {
		refs := fmt.Sprintf("%d files: %d relative, %d absolute outside its directory", s.rel.Files, s.rel.Relative, len(s.rel.Outside))
		if len(s.rel.Outside) > 0 {
			refs += fmt.Sprintf(" (%d in s3://%s), e.g. %s", len(s.rel.OtherBucket), a.bucket, s.rel.Outside[0])
		}
		table = append(table, fmt.Sprintf("%-31s | %s | restored from the copy: %v | %s", s.format, refs, s.restored, s.outcome))
	}
	t.Logf("relocation table (Flink 2.2.1, copy in s3://%s, originals in s3://%s deleted):\n%s", bucketB, a.bucket, strings.Join(table, "\n"))
	if out := os.Getenv("FLINKSTATE_RELOCATION_TABLE"); out != "" {
		_ = os.WriteFile(filepath.Clean(out), []byte(strings.Join(table, "\n")+"\n"), 0o644)
	}

	for _, s := range snaps {
		if s.rel.Relocatable() != s.restored {
			t.Errorf("%s: the provider's rule says relocatable=%v, real Flink restored from the copy: %v (%s); outside: %v",
				s.format, s.rel.Relocatable(), s.restored, s.outcome, s.rel.Outside)
		}
		if !s.restored && !strings.Contains(s.outcome, a.bucket) {
			t.Errorf("%s: Flink's failure does not name the source bucket %s: %s", s.format, a.bucket, s.outcome)
		}
	}
	// What the issue and FLINK-5763 say, checked against Flink: both
	// savepoint formats restore from a copy, an incremental checkpoint does
	// not. (The full hashmap checkpoint, which the issue did not ask about,
	// restores too: its file is named relative to chk-N; the rule above
	// covers it.)
	if !snaps[0].restored || !snaps[1].restored {
		t.Errorf("a savepoint did not restore from its copy: canonical %v (%s), native %v (%s)",
			snaps[0].restored, snaps[0].outcome, snaps[1].restored, snaps[1].outcome)
	}
	if snaps[2].restored {
		t.Errorf("the incremental checkpoint restored from its copy with the originals deleted: %s", snaps[2].outcome)
	}
}

// latestKept is the newest complete checkpoint of jobID under chkDir (an
// s3:// directory) after the job was killed.
func latestKept(ctx context.Context, t *testing.T, b *realBed, chkDir, jobID string) string {
	t.Helper()
	bucket, dir, err := checkpoint.ParseS3URI(chkDir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := checkpoint.LatestComplete(ctx, b.ac.S3, bucket, dir, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint == nil {
		t.Fatalf("no complete checkpoint of job %s kept under %s (skipped: %+v)", jobID, chkDir, res.Skipped)
	}
	return res.Checkpoint.Path
}

// copyPrefix copies every object under prefix from bucket src to dst under
// the same key (CopyObject), skipping directory markers (keys ending in /,
// which S3A writes and never needs to read a file).
func copyPrefix(ctx context.Context, t *testing.T, c *s3.Client, src, dst, prefix string) int {
	t.Helper()
	n := 0
	for _, key := range listKeys(ctx, t, c, src, prefix) {
		if strings.HasSuffix(key, "/") {
			continue
		}
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(dst), Key: aws.String(key),
			CopySource: aws.String(src + "/" + key)}); err != nil {
			t.Fatalf("copying s3://%s/%s: %v", src, key, err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("nothing to copy under s3://%s/%s", src, prefix)
	}
	return n
}

func deletePrefix(ctx context.Context, t *testing.T, c *s3.Client, bucket, prefix string) int {
	t.Helper()
	keys := listKeys(ctx, t, c, bucket, prefix)
	for i := 0; i < len(keys); i += 1000 {
		var ids []types.ObjectIdentifier
		for _, k := range keys[i:min(i+1000, len(keys))] {
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
		}
		if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids}}); err != nil {
			t.Fatal(err)
		}
	}
	if left := listKeys(ctx, t, c, bucket, prefix); len(left) > 0 {
		t.Fatalf("s3://%s/%s still holds %v", bucket, prefix, left)
	}
	return len(keys)
}

func listKeys(ctx context.Context, t *testing.T, c *s3.Client, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys
}

// restoreFailure matches the first exception line of a failed restore in
// Flink's logs.
var restoreFailure = regexp.MustCompile(`(?:Caused by: |^)([\w.$]+(?:Exception|Error): .*)`)

// restoreCopy starts a fresh cluster on bucket B restoring from path and
// says whether the job's counters continued (the first count of every key
// above 1: a job without state starts at 1), or what Flink said. A restore
// Flink cannot make either fails the job at once or makes it restart over
// and over (the restart strategy retries a task that cannot read its
// state); both end the wait with the deepest cause Flink logged.
func restoreCopy(ctx context.Context, t *testing.T, a *realBed, bucketB, role, path string, edit func(*flinkconf.Input)) (bool, string) {
	t.Helper()
	var edits []func(*flinkconf.Input)
	if edit != nil {
		edits = append(edits, edit)
	}
	conf, _ := realFlinkConf(t, bucketB, "irsa", edits...)
	job := a.irsaJob(t, conf, role)
	job.RestorePath = path
	c, err := StartFlink(ctx, a.dist, a.env, job)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	var restored bool
	var first map[int]int64
	failure := ""
	_, _ = poll(ctx, 3*time.Minute, func() (bool, error) {
		first, _ = c.Counts()
		if len(first) == 4 {
			restored = true
			return true, nil
		}
		if f := restoreFailureIn(c); f != "" {
			failure = f
			return true, nil
		}
		return false, nil
	})
	switch {
	case restored:
		for k, n := range first {
			if n <= 1 {
				return false, fmt.Sprintf("the job ran without its state: key %d counted from %d", k, n)
			}
		}
		return true, fmt.Sprintf("counters continue (first counts %v)", first)
	case failure != "":
		return false, failure
	}
	return false, "neither counts nor a failure within 3m:\n" + c.LogTail(40)
}

// logStart matches the start of a log entry (the time the runner's log4j
// pattern begins with, HH:mm:ss,SSS), not a stack trace line.
var logStart = regexp.MustCompile(`^\d\d:\d\d:\d\d,\d{3} `)

// restoreFailureIn is the deepest cause of the first failure the job logged
// (the JobManager's "switched from ... to FAILED/RESTARTING" with its stack
// trace, whose last "Caused by:" is what Flink could not do), or "".
func restoreFailureIn(c *FlinkCluster) string {
	lines := c.LogLines("jobmanager.log")
	for i, l := range lines {
		if !strings.Contains(l, "to FAILED") && !strings.Contains(l, "to RESTARTING") && !strings.Contains(l, "switched from INITIALIZING to FAILED") {
			continue
		}
		deepest := ""
		for _, m := range lines[i+1:] {
			if logStart.MatchString(m) {
				break // the next log entry: the stack trace ended
			}
			if strings.HasPrefix(m, "Caused by: ") {
				deepest = strings.TrimPrefix(m, "Caused by: ")
			}
		}
		if deepest == "" {
			if m := restoreFailure.FindStringSubmatch(l); m != nil {
				deepest = m[1]
			} else {
				deepest = l
			}
		}
		return deepest
	}
	return ""
}
