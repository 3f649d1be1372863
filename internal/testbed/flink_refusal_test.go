package testbed

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// TestRealFlink_refusedKeyIsNamed: a configuration value real Flink cannot
// read fails the run at start with an error naming the key, not a timeout
// with a log tail. The value is one the provider refuses at plan (Flink's
// TimeUtils.parseDuration has no "mins" unit), so the test also shows the
// plan-time check and Flink agree on it.
func TestRealFlink_refusedKeyIsNamed(t *testing.T) {
	const key, bad = "execution.checkpointing.interval", "2 mins"
	conf, _ := realFlinkConf(t, "refused", "irsa")
	_, findings := flinkconf.Derive(flinkconf.Input{FlinkVersion: "2.2.1", Identity: "irsa", UpgradeMode: "savepoint",
		State:  flinkconf.State{CheckpointDir: "s3://b/p/checkpoints", Backend: "rocksdb"},
		Values: map[string]string{flinkconf.AttrCheckpointInterval: bad}})
	planRefused := slices.ContainsFunc(findings, func(f flinkconf.Finding) bool {
		return f.Severity == flinkconf.Error && slices.Equal(f.Path, []string{"state", "checkpoint_interval"})
	})
	if !planRefused {
		t.Errorf("the provider does not refuse checkpoint_interval = %q at plan: %+v", bad, findings)
	}

	env, dist := realFlink(t)
	conf[key] = bad
	ctx := context.Background()
	c, err := StartFlink(ctx, dist, env, FlinkJob{Configuration: conf, PluginJar: "flink-s3-fs-hadoop-2.2.1.jar", Parallelism: 1})
	if err == nil {
		t.Cleanup(c.Remove)
		_, err = c.RunningJob(ctx, 3*time.Minute)
	}
	if err == nil {
		t.Fatalf("Flink ran with %s: %q", key, bad)
	}
	if !strings.Contains(err.Error(), `key "`+key+`"`) || !strings.Contains(err.Error(), `value "`+bad+`"`) {
		t.Fatalf("the failure does not name the key %s and its value %q:\n%v", key, bad, err)
	}
	t.Log(err)
}
