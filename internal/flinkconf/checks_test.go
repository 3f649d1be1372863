package flinkconf

import (
	"strings"
	"testing"
)

// Every alias of a managed key reaches the attribute that sets it.
func TestManagedAttr_aliases(t *testing.T) {
	for key, attr := range map[string]string{
		"s3.aws.credentials.provider":                      "identity",
		"s3a.aws.credentials.provider":                     "identity",
		"fs.s3a.bucket.my.bucket.aws.credentials.provider": "identity",
		"state.checkpoints.dir":                            "state.checkpoint_dir",
		"state.backend":                                    "state.backend",
		"recovery.zookeeper.storageDir":                    "state.ha_dir",
		"execution.checkpointing.interval":                 "state.checkpoint_interval",
	} {
		if got, _ := ManagedAttr(key); got != attr {
			t.Errorf("ManagedAttr(%q) = %q, want %q", key, got, attr)
		}
	}
	for _, key := range []string{"s3.connection.maximum", "fs.s3a.endpoint.region", "metrics.reporters", "state.backend.rocksdb.memory.managed"} {
		if got, _ := ManagedAttr(key); got != "" {
			t.Errorf("ManagedAttr(%q) = %q, want none", key, got)
		}
	}
}

func TestIsStaticCredential(t *testing.T) {
	for _, key := range []string{"s3.access-key", "s3.secret-key", "s3a.access.key", "fs.s3a.session.token", "fs.s3a.bucket.b.secret.key"} {
		if !IsStaticCredential(key) {
			t.Errorf("%q not recognised as credentials", key)
		}
	}
	for _, key := range []string{"s3.access.style", "fs.s3a.endpoint", "s3.path.style.access"} {
		if IsStaticCredential(key) {
			t.Errorf("%q taken for credentials", key)
		}
	}
}

func TestValidateVersion(t *testing.T) {
	for v, want := range map[string]string{"2.2.1": "", "1.20.0": "", "2.1.3": "", "1.19.3": "FLINK-34482", "2.2.3": "", "1.20.5": "", "2.4.0": "not supported"} {
		got := ValidateVersion(v)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("ValidateVersion(%q) = %q, want %q", v, got, want)
		}
	}
}

// A newer patch of a known minor is accepted, with a warning on flink_version.
func TestNewerPatchWarns(t *testing.T) {
	_, fs := Derive(Input{FlinkVersion: "2.2.7", Identity: "irsa", State: State{Backend: "hashmap", CheckpointDir: "s3://acme-flink-state/p/c"}})
	found := false
	for _, f := range fs {
		if f.Severity == Error {
			t.Errorf("error for 2.2.7: %+v", f)
		}
		found = found || (f.Summary == "Flink patch release newer than the provider knows" && strings.Contains(f.Detail, "flink-s3-fs-hadoop-2.2.7.jar"))
	}
	if !found {
		t.Errorf("no warning for 2.2.7: %+v", fs)
	}
	if _, fs := Derive(Input{FlinkVersion: "2.2.1", Identity: "irsa", State: State{Backend: "hashmap", CheckpointDir: "s3://acme-flink-state/p/c"}}); len(fs) > 0 {
		for _, f := range fs {
			if f.Summary == "Flink patch release newer than the provider knows" {
				t.Errorf("warning for a known release: %+v", f)
			}
		}
	}
}

func TestImageVersionMismatch(t *testing.T) {
	for img, bad := range map[string]bool{
		"flink:2.2.1-java17": false, "flink:2.2-java17": false, "flink:latest": false, "acme/app:1.4.2": false, "flink@sha256:ab": false,
		"flink:2.1.2": true, "apache/flink:2.2.0-java17": true, "localhost:5000/flink:1.20": true,
	} {
		if got := ImageVersionMismatch(img, "2.2.1"); (got != "") != bad {
			t.Errorf("ImageVersionMismatch(%q) = %q", img, got)
		}
	}
}

func TestValidateLocalDir(t *testing.T) {
	for dir, ok := range map[string]bool{"/opt/flink/state": true, "/data/rocks": true, "/tmp/rocks": true, "/": false, "/opt": false,
		"/opt/flink": false, "/opt/flink/lib/x": false, "/etc": false, "rel": false, "/opt/flinkx": true} {
		if got := ValidateLocalDir(dir); (got == "") != ok {
			t.Errorf("ValidateLocalDir(%q) = %q", dir, got)
		}
	}
}

func TestValidatePodTemplate_types(t *testing.T) {
	for yaml, want := range map[string]string{
		"":                          "",
		"spec:\n  containers: []\n": "",
		"spec:\n  containers: {}\n": "spec.containers",
		"spec:\n  securityContext: {fsGroup: 1.5}\n": "spec.securityContext.fsGroup",
	} {
		got := ValidatePodTemplate(yaml)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("ValidatePodTemplate(%q) = %q, want %q", yaml, got, want)
		}
	}
}

// Empty and white-space-only keys name no Flink option.
func TestValidateExtraKey_blank(t *testing.T) {
	for _, k := range []string{"", " ", "\t", "  \t\n", "\u00a0"} {
		if msg := ValidateExtraKey(k); !strings.Contains(msg, "empty or white space only") {
			t.Errorf("ValidateExtraKey(%q) = %q, want a blank-key refusal", k, msg)
		}
	}
	for _, k := range []string{"metrics.reporters", " metrics.reporters", "a"} {
		if msg := ValidateKeyNotBlank(k); msg != "" {
			t.Errorf("ValidateKeyNotBlank(%q) = %q, want none", k, msg)
		}
	}
}

// A bucket with dots is refused unless path-style access (under any of
// Flink's prefixes, globally or for the bucket) or plain HTTP is
// configured; a per-bucket false wins over a global true.
func TestNeedsPathStyle(t *testing.T) {
	for _, b := range []string{"a.b", "my.bucket.name", "acme.flink-state"} {
		for _, tc := range []struct {
			extra map[string]string
			ok    bool
		}{
			{nil, false},
			{map[string]string{"metrics.reporters": "prom"}, false},
			{map[string]string{PathStyleKey: "false"}, false},
			{map[string]string{PathStyleKey: "yes"}, false}, // not a Hadoop boolean: the default
			{map[string]string{PathStyleKey: "true"}, true},
			{map[string]string{PathStyleKey: " TRUE "}, true},
			{map[string]string{"s3.path.style.access": "true"}, true},
			{map[string]string{"s3a.path.style.access": "true"}, true},
			{map[string]string{"fs.s3a.bucket." + b + ".path.style.access": "true"}, true},
			{map[string]string{"s3.bucket." + b + ".path.style.access": "true"}, true},
			{map[string]string{"fs.s3a.bucket.other.path.style.access": "true"}, false},
			{map[string]string{PathStyleKey: "true", "fs.s3a.bucket." + b + ".path.style.access": "false"}, false},
			{map[string]string{"fs.s3a.connection.ssl.enabled": "false"}, true},
			{map[string]string{"s3.endpoint": "http://minio.storage:9000"}, true},
			{map[string]string{"s3.endpoint": "https://s3.us-east-1.amazonaws.com"}, false},
		} {
			if got := NeedsPathStyle(tc.extra, b); got == tc.ok {
				t.Errorf("NeedsPathStyle(%v, %q) = %v, want %v", tc.extra, b, got, !tc.ok)
			}
		}
	}
	if NeedsPathStyle(nil, "acme-flink-state") {
		t.Error("a bucket without dots needs path-style access")
	}
}

// Derive refuses a dotted bucket wherever it reaches the job, at the
// attribute that names it, and accepts it with path-style access.
func TestDerive_dottedBuckets(t *testing.T) {
	base := func() Input {
		return Input{FlinkVersion: "2.2.1", Identity: "irsa", HasJob: true, UpgradeMode: "stateless", State: State{Backend: "hashmap"}}
	}
	for _, tc := range []struct {
		name string
		in   func(*Input)
		path string
	}{
		{"store", func(in *Input) {
			in.State.StoreURI = "s3://a.b/flink/orders"
			in.State.CheckpointDir, in.State.SavepointDir = "s3://a.b/flink/orders/checkpoints", "s3://a.b/flink/orders/savepoints"
		}, "state.store_id"},
		{"checkpoint dir", func(in *Input) { in.State.CheckpointDir = "s3://my.bucket.name/c" }, "state.checkpoint_dir"},
		{"savepoint dir", func(in *Input) { in.State.SavepointDir = "s3a://my.bucket.name/s" }, "state.savepoint_dir"},
		{"ha dir", func(in *Input) { in.State.HADir = "s3://x.y.z/ha" }, "state.ha_dir"},
		{"restore path", func(in *Input) { in.RestorePath = "s3://a.b/sp/savepoint-1" }, "job.initial_savepoint_path"},
	} {
		in := base()
		tc.in(&in)
		_, fs := Derive(in)
		found := 0
		for _, f := range fs {
			if f.Summary == "Bucket unreachable over TLS" {
				found++
				if f.Severity != Error || strings.Join(f.Path, ".") != tc.path || !strings.Contains(f.Detail, tc.path+" names the bucket") ||
					!strings.Contains(f.Detail, PathStyleKey) {
					t.Errorf("%s: finding %+v, want an error at %s", tc.name, f, tc.path)
				}
			}
		}
		if found != 1 {
			t.Errorf("%s: %d dotted-bucket findings, want 1: %+v", tc.name, found, fs)
		}
		in.Extra = map[string]string{"s3.path.style.access": "true"}
		_, fs = Derive(in)
		for _, f := range fs {
			if f.Summary == "Bucket unreachable over TLS" {
				t.Errorf("%s with path-style access: %+v", tc.name, f)
			}
		}
	}
}
