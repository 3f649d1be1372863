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
