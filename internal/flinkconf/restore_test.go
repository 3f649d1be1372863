package flinkconf

import "testing"

func TestDerive_retentionDefault(t *testing.T) {
	for mode, want := range map[string]string{"last-state": "RETAIN_ON_CANCELLATION", "savepoint": "RETAIN_ON_CANCELLATION", "stateless": "", "": ""} {
		in := seedInput()
		in.UpgradeMode, in.State.ExternalizedRetention = mode, ""
		cfg, _ := Derive(in)
		if got := cfg[RetentionKey]; got != want {
			t.Errorf("upgrade mode %q: %s = %q, want %q", mode, RetentionKey, got, want)
		}
	}
	in := seedInput()
	in.State.ExternalizedRetention = "DELETE_ON_CANCELLATION"
	if cfg, _ := Derive(in); cfg[RetentionKey] != "DELETE_ON_CANCELLATION" {
		t.Errorf("an explicit retention is overridden: %q", cfg[RetentionKey])
	}
}

func TestDerive_claimMode(t *testing.T) {
	in := seedInput()
	in.Values["job.claim_mode"] = "CLAIM"
	cfg, fs := Derive(in)
	if cfg[ClaimModeKey] != "CLAIM" || len(findings(fs, Error)) != 0 {
		t.Fatalf("%s = %q, errors %v", ClaimModeKey, cfg[ClaimModeKey], findings(fs, Error))
	}
	in = seedInput()
	in.Extra = map[string]string{ClaimModeKey: "CLAIM"}
	if _, fs := Derive(in); !hasFinding(fs, Error, "flink_configuration."+ClaimModeKey, "job.claim_mode") {
		t.Errorf("claim mode through flink_configuration not refused: %v", fs)
	}
}

// Checkpoint interval: warned for savepoint mode when none is set (Flink
// checkpoints only with an interval, and the operator sets one for
// last-state only), never for last-state (the operator's 5 min), nor when
// the jar is known to enable checkpointing in code, nor with an interval.
func TestDerive_noCheckpointInterval(t *testing.T) {
	const summary = "No checkpoint interval"
	for _, c := range []struct {
		name, mode, interval, jar string
		warn                      bool
	}{
		{"savepoint without interval", UpgradeSavepoint, "", "local:///opt/flink/usrlib/orders.jar", true},
		{"savepoint with interval", UpgradeSavepoint, "60s", "local:///opt/flink/usrlib/orders.jar", false},
		{"savepoint, job sets its own", UpgradeSavepoint, "", "local:///opt/flink/examples/streaming/StateMachineExample.jar", false},
		{"last-state without interval", UpgradeLastState, "", "local:///opt/flink/usrlib/orders.jar", false},
		{"stateless without interval", UpgradeStateless, "", "local:///opt/flink/usrlib/orders.jar", false},
	} {
		in := seedInput()
		in.UpgradeMode, in.JarURI, in.HasJob, in.Parallelism = c.mode, c.jar, true, i(2)
		in.Extra = map[string]string{MaxParallelismKey: "128"}
		if c.interval == "" {
			delete(in.Values, AttrCheckpointInterval)
			delete(in.Values, AttrMinPause)
		} else {
			in.Values[AttrCheckpointInterval] = c.interval
		}
		_, fs := Derive(in)
		got := hasFinding(fs, Warning, "state.checkpoint_interval", summary)
		if got != c.warn {
			t.Errorf("%s: warning %v, want %v: %+v", c.name, got, c.warn, fs)
			continue
		}
		if got {
			for _, want := range []string{"Set state.checkpoint_interval", "enables checkpointing", "can be ignored", "FlinkConfigBuilder.applyJobConfig"} {
				if !hasFinding(fs, Warning, "state.checkpoint_interval", want) {
					t.Errorf("%s: the warning does not say %q", c.name, want)
				}
			}
		}
	}
}
