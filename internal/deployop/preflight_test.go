package deployop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

const preflightJob = "0123456789abcdef0123456789abcdef"

// checkpointedBucket is a bucket holding checkpoint 3 of job under cp/: the
// fixture whose keyed operator has max parallelism 128.
func checkpointedBucket(t *testing.T) *resS3 {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join("..", "checkpoint", "testdata", "incremental-rocksdb-checkpoint", "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	return &resS3{bucket: "b", objects: map[string][]byte{"cp/" + preflightJob + "/chk-3/_metadata": meta, "sp/savepoint-1/_metadata": meta}}
}

// preflightEnv reads s; a nil s is an S3 client that cannot be set up.
func preflightEnv(s *resS3) Env {
	return Env{
		S3: func(context.Context) (checkpoint.S3Reader, error) {
			if s == nil {
				return nil, errors.New("no AWS credentials")
			}
			return s, nil
		},
		Bound: func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, d)
		},
		Words: func(_ context.Context, err error) string { return "worded: " + err.Error() },
	}
}

var preflightStore = map[string]string{"execution.checkpointing.dir": "s3://b/cp", "state.backend.type": "rocksdb"}

// runningJob is a running last-state job of parallelism p: a new p is a
// change of the job (flinkdeploy.JobChanged).
func runningJob(p int64) flinkdeploy.Desired {
	spec := &flinkdeploy.Spec{Job: &flinkdeploy.Job{UpgradeMode: flinkconf.UpgradeLastState, Fields: map[string]any{"parallelism": p}}}
	return flinkdeploy.Desired{Spec: spec, HasJob: true, UpgradeMode: flinkconf.UpgradeLastState, FlinkVersion: "2.2.1"}
}

// findingLines lists the findings as "<severity> <summary>: <detail>".
func findingLines(fs []flinkconf.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		sev := "warning"
		if f.Severity == flinkconf.Error {
			sev = "error"
		}
		b.WriteString(sev + " " + f.Summary + ": " + f.Detail + "\n")
	}
	return b.String()
}

// An upgrade of a running job is checked against its newest completed
// checkpoint; one whose checkpoint cannot be read goes on with a warning;
// one that restores nothing from it is not checked, and reads nothing.
func TestPreflightUpgrade(t *testing.T) {
	u := preflight.Upgrade{Subject: "FlinkDeployment ns/orders", Prior: runningJob(1), Planned: runningJob(200), PriorConfig: preflightStore, PlannedConfig: preflightStore,
		PreviousParallelism: 1, Parallelism: 200, JobID: preflightJob}
	s := checkpointedBucket(t)
	got := findingLines(preflightEnv(s).PreflightUpgrade(context.Background(), u, time.Minute))
	if !strings.HasPrefix(got, "error ") || !strings.Contains(got, "it would restore s3://b/cp/"+preflightJob+"/chk-3 (the newest completed checkpoint of job "+preflightJob) {
		t.Errorf("refusal: %s", got)
	}
	got = findingLines(preflightEnv(nil).PreflightUpgrade(context.Background(), u, time.Minute))
	if !strings.HasPrefix(got, "warning Restore pre-flight skipped") || !strings.Contains(got, ": no AWS credentials. The update goes on.") {
		t.Errorf("no client: %s", got)
	}
	for name, v := range map[string]func(*preflight.Upgrade){
		"a restore from a path":     func(u *preflight.Upgrade) { u.Planned.RestorePath = "s3://b/sp/savepoint-1" },
		"no checkpoint directory":   func(u *preflight.Upgrade) { u.PriorConfig = map[string]string{} },
		"a configuration unknown":   func(u *preflight.Upgrade) { u.PlannedConfig = nil },
		"no job id":                 func(u *preflight.Upgrade) { u.JobID = "" },
		"a job that is not running": func(u *preflight.Upgrade) { u.Prior.JobState = "suspended" },
		"no completed checkpoint":   func(u *preflight.Upgrade) { u.JobID = strings.Repeat("f", 32) },
	} {
		c, calls := u, s.calls
		v(&c)
		if fs := preflightEnv(s).PreflightUpgrade(context.Background(), c, time.Minute); fs != nil {
			t.Errorf("%s: %s", name, findingLines(fs))
		}
		if name != "no completed checkpoint" && s.calls != calls {
			t.Errorf("%s: %d S3 calls", name, s.calls-calls)
		}
	}
}

// A restore from a path is checked against its _metadata: a refusal on
// job.initial_savepoint_path; an unreadable one skips with a warning
// worded by Words; without a client or a configuration nothing is said.
func TestPreflightPath(t *testing.T) {
	p := preflight.Path{Subject: "FlinkDeployment ns/orders", Target: "s3://b/sp/savepoint-1", What: "job.initial_savepoint_path", Create: true,
		Config: preflightStore, Parallelism: 200, FlinkVersion: "2.2.1"}
	fs := preflightEnv(checkpointedBucket(t)).PreflightPath(context.Background(), p, time.Minute)
	if len(fs) == 0 || fs[0].Severity != flinkconf.Error || strings.Join(fs[0].Path, ".") != "job.initial_savepoint_path" ||
		!strings.Contains(fs[0].Detail, "FlinkDeployment ns/orders was not created: it would restore s3://b/sp/savepoint-1") {
		t.Errorf("refusal: %+v", fs)
	}
	p.Target = "s3://b/sp/savepoint-2"
	got := findingLines(preflightEnv(checkpointedBucket(t)).PreflightPath(context.Background(), p, time.Minute))
	if !strings.HasPrefix(got, "warning Restore pre-flight skipped") || !strings.Contains(got, "metadata version): worded: reading s3://b/sp/savepoint-2/_metadata: NoSuchKey") {
		t.Errorf("unreadable: %s", got)
	}
	if fs := preflightEnv(nil).PreflightPath(context.Background(), p, time.Minute); fs != nil {
		t.Errorf("no client: %s", findingLines(fs))
	}
	p.Config = nil
	if fs := preflightEnv(checkpointedBucket(t)).PreflightPath(context.Background(), p, time.Minute); fs != nil {
		t.Errorf("no configuration: %s", findingLines(fs))
	}
}

// A handover is checked against the running job's newest checkpoint; an
// unreadable one skips with a warning saying what checks instead.
func TestPreflightHandover(t *testing.T) {
	h := preflight.Replacement("FlinkDeployment ns/orders")
	h.PriorConfig, h.PlannedConfig, h.Parallelism, h.FlinkVersion = preflightStore, preflightStore, 200, "2.2.1"
	got := findingLines(preflightEnv(checkpointedBucket(t)).PreflightHandover(context.Background(), h, preflightJob, time.Minute))
	if !strings.HasPrefix(got, "error ") || !strings.Contains(got, "FlinkDeployment ns/orders is replaced: its job would be stopped with a final "+
		"savepoint and the new deployment started from it. Read from s3://b/cp/"+preflightJob+"/chk-3") {
		t.Errorf("refusal: %s", got)
	}
	got = findingLines(preflightEnv(nil).PreflightHandover(context.Background(), h, preflightJob, time.Minute))
	if !strings.HasPrefix(got, "warning Restore pre-flight skipped") || !strings.Contains(got, "no AWS credentials. The create checks the savepoint itself.") {
		t.Errorf("no client: %s", got)
	}
	h.Parallelism = 2
	if fs := preflightEnv(checkpointedBucket(t)).PreflightHandover(context.Background(), h, preflightJob, time.Minute); fs != nil {
		t.Errorf("within max parallelism: %s", findingLines(fs))
	}
	h.PlannedConfig = nil
	if fs := preflightEnv(nil).PreflightHandover(context.Background(), h, preflightJob, time.Minute); fs != nil {
		t.Errorf("no configuration: %s", findingLines(fs))
	}
}
