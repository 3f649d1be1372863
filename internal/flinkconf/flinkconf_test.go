package flinkconf

import (
	"strings"
	"testing"
	"time"
)

func b(v bool) *bool   { return &v }
func i(v int64) *int64 { return &v }

// seedInput is the seed's FlinkDeployment, as provider inputs.
func seedInput() Input {
	return Input{
		FlinkVersion: "2.2.1",
		Identity:     "irsa",
		UpgradeMode:  "last-state",
		State: State{
			CheckpointDir:         "s3://bucket/flink-state-demo/checkpoints",
			SavepointDir:          "s3://bucket/flink-state-demo/savepoints",
			HADir:                 "s3://bucket/flink-state-demo/ha",
			Backend:               "rocksdb",
			ExternalizedRetention: "RETAIN_ON_CANCELLATION",
		},
		Values: map[string]string{
			"task_manager.task_slots":   "2",
			"state.incremental":         "true",
			"state.checkpoint_interval": "2 s",
			"state.min_pause":           "30 s",
			"state.timeout":             "10 min",
			"state.mode":                "EXACTLY_ONCE",
			"state.num_retained":        "3",
		},
	}
}

func findings(fs []Finding, sev Severity) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity == sev {
			out = append(out, f)
		}
	}
	return out
}

func hasFinding(fs []Finding, sev Severity, path string, text string) bool {
	for _, f := range fs {
		if f.Severity == sev && strings.Join(f.Path, ".") == path && strings.Contains(f.Summary+" "+f.Detail, text) {
			return true
		}
	}
	return false
}

// The seed's flinkConfiguration, key by key.
func TestDerive_seedKeys(t *testing.T) {
	cfg, fs := Derive(seedInput())
	if errs := findings(fs, Error); len(errs) > 0 {
		t.Fatalf("errors: %+v", errs)
	}
	want := map[string]string{
		"taskmanager.numberOfTaskSlots":                             "2",
		"state.backend.type":                                        "rocksdb",
		"state.backend.rocksdb.localdir":                            "/opt/flink/state",
		"execution.checkpointing.storage":                           "filesystem",
		"execution.checkpointing.dir":                               "s3://bucket/flink-state-demo/checkpoints",
		"execution.checkpointing.savepoint-dir":                     "s3://bucket/flink-state-demo/savepoints",
		"execution.checkpointing.interval":                          "2 s",
		"execution.checkpointing.mode":                              "EXACTLY_ONCE",
		"execution.checkpointing.timeout":                           "10 min",
		"execution.checkpointing.min-pause":                         "30 s",
		"execution.checkpointing.incremental":                       "true",
		"execution.checkpointing.num-retained":                      "3",
		"execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
		"high-availability.type":                                    "org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory",
		"high-availability.storageDir":                              "s3://bucket/flink-state-demo/ha",
		"fs.s3a.aws.credentials.provider":                           "com.amazonaws.auth.WebIdentityTokenCredentialsProvider",
	}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("%s = %q, want %q", k, cfg[k], v)
		}
	}
	if len(cfg) != len(want) {
		t.Errorf("%d keys, want %d: %v", len(cfg), len(want), cfg)
	}
}

func TestDerive_identity(t *testing.T) {
	in := seedInput()
	in.Identity = "pod_identity"
	cfg, fs := Derive(in)
	if cfg["fs.s3a.aws.credentials.provider"] != "com.amazonaws.auth.DefaultAWSCredentialsProviderChain" {
		t.Fatalf("pod identity provider %q", cfg["fs.s3a.aws.credentials.provider"])
	}
	if !hasFinding(fs, Warning, "flink_version", "1.12.746") {
		t.Errorf("no Pod Identity SDK note in %+v", fs)
	}
	in.Identity = "keys"
	if _, fs := Derive(in); !hasFinding(fs, Error, "identity", "irsa or pod_identity") {
		t.Errorf("bad identity accepted: %+v", fs)
	}
}

// Unset identity writes no credentials class, and is no error: an adopted
// job keeps the credentials it has, a new one uses S3A's default chain.
func TestDerive_identityUnset(t *testing.T) {
	in := seedInput()
	in.Identity = ""
	cfg, fs := Derive(in)
	if v, ok := cfg[CredentialsProviderKey]; ok {
		t.Errorf("%s = %q written without identity", CredentialsProviderKey, v)
	}
	for _, f := range fs {
		if strings.Join(f.Path, ".") == "identity" {
			t.Errorf("finding about identity: %+v", f)
		}
	}
}

// ISO-8601 durations, as Flink 2.1+ reads them (java.time.Duration.parse,
// negative refused).
func TestParseDuration_ISO8601(t *testing.T) {
	for s, want := range map[string]time.Duration{"PT1M": time.Minute, "pt1m": time.Minute, " PT30S ": 30 * time.Second,
		"PT0.5S": 500 * time.Millisecond, "PT0,25S": 250 * time.Millisecond, "P1DT2H": 26 * time.Hour, "P2D": 48 * time.Hour,
		"PT1H-30M": 30 * time.Minute, "+PT10S": 10 * time.Second, "-PT-10S": 10 * time.Second, "PT-0.5S": 0} {
		got, err := ParseDuration(s)
		if s == "PT-0.5S" {
			if err == nil {
				t.Errorf("%q (negative) accepted as %v", s, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"P", "PT", "P1DT", "PT1.5M", "PT1S2M", "-PT1M", "P1W", "P1Y", "PT0.1234567891S", "PT9999999999999H"} {
		if d, err := ParseDuration(bad); err == nil {
			t.Errorf("%q accepted as %v", bad, d)
		}
	}
	if !Equivalent("execution.checkpointing.interval", "PT1M", "60 s") {
		t.Error("PT1M and 60 s are not equivalent")
	}
}

// An ISO-8601 duration is written as it is for Flink 2.1 and later, and
// refused, naming the attribute, for 1.20 and 2.0, which cannot read it.
func TestDerive_isoDurationsByVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{{"1.20.5", false}, {"2.0.2", false}, {"2.1.0", true}, {"2.2.1", true}} {
		in := seedInput()
		in.FlinkVersion, in.Image = c.version, ""
		in.Values["state.checkpoint_interval"] = "PT1M"
		in.Values["state.timeout"] = "PT10M"
		cfg, fs := Derive(in)
		refused := hasFinding(fs, Error, "state.checkpoint_interval", "ISO-8601") && hasFinding(fs, Error, "state.timeout", "2.1.0")
		if refused == c.ok {
			t.Errorf("Flink %s: refused %v, want %v: %+v", c.version, refused, !c.ok, findings(fs, Error))
		}
		if c.ok && cfg["execution.checkpointing.interval"] != "PT1M" {
			t.Errorf("Flink %s: interval written as %q", c.version, cfg["execution.checkpointing.interval"])
		}
	}
}

func TestDerive_checks(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Input)
		sev    Severity
		path   string
		text   string
	}{
		{"min pause longer than interval", func(in *Input) {}, Warning, "state.min_pause", "longer than checkpoint_interval"},
		{"sdk v1 end of support", func(in *Input) {}, Warning, "flink_version", "2025-12-31"},
		{"forst experimental", func(in *Input) { in.State.Backend = "forst" }, Warning, "state.backend", "experimental"},
		{"unknown backend", func(in *Input) { in.State.Backend = "memory" }, Error, "state.backend", "rocksdb, hashmap or forst"},
		{"version too new", func(in *Input) { in.FlinkVersion = "2.3.0" }, Error, "flink_version", "1.13.x, 1.14.x"},
		{"version not full", func(in *Input) { in.FlinkVersion = "2.2" }, Error, "flink_version", "full Flink version"},
		// The operator allows last-state without HA (DefaultValidator has no such rule): said, not refused.
		{"last-state without HA", func(in *Input) { in.HighAvailability = b(false) }, Warning, "high_availability", "cannot recover a lost JobManager"},
		{"savepoint without HA dir", func(in *Input) { in.UpgradeMode = "savepoint"; in.State.HADir = "" }, Warning, "high_availability", "no HA directory"},
		{"delete on cancellation, last-state", func(in *Input) { in.State.ExternalizedRetention = "DELETE_ON_CANCELLATION" }, Error, "state.externalized_retention", "on destroy"},
		{"delete on cancellation, savepoint", func(in *Input) {
			in.UpgradeMode = "savepoint"
			in.State.ExternalizedRetention = "DELETE_ON_CANCELLATION"
		}, Error, "state.externalized_retention", "savepoint redeploy"},
		{"delete on cancellation, stateless", func(in *Input) {
			in.UpgradeMode = "stateless"
			in.State.ExternalizedRetention = "DELETE_ON_CANCELLATION"
		}, Warning, "state.externalized_retention", "no checkpoint is left"},
		{"job without parallelism", func(in *Input) { in.HasJob = true }, Error, "job.parallelism", "larger than 0"},
		{"job parallelism 0", func(in *Input) { in.HasJob, in.Parallelism = true, i(0) }, Error, "job.parallelism", "larger than 0"},
		{"forbidden key", func(in *Input) { in.Extra = map[string]string{"kubernetes.cluster-id": "x"} }, Error, "flink_configuration.kubernetes.cluster-id", "Forbidden Flink config key"},
		{"rollback without HA", func(in *Input) {
			in.UpgradeMode, in.State.HADir = "stateless", ""
			in.Extra = map[string]string{"kubernetes.operator.deployment.rollback.enabled": "TRUE"}
		}, Error, "flink_configuration.kubernetes.operator.deployment.rollback.enabled", "HA must be enabled for rollback"},
		{"health check without recovery", func(in *Input) {
			in.Extra = map[string]string{"kubernetes.operator.cluster.health-check.enabled": "true", "kubernetes.operator.jm-deployment-recovery.enabled": "false"}
		}, Error, "flink_configuration.kubernetes.operator.cluster.health-check.enabled", "Deployment recovery"},
		{"periodic savepoints without dir", func(in *Input) {
			in.HasJob, in.State.SavepointDir = true, ""
			in.Extra = map[string]string{"kubernetes.operator.periodic.savepoint.interval": ""}
		}, Error, "flink_configuration.kubernetes.operator.periodic.savepoint.interval", "Periodic savepoints cannot be enabled"},
		{"savepoint upgrades without checkpoints", func(in *Input) { in.UpgradeMode = "savepoint"; in.State.CheckpointDir = "" }, Error, "state.checkpoint_dir", "Checkpoint directory must be defined"},
		{"last-state without checkpoints", func(in *Input) { in.State.CheckpointDir = "" }, Error, "state.checkpoint_dir", "latest retained checkpoint"},
		{"last-state without retention", func(in *Input) { in.State.ExternalizedRetention = "NO_EXTERNALIZED_CHECKPOINTS" }, Error, "state.externalized_retention", "retained"},
		{"HA without storage dir", func(in *Input) { in.State.HADir = "" }, Error, "state.ha_dir", "storageDir"},
		{"savepoint upgrades without dir", func(in *Input) { in.UpgradeMode = "savepoint"; in.State.SavepointDir = "" }, Error, "state.savepoint_dir", "savepoint"},
		{"bad duration", func(in *Input) { in.Values["state.checkpoint_interval"] = "often" }, Error, "state.checkpoint_interval", "not a duration"},
		{"bad unit", func(in *Input) { in.Values["state.timeout"] = "10 fortnights" }, Error, "state.timeout", "unknown unit"},
		{"not s3", func(in *Input) { in.State.CheckpointDir = "file:///tmp/cp" }, Error, "state.checkpoint_dir", "s3://"},
		{"num retained 0", func(in *Input) { in.Values["state.num_retained"] = "0" }, Error, "state.num_retained", "at least 1"},
		{"managed key in extra", func(in *Input) {
			in.Extra = map[string]string{"execution.checkpointing.interval": "5s"}
		}, Error, "flink_configuration.execution.checkpointing.interval", "state.checkpoint_interval"},
		{"relative local dir", func(in *Input) { in.State.LocalDir = "state" }, Error, "state.local_dir", "absolute"},
		{"forst savepoint upgrades in the default format", func(in *Input) {
			in.HasJob, in.UpgradeMode, in.State.Backend = true, "savepoint", "forst"
		}, Error, "flink_configuration.kubernetes.operator.savepoint.format.type", `every upgrade (upgrade_mode = "savepoint")`},
		{"forst savepoint upgrades in CANONICAL", func(in *Input) {
			in.HasJob, in.UpgradeMode, in.State.Backend = true, "savepoint", "forst"
			in.Extra = map[string]string{"kubernetes.operator.savepoint.format.type": "CANONICAL"}
		}, Error, "flink_configuration.kubernetes.operator.savepoint.format.type", `= "NATIVE"`},
		{"forst periodic savepoints", func(in *Input) {
			in.HasJob, in.State.Backend = true, "forst"
			in.Extra = map[string]string{"kubernetes.operator.periodic.savepoint.interval": "1h"}
		}, Error, "flink_configuration.kubernetes.operator.savepoint.format.type", "every periodic savepoint"},
		{"forst last-state", func(in *Input) { in.HasJob, in.State.Backend = true, "forst" }, Warning, "flink_configuration.kubernetes.operator.savepoint.format.type", "Flink version upgrade"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := seedInput()
			tc.change(&in)
			_, fs := Derive(in)
			if !hasFinding(fs, tc.sev, tc.path, tc.text) {
				t.Errorf("want %v at %s mentioning %q, got %+v", tc.sev, tc.path, tc.text, fs)
			}
		})
	}
}

func TestDerive_defaultsAndExtras(t *testing.T) {
	in := seedInput()
	in.UpgradeMode = "stateless"
	in.State.HADir = ""
	delete(in.Values, "state.min_pause")
	in.Extra = map[string]string{"metrics.reporters": "prom"}
	cfg, fs := Derive(in)
	if len(findings(fs, Error)) > 0 {
		t.Fatalf("errors: %+v", fs)
	}
	if _, ok := cfg["high-availability.type"]; ok {
		t.Error("HA on by default without last-state")
	}
	if cfg["metrics.reporters"] != "prom" {
		t.Error("extra key dropped")
	}
	in.State.Backend = "hashmap"
	cfg, _ = Derive(in)
	if _, ok := cfg["state.backend.rocksdb.localdir"]; ok {
		t.Error("a local dir for the heap backend")
	}
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"60s": time.Minute, "2 s": 2 * time.Second, "10 min": 10 * time.Minute,
		"500": 500 * time.Millisecond, "500 ms": 500 * time.Millisecond, "1h": time.Hour, "1 d": 24 * time.Hour,
		"2 MIN": 2 * time.Minute, "3 minutes": 3 * time.Minute, "500 µs": 500 * time.Microsecond, "7 nanos": 7 * time.Nanosecond} {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	// Flink's TimeUtils has no "mins" (its singular labels have no plural).
	for _, bad := range []string{"", "s", "1.5s", "-1s", "10 parsecs", "2 mins", "2 hrs"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidMemory(t *testing.T) {
	for _, ok := range []string{"2048m", "2g", "1024 mb", "2Gi", "4096"} {
		if !ValidMemory(ok) {
			t.Errorf("%q rejected", ok)
		}
	}
	// The operator 1.15.0 refuses decimals (ParseResourceMemory).
	for _, bad := range []string{"", "lots", "2 gigs", "-1g", "1.5g"} {
		if ValidMemory(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestVersion(t *testing.T) {
	v, err := ParseVersion("2.2.1")
	if err != nil || v.OperatorEnum() != "v2_2" || v.S3PluginJar() != "flink-s3-fs-hadoop-2.2.1.jar" {
		t.Fatalf("%v %v", v, err)
	}
	if v, err := ParseVersion("1.20.3"); err != nil || v.OperatorEnum() != "v1_20" {
		t.Fatalf("%v %v", v, err)
	}
}

func TestPodTemplate_addsAndMerges(t *testing.T) {
	user := `
metadata:
  labels:
    team: data
spec:
  containers:
  - name: flink-main-container
    env:
    - name: TZ
      value: UTC
  - name: sidecar
    image: busybox
`
	pod, fs := PodTemplate(user, seedInput())
	if len(fs) > 0 {
		t.Fatalf("findings %+v", fs)
	}
	spec := pod["spec"].(map[string]any)
	if spec["securityContext"].(map[string]any)["fsGroup"] != int64(9999) {
		t.Errorf("fsGroup %v", spec["securityContext"])
	}
	cs := spec["containers"].([]any)
	if len(cs) != 2 {
		t.Fatalf("containers %v", cs)
	}
	main := cs[0].(map[string]any)
	env := main["env"].([]any)
	if len(env) != 2 || env[1].(map[string]any)["value"] != "flink-s3-fs-hadoop-2.2.1.jar" || env[0].(map[string]any)["name"] != "TZ" {
		t.Errorf("env %v", env)
	}
	mounts := main["volumeMounts"].([]any)
	if mounts[0].(map[string]any)["mountPath"] != "/opt/flink/state" {
		t.Errorf("mounts %v", mounts)
	}
	vols := spec["volumes"].([]any)
	if vols[0].(map[string]any)["name"] != LocalVolumeName || vols[0].(map[string]any)["emptyDir"] == nil {
		t.Errorf("volumes %v", vols)
	}
	if pod["metadata"].(map[string]any)["labels"].(map[string]any)["team"] != "data" {
		t.Error("user metadata lost")
	}
}

func TestPodTemplate_userOverridesAndConflicts(t *testing.T) {
	// The user's own fsGroup, plugin list and volume at the local dir are kept.
	pod, fs := PodTemplate(`
spec:
  securityContext:
    fsGroup: 1000
  containers:
  - name: flink-main-container
    env:
    - name: ENABLE_BUILT_IN_PLUGINS
      value: flink-s3-fs-presto-2.2.1.jar;flink-s3-fs-hadoop-2.2.1.jar
    volumeMounts:
    - name: nvme
      mountPath: /opt/flink/state
  volumes:
  - name: nvme
    hostPath:
      path: /mnt/nvme
`, seedInput())
	if len(fs) > 0 {
		t.Fatalf("findings %+v", fs)
	}
	spec := pod["spec"].(map[string]any)
	if spec["securityContext"].(map[string]any)["fsGroup"] != float64(1000) {
		t.Errorf("fsGroup override lost: %v", spec["securityContext"])
	}
	if n := len(spec["volumes"].([]any)); n != 1 {
		t.Errorf("an emptyDir was added beside the user's volume: %v", spec["volumes"])
	}
	// A plugin list without the S3 plugin is a conflict.
	_, fs = PodTemplate(`
spec:
  containers:
  - name: flink-main-container
    env:
    - name: ENABLE_BUILT_IN_PLUGINS
      value: flink-gs-fs-hadoop-2.2.1.jar
`, seedInput())
	if !hasFinding(fs, Error, "pod_template", "lacks flink-s3-fs-hadoop-2.2.1.jar") {
		t.Errorf("plugin conflict not reported: %+v", fs)
	}
	_, fs = PodTemplate("spec: [unclosed", seedInput())
	if !hasFinding(fs, Error, "pod_template", "not valid YAML") {
		t.Errorf("bad YAML not reported: %+v", fs)
	}
	_, fs = PodTemplate("kind: Deployment", seedInput())
	if !hasFinding(fs, Error, "pod_template", "kind: Pod") {
		t.Errorf("wrong kind not reported: %+v", fs)
	}
}

// Flink 1.20.0's S3 plugin bundles an AWS SDK older than EKS Pod Identity
// needs: refused at plan for pod_identity, with the way out; IRSA and
// 1.20.1 are fine.
func TestDerive_podIdentityNeedsNewerPluginSDK(t *testing.T) {
	base := Input{UpgradeMode: "savepoint", State: State{CheckpointDir: "s3://b/p/checkpoints", Backend: "rocksdb"}}
	for _, c := range []struct {
		version, identity string
		refused           bool
	}{{"1.20.0", "pod_identity", true}, {"1.20.0", "irsa", false}, {"1.20.1", "pod_identity", false}, {"2.2.1", "pod_identity", false}} {
		in := base
		in.FlinkVersion, in.Identity = c.version, c.identity
		_, fs := Derive(in)
		if got := hasFinding(fs, Error, "identity", "1.20.1 or later"); got != c.refused {
			t.Errorf("Flink %s with %s: refused %t, want %t (%+v)", c.version, c.identity, got, c.refused, fs)
		}
	}
}

// A ForSt job whose operator savepoints are NATIVE (any case: Flink reads
// enums case-insensitively) draws no savepoint-format finding.
func TestDerive_forstNativeOperatorSavepoints(t *testing.T) {
	in := seedInput()
	in.HasJob, in.UpgradeMode, in.State.Backend = true, "savepoint", "forst"
	in.Extra = map[string]string{"kubernetes.operator.savepoint.format.type": "native"}
	_, fs := Derive(in)
	for _, f := range fs {
		if f.Summary == "Savepoint format ForSt cannot take" {
			t.Errorf("finding %+v", f)
		}
	}
}
