package testbed

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// TestRealFlink_maxParallelismRulesAreFlinks holds two of the restore
// pre-flight's rules to real Flink 2.2.1 (issue 44), beside the real
// operator's TestAccRealOperator_preflightMaxParallelism (a parallelism
// above the snapshot's max parallelism):
//   - an explicit pipeline.max-parallelism other than the one the snapshot
//     was written with: preflight.Check refuses it, and Flink refuses the
//     restore from a path (Checkpoints.loadAndValidateCheckpoint, "Max
//     parallelism mismatch between checkpoint/savepoint state and new
//     program"; the JobManager exits);
//   - job.parallelism above an explicit pipeline.max-parallelism, which
//     flinkconf refuses at validate: Flink builds no execution graph for
//     it (ExecutionJobVertex: "… is higher than the max parallelism …").
//
// It starts three Flink clusters in turn (about 3 minutes on 2 cores), so
// it runs by hand: FLINKSTATE_FLINK_RULES=1.
func TestRealFlink_maxParallelismRulesAreFlinks(t *testing.T) {
	if os.Getenv("FLINKSTATE_FLINK_RULES") == "" {
		t.Skip("holds the max-parallelism rules to real Flink (about 3 minutes): set FLINKSTATE_FLINK_RULES=1")
	}
	b := newRealBed(t, "maxpar-")
	ctx := context.Background()
	role := "arn:aws:iam::000000000000:role/maxpar"

	// A job with no explicit max parallelism writes 128
	// (KeyGroupRangeAssignment.computeDefaultMaxParallelism at parallelism 1).
	conf, chkDir := realFlinkConf(t, b.bucket, "irsa")
	c, jobID := b.run(t, b.irsaJob(t, conf, role))
	if _, err := c.WaitCheckpoints(ctx, jobID, 3, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	// Stopped first: a running job subsumes (deletes) older checkpoints.
	c.Remove()
	bucket, prefix, err := checkpoint.ParseS3URI(chkDir)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.Latest(ctx, b.ac.S3, bucket, prefix, jobID)
	if err != nil || cp == nil {
		t.Fatalf("newest checkpoint of %s: %v %v", jobID, cp, err)
	}
	meta, err := checkpoint.ReadMetadataAt(ctx, b.ac.S3, cp.Path)
	if err != nil {
		t.Fatal(err)
	}

	// 1. Restored with pipeline.max-parallelism = 8.
	eight := func(in *flinkconf.Input) { in.Extra = map[string]string{flinkconf.MaxParallelismKey: "8"} }
	fs := preflight.Check(meta, preflight.Desired{MaxParallelism: 8, Parallelism: 1, PreviousParallelism: 1, FromPath: true})
	if len(fs) == 0 || fs[0].Rule != "max-parallelism" {
		t.Fatalf("the pre-flight lets max parallelism 8 restore %s (written with 128): %+v", cp.Path, fs)
	}
	restored, outcome := restoreCopy(ctx, t, b, b.bucket, role, cp.Path, eight)
	t.Logf("%s (max parallelism 128) restored with pipeline.max-parallelism = 8: restored %v: %s", cp.Path, restored, outcome)
	// The JobManager exits at once (no job ever runs), so restoreCopy
	// reports its log's tail: Flink's words are in it.
	const mismatch = "with max parallelism 128 to new program with max parallelism 8. This indicates that the program has been changed"
	if restored || !strings.Contains(outcome, "Max parallelism mismatch between checkpoint/savepoint state and new program") ||
		!strings.Contains(outcome, mismatch) {
		t.Errorf("Flink: restored %v, %q; want the restore refused with %q", restored, firstLine(outcome), mismatch)
	}
	if !strings.Contains(fs[0].FlinkMessage, "Max parallelism mismatch between checkpoint/savepoint state and new program") ||
		!strings.Contains(fs[0].FlinkMessage, mismatch) {
		t.Errorf("the pre-flight quotes %q, not Flink's words", fs[0].FlinkMessage)
	}

	// 2. A new job at parallelism 12 with pipeline.max-parallelism = 8.
	p := int64(12)
	in := func(in *flinkconf.Input) { eight(in); in.HasJob, in.Parallelism = true, &p }
	probe := flinkconf.Input{}
	in(&probe)
	probe.FlinkVersion, probe.Identity = "2.2.1", "irsa"
	if _, findings := flinkconf.Derive(probe); !hasSummary(findings, "Parallelism above the max parallelism") {
		t.Fatalf("flinkconf lets parallelism 12 run under pipeline.max-parallelism 8: %+v", findings)
	}
	conf2, _ := realFlinkConf(t, b.bucket, "irsa", eight)
	job := b.irsaJob(t, conf2, role)
	job.Parallelism = 12
	c2, err := StartFlink(ctx, b.dist, b.env, job)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Remove()
	failure := ""
	_, _ = poll(ctx, 3*time.Minute, func() (bool, error) {
		failure = restoreFailureIn(c2)
		if failure == "" {
			for _, l := range c2.LogLines("jobmanager.log") {
				if strings.Contains(l, "is higher than the max parallelism") {
					failure = l
				}
			}
		}
		return failure != "", nil
	})
	t.Logf("a new job at parallelism 12 with pipeline.max-parallelism = 8: %s", failure)
	const higher = "parallelism (12) is higher than the max parallelism (8)"
	if !strings.Contains(failure, higher) {
		t.Errorf("Flink said %q; want %q. The JobManager's log:\n%s", failure, higher, c2.LogTail(40))
	}
}

func hasSummary(fs []flinkconf.Finding, summary string) bool {
	for _, f := range fs {
		if f.Summary == summary && f.Severity == flinkconf.Error {
			return true
		}
	}
	return false
}
