package provider

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The plan-time safety net: bad or dangerous configurations, written from
// the rules (Flink's option classes, the operator, AWS's and Kubernetes's
// documented limits, docs/guides/flink-state-on-eks.md), each rejected or warned with
// the attribute path, and valid ones that must plan clean. See
// plan_safety_harness_test.go for how they run.

// deep copies nested maps and lists.
func deep(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deep(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deep(e)
		}
		return l
	}
	return v
}

// with returns a copy of base with dotted paths set (a nil value deletes).
func with(base map[string]any, kv ...any) map[string]any {
	m := deep(base).(map[string]any)
	for i := 0; i < len(kv); i += 2 {
		parts := strings.Split(kv[i].(string), ".")
		cur := m
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		if kv[i+1] == nil {
			delete(cur, parts[len(parts)-1])
		} else {
			cur[parts[len(parts)-1]] = kv[i+1]
		}
	}
	return m
}

const (
	tStore  = "acme-flink-state/flink/orders"
	tURI    = "s3://acme-flink-state/flink/orders"
	tRole   = "arn:aws:iam::123456789012:role/flink-orders"
	tOIDC   = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"
	tKMS    = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	tSMJar  = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
	tOwnJar = "local:///opt/flink/usrlib/orders.jar"
)

// depBase is the guide's deployment (docs/guides/flink-state-on-eks.md,
// "The deployment"): Flink 2.2.1, IRSA, RocksDB, last-state,
// StateMachineExample with its own 2 s interval (Flink's
// flink-examples-streaming StateMachineExample.java calls
// env.enableCheckpointing(2000L)).
var depBase = map[string]any{
	"namespace": "data-processing", "name": "orders", "image": "flink:2.2.1-java17", "flink_version": "2.2.1",
	"service_account": "flink-orders", "identity": "irsa",
	"job_manager":  map[string]any{"memory": "2048m", "cpu": 1.0},
	"task_manager": map[string]any{"memory": "2048m", "cpu": 1.0, "task_slots": 2},
	"job":          map[string]any{"jar_uri": tSMJar, "parallelism": 2, "upgrade_mode": "last-state"},
	"state":        map[string]any{"store_id": tStore, "backend": "rocksdb", "incremental": true, "checkpoint_interval": "2 s", "num_retained": 3},
	// Flink's production readiness checklist: set the max parallelism
	// explicitly (defaultMaxParallelismRule warns without it).
	"flink_configuration": map[string]any{"pipeline.max-parallelism": "128"},
}

// depDirs is depBase with explicit directories instead of a store.
var depDirs = with(depBase, "state.store_id", nil,
	"state.checkpoint_dir", tURI+"/checkpoints", "state.savepoint_dir", tURI+"/savepoints", "state.ha_dir", tURI+"/ha")

// Flink 2.2's S3 plugin bundles AWS SDK for Java 1.12.779 (flink-s3-fs-hadoop's
// META-INF/NOTICE), past end of support: the warning comes with every 2.2 deployment.
const sdkWarning = "S3 plugin bundles an AWS SDK past end of support"

// A stateful job without pipeline.max-parallelism is told what Flink will
// choose (flinkconf.defaultMaxParallelismRule): the guide's deployment sets
// it, but a case that gives flink_configuration keys of its own drops it.
const maxParallelismWarning = "No explicit max parallelism"

func dep(kv ...any) res  { return res{typ: "flinkstate_deployment", attrs: with(depBase, kv...)} }
func depD(kv ...any) res { return res{typ: "flinkstate_deployment", attrs: with(depDirs, kv...)} }
func conf(kv ...any) res {
	return res{typ: "flinkstate_flink_configuration", data: true, attrs: with(confBase, kv...)}
}
func r(typ string, a map[string]any) res { return res{typ: typ, attrs: a} }
func d(typ string, a map[string]any) res { return res{typ: typ, data: true, attrs: a} }

var confBase = map[string]any{"flink_version": "2.2.1", "identity": "irsa", "upgrade_mode": "last-state",
	"state": map[string]any{"store_id": tStore, "checkpoint_interval": "60s"}}

var bucketBase = map[string]any{"bucket": "acme-flink-state"}
var storeBase = map[string]any{"bucket": "acme-flink-state", "prefix": "flink/orders"}
var roleBase = map[string]any{"name": "flink-orders", "state_store_ids": []any{tStore},
	"irsa": map[string]any{"oidc_provider_arn": tOIDC, "namespace": "data-processing", "service_account": "flink-orders"}}
var podRoleBase = map[string]any{"name": "flink-orders", "state_store_ids": []any{tStore},
	"pod_identity": map[string]any{"namespace": "data-processing", "service_account": "flink-orders", "cluster_name": "prod"}}
var saBase = map[string]any{"namespace": "data-processing", "name": "flink-orders"}
var assocBase = map[string]any{"cluster_name": "prod", "namespace": "data-processing", "service_account": "flink-orders", "role_arn": tRole}
var snapBase = map[string]any{"namespace": "data-processing", "deployment_name": "orders"}
var replBase = map[string]any{"bucket": "acme-flink-state", "destination_bucket": "acme-flink-state-dr", "prefixes": []any{"flink/orders"},
	"role_name": "flink-state-replication"}

func e(path, text string) want { return want{path: path, text: text} }
func w(path, text string) want { return want{warning: true, path: path, text: text} }
func at(i int, x want) want    { x.res = i; return x }
func one(rule int, name string, rs res, ws ...want) planCase {
	return planCase{rule: rule, name: name, res: []res{rs}, wants: ws}
}

func planSafetyCases() []planCase {
	var cs []planCase
	add := func(c ...planCase) { cs = append(cs, c...) }

	// Rule 1: versions.
	for _, v := range []string{"1.19.1", "1.18.0", "1.17.2", "1.13.6"} {
		add(one(1, "older than 1.20 "+v, dep("flink_version", v, "image", "flink:"+v), e("flink_version", "FLINK-34482")))
	}
	// A patch newer than the releases the provider knows is accepted with a
	// warning, so a new Flink patch release does not block its users.
	for _, v := range []string{"2.2.9", "2.2.2", "2.0.5", "1.20.9", "2.1.7"} {
		add(one(1, "newer patch "+v, dep("flink_version", v, "image", "flink:"+v+"-java17"), w("flink_version", "newer than the provider knows")))
	}
	for _, v := range []string{"2.3.0", "3.0.0"} {
		add(one(1, "unknown minor "+v, dep("flink_version", v, "image", "flink:"+v), e("flink_version", "not supported")))
	}
	for _, v := range []string{"2.2", "v2.2.1", "2.2.1-java17", ""} {
		add(one(1, "malformed version "+v, dep("flink_version", v), e("flink_version", "full Flink version")))
	}
	for _, img := range []string{"flink:2.1.2-java17", "flink:1.20.4", "apache/flink:2.2.0-scala_2.12-java17", "docker.io/library/flink:2.0-java17", "registry.example.com/mirror/flink:2.1"} {
		add(one(1, "image tag "+img, dep("image", img), e("image", "flink_version is 2.2.1")))
	}
	// ForSt takes NATIVE savepoints only (FLINK-37301).
	forst := []any{"state.backend", "forst", "state.incremental", nil}
	add(one(1, "forst canonical savepoint before upgrade", dep(append(forst, "savepoint_before_upgrade", map[string]any{"format_type": "CANONICAL"})...),
		e("savepoint_before_upgrade.format_type", "ForSt takes NATIVE savepoints only")))
	add(planCase{rule: 8, name: "canonical savepoint of a forst deployment",
		res: []res{dep(forst...), r("flinkstate_snapshot", snapBase)}, wants: []want{at(1, e("format_type", "ForSt takes NATIVE savepoints only"))}})
	// The operator's own savepoints (upgrade, periodic) are in
	// kubernetes.operator.savepoint.format.type, CANONICAL by default.
	fmtKey := `flink_configuration["kubernetes.operator.savepoint.format.type"]`
	add(one(1, "forst savepoint upgrades in the operator's default format", dep(append(forst, "job.upgrade_mode", "savepoint")...),
		e(fmtKey, "ForSt takes NATIVE savepoints only")))
	add(one(1, "forst periodic savepoints in CANONICAL", dep(append(forst, "flink_configuration", map[string]any{
		"pipeline.max-parallelism": "128", "kubernetes.operator.periodic.savepoint.interval": "1h",
		"kubernetes.operator.savepoint.format.type": "CANONICAL"})...), e(fmtKey, "every periodic savepoint")))
	add(one(1, "forst last-state in the operator's default format", dep(forst...), w(fmtKey, "Flink version upgrade")))
	add(one(1, "forst before 2.0", dep("flink_version", "1.20.4", "image", "flink:1.20.4-java17", "state.backend", "forst", "state.incremental", nil), e("state.backend", "ForSt")))
	add(one(1, "data source old version", conf("flink_version", "1.19.0"), e("flink_version", "FLINK-34482")))
	add(one(1, "data source newer patch", conf("flink_version", "2.2.7"), w("flink_version", "newer than the provider knows")))

	// Rule 2: managed keys under any alias.
	aliases := map[string]string{
		"s3.aws.credentials.provider":                               "identity",
		"s3a.aws.credentials.provider":                              "identity",
		"fs.s3a.aws.credentials.provider":                           "identity",
		"fs.s3a.bucket.acme-flink-state.aws.credentials.provider":   "identity",
		"state.backend":                                             "state.backend",
		"state.backend.type":                                        "state.backend",
		"state.checkpoints.dir":                                     "state.checkpoint_dir",
		"state.backend.fs.checkpointdir":                            "state.checkpoint_dir",
		"execution.checkpointing.dir":                               "state.checkpoint_dir",
		"state.savepoints.dir":                                      "state.savepoint_dir",
		"savepoints.state.backend.fs.dir":                           "state.savepoint_dir",
		"execution.checkpointing.savepoint-dir":                     "state.savepoint_dir",
		"state.backend.incremental":                                 "state.incremental",
		"execution.checkpointing.incremental":                       "state.incremental",
		"state.checkpoints.num-retained":                            "state.num_retained",
		"execution.checkpointing.num-retained":                      "state.num_retained",
		"state.checkpoint-storage":                                  "state",
		"execution.checkpointing.storage":                           "state",
		"high-availability":                                         "high_availability",
		"recovery.mode":                                             "high_availability",
		"high-availability.type":                                    "high_availability",
		"high-availability.storageDir":                              "state.ha_dir",
		"high-availability.zookeeper.storageDir":                    "state.ha_dir",
		"recovery.zookeeper.storageDir":                             "state.ha_dir",
		"state.backend.rocksdb.localdir":                            "state.local_dir",
		"state.backend.rocksdb.checkpointdir":                       "state.local_dir",
		"state.backend.forst.local-dir":                             "state.local_dir",
		"execution.checkpointing.interval":                          "state.checkpoint_interval",
		"execution.checkpointing.timeout":                           "state.timeout",
		"execution.checkpointing.min-pause":                         "state.min_pause",
		"execution.checkpointing.mode":                              "state.mode",
		"execution.checkpointing.externalized-checkpoint-retention": "state.externalized_retention",
		"taskmanager.numberOfTaskSlots":                             "task_manager.task_slots",
	}
	for _, k := range sortedKeys(func() map[string]any {
		m := map[string]any{}
		for k := range aliases {
			m[k] = nil
		}
		return m
	}()) {
		attr := aliases[k]
		add(one(2, "alias "+k, dep("flink_configuration", map[string]any{k: "x"}), e(fmt.Sprintf("flink_configuration[%q]", k), "set "+attr+" instead")))
	}
	for _, k := range []string{"s3.aws.credentials.provider", "state.checkpoints.dir", "high-availability"} {
		add(one(9, "data source alias "+k, conf("flink_configuration", map[string]any{k: "x"}), e(fmt.Sprintf("flink_configuration[%q]", k), "instead")))
	}

	// Rule 3: static credentials under any alias.
	for _, k := range []string{"s3.access-key", "s3.secret-key", "s3.access.key", "s3.secret.key", "s3a.access.key", "s3a.secret.key",
		"fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token", "s3.session.token", "fs.s3a.access-key", "s3a.session.token",
		"fs.s3a.bucket.acme-flink-state.access.key", "fs.s3a.bucket.acme-flink-state.secret.key"} {
		add(one(3, "credentials "+k, dep("flink_configuration", map[string]any{k: "AKIAEXAMPLE"}), e(fmt.Sprintf("flink_configuration[%q]", k), "identity")))
	}
	for _, k := range []string{"s3.secret-key", "fs.s3a.session.token"} {
		add(one(9, "data source credentials "+k, conf("flink_configuration", map[string]any{k: "x"}), e(fmt.Sprintf("flink_configuration[%q]", k), "static AWS credentials")))
	}

	// Rule 4: directories.
	badDirs := map[string]string{
		"s3://acme-flink-state":                  "root of bucket",
		"s3://acme-flink-state/":                 "root of bucket",
		"s3://acme-flink-state/a//checkpoints":   "empty path segment",
		"s3://acme-flink-state/a/../checkpoints": `".." segment`,
		"s3://acme-flink-state/./checkpoints":    `"." segment`,
		"s3://Acme-Flink/checkpoints":            "names the bucket",
		"s3://ab/checkpoints":                    "names the bucket",
		"s3://acme_flink/checkpoints":            "names the bucket",
		"file:///tmp/checkpoints":                "s3:// or s3a://",
		"/opt/flink/checkpoints":                 "s3:// or s3a://",
		"hdfs://namenode/checkpoints":            "s3:// or s3a://",
	}
	for _, dir := range sortedKeys(anyMap(badDirs)) {
		add(one(4, "checkpoint_dir "+dir, depD("state.checkpoint_dir", dir), e("state.checkpoint_dir", badDirs[dir])))
	}
	add(one(4, "savepoint_dir bucket root", depD("state.savepoint_dir", "s3a://acme-flink-state"), e("state.savepoint_dir", "root of bucket")))
	add(one(4, "savepoint_dir dotdot", depD("state.savepoint_dir", tURI+"/../savepoints"), e("state.savepoint_dir", `".." segment`)))
	add(one(4, "ha_dir local", depD("state.ha_dir", "/tmp/ha"), e("state.ha_dir", "s3:// or s3a://")))
	add(one(4, "ha_dir double slash", depD("state.ha_dir", tURI+"//ha"), e("state.ha_dir", "empty path segment")))
	add(one(4, "savepoint dir equals checkpoint dir", depD("state.savepoint_dir", tURI+"/checkpoints"), e("state.savepoint_dir", "are both")))
	add(one(4, "ha dir equals checkpoint dir (s3a)", depD("state.ha_dir", "s3a://acme-flink-state/flink/orders/checkpoints/"), e("state.ha_dir", "are both")))
	add(one(4, "savepoint dir inside checkpoint dir", depD("state.savepoint_dir", tURI+"/checkpoints/savepoints"), e("state.savepoint_dir", "nested")))
	add(one(4, "ha dir holding the checkpoint dir", depD("state.ha_dir", tURI), e("state.ha_dir", "nested")))
	add(one(4, "store and checkpoint dir in another bucket", dep("state.checkpoint_dir", "s3://other-flink-state/flink/orders/checkpoints"), e("state.checkpoint_dir", "outside the state store")))
	add(one(4, "store and savepoint dir in another prefix", dep("state.savepoint_dir", "s3://acme-flink-state/flink/payments/savepoints"), e("state.savepoint_dir", "outside the state store")))
	add(one(4, "store and ha dir in a sibling prefix", dep("state.ha_dir", "s3://acme-flink-state/flink/orders2/ha"), e("state.ha_dir", "outside the state store")))
	add(one(4, "data source dir outside store", conf("state.checkpoint_dir", "s3://other-flink-state/x/checkpoints"), e("state.checkpoint_dir", "outside the state store")))
	for id, text := range map[string]string{"acme-flink-state": "bucket/prefix", "ab/flink": "names the bucket", "Acme/flink": "names the bucket",
		"acme-flink-state/flink/": "must not end with a slash", "acme-flink-state//flink": "must not start with a slash"} {
		add(one(4, "store_id "+id, dep("state.store_id", id), e("state.store_id", text)))
	}
	for p, text := range map[string]string{"/opt/flink/savepoints/sp-1": "s3:// or s3a://", "file:///savepoints/sp-1": "s3:// or s3a://",
		"savepoint-1": "s3:// or s3a://", "s3://acme-flink-state": "root of bucket", "s3://ab/sp": "names the bucket"} {
		add(one(4, "initial_savepoint_path "+p, dep("job.initial_savepoint_path", p), e("job.initial_savepoint_path", text)))
	}
	for b, text := range map[string]string{"ab": "3 to 63", "Acme-State": "lowercase", "acme..state": "adjacent periods", "192.168.1.10": "IP address", "xn--acme": "reserved prefixes"} {
		add(one(4, "store bucket "+b, r("flinkstate_state_store", with(storeBase, "bucket", b)), e("bucket", text)))
	}
	for p, text := range map[string]string{"/flink/orders": "start with a slash", "flink/orders/": "end with a slash", "flink//orders": "empty segment",
		"flink/../orders": ". or .. segments", "flink/*": "wildcards"} {
		add(one(4, "store prefix "+p, r("flinkstate_state_store", with(storeBase, "prefix", p)), e("prefix", text)))
	}
	for b, text := range map[string]string{"ab": "3 to 63", "acme-state-s3alias": "reserved suffix", "sthree-acme": "reserved prefixes"} {
		add(one(4, "bucket "+b, r("flinkstate_bucket", with(bucketBase, "bucket", b)), e("bucket", text)))
	}
	// Issue 35: flinkstate_bucket_replication's attributes.
	for b, text := range map[string]string{"ab": "3 to 63", "Acme-State": "lowercase"} {
		add(one(4, "replication source bucket "+b, r("flinkstate_bucket_replication", with(replBase, "bucket", b)), e("bucket", text)))
		add(one(4, "replication destination bucket "+b, r("flinkstate_bucket_replication", with(replBase, "destination_bucket", b)), e("destination_bucket", text)))
	}
	for p, text := range map[string]string{"/flink/orders": "start with a slash", "flink/orders/": "end with a slash", "flink/*": "wildcards"} {
		add(one(4, "replication prefix "+p, r("flinkstate_bucket_replication", with(replBase, "prefixes", []any{p})), e("prefixes[0]", text)))
	}
	add(one(4, "replication without prefixes", r("flinkstate_bucket_replication", with(replBase, "prefixes", []any{})), e("prefixes", "at least 1")))
	add(one(4, "replication prefix twice", r("flinkstate_bucket_replication", with(replBase, "prefixes", []any{"flink/orders", "flink/orders"})), e("prefixes", "duplicate values")))
	add(one(7, "replication role name", r("flinkstate_bucket_replication", with(replBase, "role_name", "flink state")), e("role_name", "1 to 64")))
	for dir, text := range map[string]string{"s3://ab/x": "names the bucket", "s3://acme-flink-state": "root of bucket", "/tmp/checkpoints": "s3:// or s3a://"} {
		add(one(9, "latest_checkpoint "+dir, d("flinkstate_latest_checkpoint", map[string]any{"checkpoint_dir": dir}), e("checkpoint_dir", text)))
	}
	add(one(9, "latest_checkpoint store bucket", d("flinkstate_latest_checkpoint", map[string]any{"store_id": "ab/p"}), e("store_id", "names the bucket")))
	add(one(9, "policy_document store bucket", d("flinkstate_policy_document", map[string]any{"state_store_ids": []any{"Acme/p"}}), e("state_store_ids[0]", "names the bucket")))
	add(one(4, "role store bucket", r("flinkstate_iam_role", with(roleBase, "state_store_ids", []any{"ab/p"})), e("state_store_ids[0]", "names the bucket")))
	for dir, text := range map[string]string{"s3://acme-flink-state": "root of bucket", "/tmp/savepoints": "s3:// or s3a://", tURI + "//sp": "empty path segment"} {
		add(one(4, "snapshot target_dir "+dir, r("flinkstate_snapshot", with(snapBase, "target_dir", dir)), e("target_dir", text)))
	}
	add(one(4, "snapshot existing path local", r("flinkstate_snapshot", with(snapBase, "already_exists", true, "path", "/tmp/sp-1")), e("path", "s3:// or s3a://")))
	add(planCase{rule: 8, name: "snapshot target_dir outside the deployment's store",
		res:   []res{dep(), r("flinkstate_snapshot", with(snapBase, "target_dir", "s3://acme-flink-state/flink/payments/savepoints"))},
		wants: []want{at(1, e("target_dir", "outside the state store"))}})

	for _, other := range []string{"flink/orders/checkpoints/app", "flink", "flink/orders"} {
		add(planCase{rule: 4, name: "store nested with " + other,
			res:   []res{r("flinkstate_state_store", storeBase), r("flinkstate_state_store", with(storeBase, "prefix", other))},
			wants: []want{at(1, e("prefix", "nested"))}})
	}

	// Rule 5: values that cannot work.
	add(one(5, "empty image", dep("image", ""), e("image", "must not be empty")))
	add(one(5, "blank image", dep("image", "  "), e("image", "must not be empty")))
	add(one(5, "empty jar", dep("job.jar_uri", ""), e("job.jar_uri", "must not be empty")))
	add(one(5, "empty entry class", dep("job.entry_class", " "), e("job.entry_class", "must not be empty")))
	for _, v := range []string{"5ms", "0", "0s", "9 ms"} {
		add(one(5, "interval "+v, dep("state.checkpoint_interval", v), e("state.checkpoint_interval", "10 ms")))
	}
	for _, v := range []string{"0", "5 ms"} {
		add(one(5, "timeout "+v, dep("state.timeout", v), e("state.timeout", "10 ms")))
	}
	add(one(5, "interval not a duration", dep("state.checkpoint_interval", "every minute"), e("state.checkpoint_interval", "not a duration")))
	add(one(5, "min pause not a duration", dep("state.min_pause", "soon"), e("state.min_pause", "not a duration")))
	add(one(5, "memory not a size", dep("job_manager.memory", "two gigs"), e("job_manager.memory", "memory size")))
	// Flink's memory model (ProcessMemoryUtils, run by the operator before it
	// creates anything): the fixed parts must fit in the process size.
	add(one(5, "memory with a decimal point", dep("task_manager.memory", "1.5g"), e("task_manager.memory", "decimal point")))
	add(one(5, "JobManager memory 256m", dep("job_manager.memory", "256m"), e("job_manager.memory", "Use at least 577m")))
	add(one(5, "TaskManager memory 512m", dep("task_manager.memory", "512m"), e("task_manager.memory", "Use at least 982m")))
	add(one(5, "TaskManager memory 981m", dep("task_manager.memory", "981m"), e("task_manager.memory", "Use at least 982m")))
	add(one(5, "raised metaspace", dep("job_manager.memory", "1024m", "flink_configuration", map[string]any{"jobmanager.memory.jvm-metaspace.size": "1g"}),
		e("job_manager.memory", "Use at least 1345m")))
	add(one(5, "raised managed fraction", dep("task_manager.memory", "1024m", "flink_configuration", map[string]any{"taskmanager.memory.managed.fraction": "0.7"}),
		e("task_manager.memory", "Use at least 1728m")))
	add(one(5, "fixed JobManager heap", dep("flink_configuration", map[string]any{"jobmanager.memory.heap.size": "512m"}),
		e("job_manager.memory", "Use between 1088m and 1920m")))
	add(one(5, "unreadable memory option", dep("flink_configuration", map[string]any{"taskmanager.memory.jvm-metaspace.size": "lots"}),
		e(`flink_configuration["taskmanager.memory.jvm-metaspace.size"]`, "Cannot read memory size")))
	add(one(9, "data source autoscaler range", conf("flink_configuration", map[string]any{"job.autoscaler.enabled": "true", "job.autoscaler.utilization.target": "2"}),
		e(`flink_configuration["job.autoscaler.utilization.target"]`, "within the range [0.0, 1.0]")))
	add(one(5, "incremental with hashmap", dep("state.backend", "hashmap"), w("state.incremental", "no effect with the hashmap backend")))
	add(one(5, "data source incremental with hashmap", conf("state.backend", "hashmap", "state.incremental", true), w("state.incremental", "hashmap")))
	add(one(5, "interval the job overrides", dep("state.checkpoint_interval", "60s"), w("state.checkpoint_interval", "StateMachineExample.jar sets a checkpoint interval")))
	add(one(5, "savepoint mode without interval", dep("job.jar_uri", tOwnJar, "job.upgrade_mode", "savepoint", "state.checkpoint_interval", nil),
		w("state.checkpoint_interval", "Flink takes no checkpoints unless an interval is set")))
	add(one(5, "stateful job without max parallelism", dep("job.parallelism", 100, "flink_configuration", nil),
		w("flink_configuration", "with job.parallelism = 100, Flink gives every operator without a max parallelism of its own 256 ")))
	add(one(5, "min pause over interval", dep("job.jar_uri", tOwnJar, "state.checkpoint_interval", "10s", "state.min_pause", "30s"), w("state.min_pause", "longer than checkpoint_interval")))
	for dir, text := range map[string]string{"/": "Flink distribution", "/opt": "Flink distribution", "/opt/flink": "Flink distribution", "/opt/flink/lib": "system directory",
		"/opt/flink/plugins/s3": "system directory", "/etc/rocksdb": "system directory", "/usr/local/rocksdb": "system directory", "rocksdb": "absolute path", "/proc/rocksdb": "system directory"} {
		add(one(5, "local_dir "+dir, dep("state.local_dir", dir), e("state.local_dir", text)))
	}
	mount := func(vol string, readOnly bool) string {
		ro := ""
		if readOnly {
			ro = "\n      readOnly: true"
		}
		return "spec:\n  containers:\n  - name: flink-main-container\n    volumeMounts:\n    - name: rocks\n      mountPath: /opt/flink/state" + ro +
			"\n  volumes:\n  - name: rocks\n    " + vol + "\n"
	}
	add(one(5, "read-only mount at local dir", dep("pod_template", mount("emptyDir: {}", true)), e("pod_template", "readOnly")))
	add(one(5, "configMap at local dir", dep("pod_template", mount("configMap: {name: rocks}", false)), e("pod_template", "configMap volume")))
	add(one(5, "secret at local dir", dep("pod_template", mount("secret: {secretName: rocks}", false)), e("pod_template", "secret volume")))
	add(one(5, "projected at local dir", dep("pod_template", mount("projected: {sources: []}", false)), e("pod_template", "projected volume")))
	for name, tc := range map[string][2]string{
		"containers a map":     {"spec:\n  containers:\n    name: flink-main-container\n", "spec.containers"},
		"spec a list":          {"spec:\n- containers: []\n", "spec of the wrong type"},
		"env a map":            {"spec:\n  containers:\n  - name: flink-main-container\n    env:\n      A: b\n", "spec.containers[0].env"},
		"mounts a string":      {"spec:\n  containers:\n  - name: flink-main-container\n    volumeMounts: /data\n", "spec.containers[0].volumeMounts"},
		"fsGroup a string":     {"spec:\n  securityContext:\n    fsGroup: flink\n", "spec.securityContext.fsGroup"},
		"container a string":   {"spec:\n  containers:\n  - flink-main-container\n", "spec.containers[0]"},
		"volumes a map":        {"spec:\n  volumes:\n    rocks: {}\n", "spec.volumes"},
		"metadata a list":      {"metadata:\n- labels: {}\n", "metadata of the wrong type"},
		"env value a number":   {"spec:\n  containers:\n  - name: flink-main-container\n    env:\n    - name: A\n      value: 5\n", "spec.containers[0].env[0].value"},
		"not a mapping":        {"- kind: Pod\n", "must be a Pod"},
		"invalid YAML":         {"spec: [\n", "not valid YAML"},
		"initContainers a map": {"spec:\n  initContainers:\n    name: x\n", "spec.initContainers"},
	} {
		add(one(5, "pod_template "+name, dep("pod_template", tc[0]), e("pod_template", tc[1])))
	}
	add(one(9, "data source pod_template wrong type", conf("pod_template", "spec:\n  containers: {}\n"), e("pod_template", "spec.containers")))

	// Rule 6: identity.
	add(planCase{rule: 6, name: "pod_identity deployment on an IRSA ServiceAccount",
		res:   []res{r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole)), dep("identity", "pod_identity")},
		wants: []want{at(1, e("identity", "IRSA annotation"))}})
	add(planCase{rule: 6, name: "association for an IRSA ServiceAccount",
		res:   []res{r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole)), r("flinkstate_pod_identity_association", assocBase)},
		wants: []want{at(1, e("service_account", "IRSA annotation"))}})
	add(planCase{rule: 6, name: "IRSA ServiceAccount after an association",
		res:   []res{r("flinkstate_pod_identity_association", assocBase), r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole))},
		wants: []want{at(1, e("irsa_role_arn", "IRSA annotation"))}})
	add(planCase{rule: 6, name: "IRSA ServiceAccount after a pod_identity deployment",
		res:   []res{dep("identity", "pod_identity"), r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole))},
		wants: []want{at(1, e("irsa_role_arn", "IRSA annotation"))}})
	add(one(6, "deployment without identity", dep("identity", nil), w("identity", "identity is unset, so the provider writes no")))
	add(planCase{rule: 6, name: "deployment without identity on an IRSA ServiceAccount",
		res:   []res{r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole)), dep("identity", nil)},
		wants: []want{at(1, w("identity", "gets an IRSA role (irsa_role_arn), but identity is unset"))}})
	add(one(6, "pod identity trust without cluster", r("flinkstate_iam_role", with(podRoleBase, "pod_identity.cluster_name", nil)), w("pod_identity.cluster_name", "every EKS cluster")))
	add(one(6, "IRSA annotation by hand", r("flinkstate_service_account", with(saBase, "annotations", map[string]any{"eks.amazonaws.com/role-arn": tRole})),
		e(`annotations["eks.amazonaws.com/role-arn"]`, "set irsa_role_arn instead")))

	// Rule 7: AWS and Kubernetes limits.
	long := func(n int) string { return strings.Repeat("a", n) }
	for k, text := range map[string]string{"aws:team": "reserves", "AWS:cost": "reserves", long(129): "1 to 128", "team*": "may contain only"} {
		add(one(7, "bucket tag key "+k[:min(len(k), 12)], r("flinkstate_bucket", with(bucketBase, "tags", map[string]any{k: "x"})), e(fmt.Sprintf("tags[%q]", k), text)))
	}
	add(one(7, "bucket tag value too long", r("flinkstate_bucket", with(bucketBase, "tags", map[string]any{"team": long(257)})), e(`tags["team"]`, "at most 256")))
	add(one(7, "role tag key reserved", r("flinkstate_iam_role", with(roleBase, "tags", map[string]any{"aws:x": "y"})), e(`tags["aws:x"]`, "reserves")))
	add(one(7, "role tag value chars", r("flinkstate_iam_role", with(roleBase, "tags", map[string]any{"team": "a|b"})), e(`tags["team"]`, "may contain only")))
	for k, text := range map[string]string{"-bad": "name part", "a/b/c": "qualified name", "example.com/" + long(64): "63", "bad key": "name part"} {
		add(one(7, "label key "+k[:min(len(k), 12)], r("flinkstate_service_account", with(saBase, "labels", map[string]any{k: "x"})), e(fmt.Sprintf("labels[%q]", k), text)))
	}
	for v, text := range map[string]string{"has space": "a valid label", long(64): "63", "-x": "a valid label"} {
		add(one(7, "label value "+v[:min(len(v), 12)], r("flinkstate_service_account", with(saBase, "labels", map[string]any{"app": v})), e(`labels["app"]`, text)))
	}
	for k, text := range map[string]string{"bad key": "name part", "-x/y": "prefix part"} {
		add(one(7, "annotation key "+k, r("flinkstate_service_account", with(saBase, "annotations", map[string]any{k: "x"})), e(fmt.Sprintf("annotations[%q]", k), text)))
	}
	for c, text := range map[string]string{"-prod": "starting with a letter", "prod.eu": "letters, digits, hyphens", long(101): "1 to 100"} {
		add(one(7, "association cluster "+c[:min(len(c), 12)], r("flinkstate_pod_identity_association", with(assocBase, "cluster_name", c)), e("cluster_name", text)))
	}
	add(one(7, "role cluster name", r("flinkstate_iam_role", with(podRoleBase, "pod_identity.cluster_name", "prod cluster")), e("pod_identity.cluster_name", "EKS CreateCluster")))
	add(one(7, "KMS key in another region", r("flinkstate_bucket", with(bucketBase, "kms_key_arn", strings.Replace(tKMS, "us-east-1", "us-west-2", 1))), e("kms_key_arn", "us-west-2")))
	add(one(7, "KMS ARN short account", r("flinkstate_bucket", with(bucketBase, "kms_key_arn", "arn:aws:kms:us-east-1:123:key/x")), e("kms_key_arn", "KMS key or alias ARN")))
	add(one(7, "role KMS alias", r("flinkstate_iam_role", with(roleBase, "kms_key_arns", []any{"arn:aws:kms:us-east-1:123456789012:alias/flink"})), e("kms_key_arns[0]", "alias ARN")))
	add(one(7, "role KMS not an ARN", r("flinkstate_iam_role", with(roleBase, "kms_key_arns", []any{"1234abcd"})), e("kms_key_arns[0]", "KMS key ARN")))
	add(one(9, "policy_document KMS alias", d("flinkstate_policy_document", map[string]any{"state_store_ids": []any{tStore}, "kms_key_arns": []any{"arn:aws:kms:us-east-1:123456789012:alias/x"}}), e("kms_key_arns[0]", "alias ARN")))
	add(one(7, "TLS not enforced", r("flinkstate_bucket", with(bucketBase, "enforce_tls", false)), w("enforce_tls", "plain HTTP")))
	add(one(7, "role name too long", r("flinkstate_iam_role", with(roleBase, "name", long(65))), e("name", "1 to 64")))
	add(one(7, "role name space", r("flinkstate_iam_role", with(roleBase, "name", "flink orders")), e("name", "1 to 64")))
	add(one(7, "SA role ARN of a user", r("flinkstate_service_account", with(saBase, "irsa_role_arn", "arn:aws:iam::123456789012:user/flink")), e("irsa_role_arn", "IAM role ARN")))
	add(one(7, "association role ARN in S3", r("flinkstate_pod_identity_association", with(assocBase, "role_arn", "arn:aws:s3:::acme")), e("role_arn", "IAM role ARN")))
	add(one(7, "OIDC ARN with https", r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", strings.Replace(tOIDC, "oidc-provider/", "oidc-provider/https://", 1))), e("irsa.oidc_provider_arn", "https://")))
	add(one(7, "namespace uppercase", dep("namespace", "Data"), e("namespace", "DNS-1123 label")))
	add(one(7, "deployment name underscore", dep("name", "orders_v2"), e("name", "DNS-1123 label")))
	add(one(7, "deployment name too long", dep("name", long(46)), e("name", "at most 45")))
	add(one(7, "service account name", dep("service_account", "Flink_Orders"), e("service_account", "DNS-1123 subdomain")))
	add(one(7, "snapshot name prefix", r("flinkstate_snapshot", with(snapBase, "name_prefix", "-orders")), e("name_prefix", "DNS-1123 subdomain prefix")))
	add(one(9, "latest_savepoint namespace", d("flinkstate_latest_savepoint", map[string]any{"namespace": "Data", "deployment_name": "orders"}), e("namespace", "DNS-1123 label")))
	add(one(9, "latest_checkpoint job id", d("flinkstate_latest_checkpoint", map[string]any{"store_id": tStore, "job_id": "ABC"}), e("job_id", "32 lowercase hexadecimal")))

	// Rule 8: snapshots.
	noSavepointDir := depD("state.savepoint_dir", nil, "job.upgrade_mode", "stateless", "state.ha_dir", nil)
	add(planCase{rule: 8, name: "savepoint of a deployment without savepoint dir",
		res: []res{noSavepointDir, r("flinkstate_snapshot", snapBase)}, wants: []want{at(1, e("target_dir", "no savepoint directory"))}})
	add(planCase{rule: 8, name: "s3a target_dir outside the deployment's store",
		res:   []res{dep(), r("flinkstate_snapshot", with(snapBase, "target_dir", "s3a://other-flink-state/savepoints"))},
		wants: []want{at(1, e("target_dir", "outside the state store"))}})
	add(one(8, "dispose a recorded s3a savepoint", r("flinkstate_snapshot", with(snapBase, "already_exists", true, "path", "s3a://acme-flink-state/sp/savepoint-2", "dispose_on_delete", true)),
		e("dispose_on_delete", "did not take")))
	add(one(8, "dispose an existing savepoint", r("flinkstate_snapshot", with(snapBase, "already_exists", true, "path", tURI+"/savepoints/savepoint-1", "dispose_on_delete", true)),
		e("dispose_on_delete", "did not take")))

	// Rule 10: what the operator's DefaultValidator refuses, and the
	// operator's own semantics (flink-kubernetes-operator release-1.15.0).
	add(one(10, "job without parallelism", dep("job.parallelism", nil), e("job.parallelism", "Job parallelism must be larger than 0")))
	for _, k := range []string{"kubernetes.namespace", "kubernetes.cluster-id", "high-availability.cluster-id"} {
		add(one(10, "forbidden key "+k, dep("flink_configuration", map[string]any{k: "x"}), e(fmt.Sprintf("flink_configuration[%q]", k), "Forbidden Flink config key")))
	}
	add(one(10, "rollback without HA", dep("job.upgrade_mode", "stateless", "high_availability", false,
		"flink_configuration", map[string]any{"kubernetes.operator.deployment.rollback.enabled": "true"}),
		e(`flink_configuration["kubernetes.operator.deployment.rollback.enabled"]`, "HA must be enabled for rollback support")))
	add(one(10, "health check without deployment recovery", dep("flink_configuration", map[string]any{
		"kubernetes.operator.cluster.health-check.enabled": "true", "kubernetes.operator.jm-deployment-recovery.enabled": "false"}),
		e(`flink_configuration["kubernetes.operator.cluster.health-check.enabled"]`, "Deployment recovery")))
	add(one(10, "periodic savepoints without savepoint dir", depD("state.savepoint_dir", nil, "job.upgrade_mode", "stateless",
		"flink_configuration", map[string]any{"kubernetes.operator.periodic.savepoint.interval": "1h"}),
		e(`flink_configuration["kubernetes.operator.periodic.savepoint.interval"]`, "Periodic savepoints cannot be enabled")))
	add(one(10, "max checkpoint age without savepoint dir", depD("state.savepoint_dir", nil, "job.upgrade_mode", "stateless",
		"flink_configuration", map[string]any{"kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age": "10 min"}),
		e(`flink_configuration["kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age"]`, "max-checkpoint age")))
	add(one(10, "savepoint mode without checkpoint dir", depD("state.checkpoint_dir", nil, "job.upgrade_mode", "savepoint"),
		e("state.checkpoint_dir", "Checkpoint directory must be defined")))
	for _, mode := range []string{"last-state", "savepoint"} {
		add(one(10, "delete on cancellation with "+mode, dep("job.upgrade_mode", mode, "state.externalized_retention", "DELETE_ON_CANCELLATION"),
			e("state.externalized_retention", "on destroy")))
	}
	add(one(10, "delete on cancellation, stateless", dep("job.upgrade_mode", "stateless", "state.externalized_retention", "DELETE_ON_CANCELLATION"),
		w("state.externalized_retention", "no checkpoint is left")))
	add(one(10, "last-state without HA", dep("high_availability", false), w("high_availability", "cannot recover a lost JobManager")))
	add(one(10, "savepoint without HA", dep("job.upgrade_mode", "savepoint", "high_availability", false), w("high_availability", "last-state-fallback")))
	add(one(10, "savepoint without HA directory", depD("state.ha_dir", nil, "job.upgrade_mode", "savepoint"), w("high_availability", "no HA directory")))
	add(one(10, "name starting with a digit", dep("name", "1orders"), e("name", "start with a letter")))
	// The autoscaler's ranges (AutoscalerValidator.validateAutoscalerOptions),
	// checked when the autoscaler is enabled.
	for k, v := range map[string]string{
		"job.autoscaler.scale-down.max-factor":                     "-0.5",
		"job.autoscaler.scale-up.max-factor":                       "-1",
		"job.autoscaler.utilization.target":                        "1.5",
		"job.autoscaler.target.utilization.boundary":               "-0.1",
		"job.autoscaler.utilization.max":                           "1.2",
		"job.autoscaler.utilization.min":                           "0.8",
		"job.autoscaler.observed-scalability.coefficient-min":      "0.001",
		"kubernetes.operator.job.autoscaler.utilization.target":    "-1",
		"kubernetes.operator.job.autoscaler.scale-down.max-factor": "-1",
	} {
		add(one(10, "autoscaler "+k+" = "+v, dep("flink_configuration", map[string]any{"job.autoscaler.enabled": "true", k: v}),
			e(fmt.Sprintf("flink_configuration[%q]", k), "is invalid, it should be a value within the range")))
	}
	add(one(10, "autoscaler option not a number", dep("flink_configuration", map[string]any{"kubernetes.operator.job.autoscaler.enabled": "true", "job.autoscaler.utilization.target": "high"}),
		e(`flink_configuration["job.autoscaler.utilization.target"]`, "Invalid value in the autoscaler config")))

	// Issue 37: inputs that used to pass plan silently.
	//
	// Partitions: every ARN the user gives in the partition of the
	// provider's region (at plan) and of the resource's other ARNs (at
	// validate); aws, aws-cn and aws-us-gov are separate IAM instances.
	arnIn := func(s, partition string) string { return strings.Replace(s, "arn:aws:", "arn:"+partition+":", 1) }
	inRegion := func(c planCase, region string) planCase { c.region = region; return c }
	// An OIDC provider ARN as its partition has it: the issuer names a
	// cluster of that partition (else checkIssuerPartition refuses it first).
	oidcIn := func(p string) string {
		return map[string]string{"aws": tOIDC,
			"aws-cn":     "arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/ABC",
			"aws-us-gov": "arn:aws-us-gov:iam::123456789012:oidc-provider/oidc.eks.us-gov-west-1.amazonaws.com/id/ABC"}[p]
	}
	for _, p := range []string{"aws-cn", "aws-us-gov"} {
		add(one(7, "role OIDC provider in "+p+", region us-east-1", r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", oidcIn(p))),
			e("irsa.oidc_provider_arn", "is in the AWS partition "+p+", but the provider's region us-east-1 is in aws")))
		add(one(7, "role KMS key in "+p+", region us-east-1", r("flinkstate_iam_role", with(roleBase, "kms_key_arns", []any{arnIn(tKMS, p)})),
			e("kms_key_arns[0]", "is in the AWS partition "+p)))
		add(one(7, "role OIDC provider in aws, KMS key in "+p, r("flinkstate_iam_role", with(roleBase, "kms_key_arns", []any{tKMS, arnIn(tKMS, p)})),
			e("kms_key_arns[1]", "kms_key_arns[1] is in the AWS partition "+p+", but irsa.oidc_provider_arn is in aws")))
		add(one(7, "role OIDC provider in "+p+", KMS key in aws", r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", oidcIn(p), "kms_key_arns", []any{tKMS})),
			e("kms_key_arns[0]", "kms_key_arns[0] is in the AWS partition aws, but irsa.oidc_provider_arn is in "+p)))
		add(one(7, "bucket KMS key in "+p, r("flinkstate_bucket", with(bucketBase, "kms_key_arn", arnIn(tKMS, p))), e("kms_key_arn", "partition "+p)))
		add(one(7, "IRSA role ARN in "+p, r("flinkstate_service_account", with(saBase, "irsa_role_arn", arnIn(tRole, p))), e("irsa_role_arn", "partition "+p)))
		add(one(7, "association role ARN in "+p, r("flinkstate_pod_identity_association", with(assocBase, "role_arn", arnIn(tRole, p))), e("role_arn", "partition "+p)))
		add(one(9, "policy_document KMS key in "+p+", region us-east-1", d("flinkstate_policy_document", map[string]any{"state_store_ids": []any{tStore}, "kms_key_arns": []any{arnIn(tKMS, p)}}),
			e("kms_key_arns[0]", "partition "+p)))
		add(one(9, "policy_document partition "+p+", KMS key in aws", d("flinkstate_policy_document", map[string]any{"state_store_ids": []any{tStore}, "partition": p, "kms_key_arns": []any{tKMS}}),
			e("kms_key_arns[0]", "kms_key_arns[0] is in the AWS partition aws, but partition is in "+p)))
	}
	for region, p := range map[string]string{"cn-north-1": "aws-cn", "cn-northwest-1": "aws-cn", "us-gov-west-1": "aws-us-gov"} {
		add(inRegion(one(7, "role OIDC provider in aws, region "+region, r("flinkstate_iam_role", roleBase),
			e("irsa.oidc_provider_arn", "the provider's region "+region+" is in "+p)), region))
		add(inRegion(one(7, "IRSA role ARN in aws, region "+region, r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole)),
			e("irsa_role_arn", "Give an ARN of "+p)), region))
		add(inRegion(one(7, "association role ARN in aws, region "+region, r("flinkstate_pod_identity_association", assocBase),
			e("role_arn", "the provider's region "+region+" is in "+p)), region))
		add(inRegion(one(7, "pod identity role KMS key in aws, region "+region, r("flinkstate_iam_role", with(podRoleBase, "kms_key_arns", []any{strings.Replace(tKMS, "us-east-1", region, 1)})),
			e("kms_key_arns[0]", "is in the AWS partition aws")), region))
	}
	add(inRegion(one(7, "role OIDC provider in aws-us-gov, region cn-north-1", r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", oidcIn("aws-us-gov"))),
		e("irsa.oidc_provider_arn", "is in the AWS partition aws-us-gov, but the provider's region cn-north-1 is in aws-cn")), "cn-north-1"))

	add(one(7, "OIDC ARN in aws for a cn-north-1 cluster", r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", strings.Replace(oidcIn("aws-cn"), "arn:aws-cn:", "arn:aws:", 1))),
		e("irsa.oidc_provider_arn", "its issuer is a cluster of cn-north-1, which is in aws-cn")))
	add(one(7, "OIDC ARN in aws-cn for a us-east-1 cluster", r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", arnIn(tOIDC, "aws-cn"))),
		e("irsa.oidc_provider_arn", "its issuer is a cluster of us-east-1, which is in aws")))

	// Buckets whose names have dots: S3's TLS certificate does not match
	// their virtual-hosted-style host, Hadoop S3A's default.
	for _, b := range []string{"a.b", "my.bucket.name", "acme.flink-state"} {
		add(one(4, "dotted store bucket "+b, dep("state.store_id", b+"/flink/orders"), e("state.store_id", "fs.s3a.path.style.access")))
		add(one(4, "dotted store bucket "+b+", path style false", dep("state.store_id", b+"/flink/orders", "flink_configuration", map[string]any{"fs.s3a.path.style.access": "false"}),
			e("state.store_id", "Bucket unreachable over TLS")))
		add(one(4, "dotted checkpoint bucket "+b, depD("state.checkpoint_dir", "s3://"+b+"/flink/orders/checkpoints"), e("state.checkpoint_dir", "whose name has dots")))
		add(one(4, "dotted ha bucket "+b, depD("state.ha_dir", "s3a://"+b+"/flink/orders/ha"), e("state.ha_dir", "whose name has dots")))
		add(one(4, "dotted restore bucket "+b, dep("job.initial_savepoint_path", "s3://"+b+"/savepoints/savepoint-1"), e("job.initial_savepoint_path", "fs.s3a.path.style.access")))
		add(one(9, "data source dotted store bucket "+b, conf("state.store_id", b+"/flink/orders"), e("state.store_id", "fs.s3a.path.style.access")))
		add(one(4, "new bucket "+b, r("flinkstate_bucket", with(bucketBase, "bucket", b)), w("bucket", "fs.s3a.path.style.access")))
		add(one(4, "new store in bucket "+b, r("flinkstate_state_store", with(storeBase, "bucket", b)), w("bucket", "fs.s3a.path.style.access")))
	}
	add(one(4, "dotted savepoint bucket, path style for another bucket", depD("state.savepoint_dir", "s3://my.bucket.name/flink/orders/savepoints",
		"flink_configuration", map[string]any{"fs.s3a.bucket.other.bucket.path.style.access": "true"}), e("state.savepoint_dir", "fs.s3a.path.style.access")))

	// Empty and white-space-only keys name no Flink option.
	for _, k := range []string{"", " ", "\t", "  \t"} {
		add(one(2, fmt.Sprintf("blank key %q", k), dep("flink_configuration", map[string]any{k: "x"}), e(fmt.Sprintf("flink_configuration[%q]", k), "empty or white space only")))
		add(one(2, fmt.Sprintf("blank sensitive key %q", k), dep("sensitive_flink_configuration", map[string]any{k: "x"}),
			e(fmt.Sprintf("sensitive_flink_configuration[%q]", k), "empty or white space only")))
		add(one(9, fmt.Sprintf("data source blank key %q", k), conf("flink_configuration", map[string]any{k: "x"}), e(fmt.Sprintf("flink_configuration[%q]", k), "empty or white space only")))
	}

	// A savepoint target outside what the deployment's role may write.
	for _, dir := range []string{"s3://other-flink-state/savepoints", "s3a://acme-flink-state/flink/payments/savepoints", "s3://acme-flink-state/flink/orders2/sp"} {
		add(planCase{rule: 8, name: "target_dir " + dir + " outside the store the deployment's directories lay out",
			res:   []res{depD(), r("flinkstate_snapshot", with(snapBase, "target_dir", dir))},
			wants: []want{at(1, e("target_dir", "outside s3://acme-flink-state/flink/orders, where flinkstate_deployment orders keeps"))}})
		add(planCase{rule: 8, name: "target_dir " + dir + " outside the role's stores",
			res:   []res{r("flinkstate_iam_role", roleBase), depD(), r("flinkstate_snapshot", with(snapBase, "target_dir", dir))},
			wants: []want{at(2, e("target_dir", "outside the state stores (s3://acme-flink-state/flink/orders/)"))}})
	}
	add(planCase{rule: 8, name: "target_dir outside the pod identity role's stores",
		res: []res{r("flinkstate_iam_role", with(podRoleBase, "state_store_ids", []any{"acme-flink-state/flink/orders", "acme-flink-state/flink/adhoc"})),
			dep("identity", "pod_identity"), r("flinkstate_snapshot", with(snapBase, "target_dir", "s3://acme-flink-state/flink/payments/sp"))},
		wants: []want{at(2, e("target_dir", "ServiceAccount data-processing/flink-orders"))}})

	return cs
}

// validCases must plan with no error (and only the listed warnings).
func validPlanCases() []planCase {
	ok := func(name string, rs ...res) planCase {
		return planCase{name: name, res: rs, okWarnings: []string{sdkWarning, maxParallelismWarning}}
	}
	clean := func(name string, rs ...res) planCase {
		return planCase{name: name, res: rs, okWarnings: []string{sdkWarning}}
	}
	// A ForSt job's operator savepoints in the format ForSt takes.
	forstNative := map[string]any{"pipeline.max-parallelism": "128", "kubernetes.operator.savepoint.format.type": "NATIVE"}
	forstOK := func(name string, rs ...res) planCase {
		return planCase{name: name, res: rs, okWarnings: []string{sdkWarning, maxParallelismWarning, "ForSt is experimental"}}
	}
	return []planCase{
		clean("the guide's deployment, plan clean", dep()),
		// ForSt: NATIVE savepoints, or the format left to the provider.
		forstOK("forst savepoint before upgrade, format unset", dep("state.backend", "forst", "state.incremental", nil, "savepoint_before_upgrade", map[string]any{},
			"flink_configuration", forstNative)),
		forstOK("native savepoint of a forst deployment", dep("state.backend", "forst", "state.incremental", nil, "flink_configuration", forstNative),
			r("flinkstate_snapshot", with(snapBase, "format_type", "NATIVE"))),
		forstOK("forst savepoint upgrades in NATIVE", dep("state.backend", "forst", "state.incremental", nil, "job.upgrade_mode", "savepoint",
			"flink_configuration", forstNative)),
		clean("stateless job without max parallelism", dep("job.upgrade_mode", "stateless", "flink_configuration", nil)),
		// StateMachineExample enables checkpointing in code (SetsOwnInterval).
		ok("savepoint mode, the job sets its own interval", dep("job.upgrade_mode", "savepoint", "state.checkpoint_interval", nil)),
		ok("the guide's deployment", dep()),
		ok("explicit directories", depD()),
		ok("s3a directories", depD("state.checkpoint_dir", "s3a://acme-flink-state/flink/orders/checkpoints/")),
		ok("image minor tag", dep("image", "flink:2.2-java17")),
		ok("application image", dep("image", "acme/orders:1.4.2")),
		ok("image by digest", dep("image", "flink@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")),
		ok("Flink 1.20.4", dep("flink_version", "1.20.4", "image", "flink:1.20.4-java17")),
		ok("Flink 2.1.3 (Iceberg 1.11.0's newest Flink)", dep("flink_version", "2.1.3", "image", "flink:2.1.3-java17")),
		ok("own local dir", dep("state.local_dir", "/data/rocksdb")),
		ok("writable volume at the local dir", dep("pod_template", "spec:\n  containers:\n  - name: flink-main-container\n    volumeMounts:\n    - name: nvme\n      mountPath: /opt/flink/state\n  volumes:\n  - name: nvme\n    hostPath: {path: /mnt/nvme}\n")),
		ok("extra keys", dep("flink_configuration", map[string]any{"metrics.reporters": "prom", "s3.connection.maximum": "64", "fs.s3a.endpoint.region": "us-east-1"})),
		ok("own jar with its interval", dep("job.jar_uri", tOwnJar, "state.checkpoint_interval", "60s")),
		ok("pod identity without IRSA", r("flinkstate_service_account", saBase), dep("identity", "pod_identity"), r("flinkstate_pod_identity_association", assocBase)),
		ok("IRSA stack", r("flinkstate_bucket", with(bucketBase, "tags", map[string]any{"app": "flink"}, "kms_key_arn", tKMS)), r("flinkstate_state_store", storeBase),
			r("flinkstate_iam_role", with(roleBase, "kms_key_arns", []any{tKMS})), r("flinkstate_service_account", with(saBase, "irsa_role_arn", tRole, "labels", map[string]any{"app.kubernetes.io/name": "flink"})),
			dep(), r("flinkstate_snapshot", snapBase)),
		ok("savepoint with its own target", noSavepointDirDep(), r("flinkstate_snapshot", with(snapBase, "target_dir", "s3://acme-flink-state/flink/orders/adhoc"))),
		ok("pod identity role", r("flinkstate_iam_role", podRoleBase)),
		ok("replication of two prefixes with delete markers", r("flinkstate_bucket_replication", with(replBase, "prefixes", []any{"flink/orders", "flink/payments"},
			"delete_marker_replication", true))),
		ok("sibling stores", r("flinkstate_state_store", storeBase), r("flinkstate_state_store", with(storeBase, "prefix", "flink/orders2")),
			r("flinkstate_state_store", with(storeBase, "bucket", "other-flink-state"))),
		ok("data source", conf()),
		// The operator sets a 5 min interval for last-state when none is
		// given (FlinkConfigBuilder.applyJobConfig): no warning.
		ok("last-state without interval", dep("state.checkpoint_interval", nil)),
		ok("data source last-state without interval", conf("state.checkpoint_interval", nil)),
		ok("smallest memory for the defaults", dep("job_manager.memory", "577m", "task_manager.memory", "982m")),
		ok("Kubernetes quantities", dep("job_manager.memory", "1Gi", "task_manager.memory", "2Gi")),
		ok("lowered overhead", dep("job_manager.memory", "512m", "task_manager.memory", "900m", "flink_configuration", map[string]any{
			"jobmanager.memory.jvm-overhead.min": "32m", "taskmanager.memory.jvm-overhead.min": "64m", "taskmanager.memory.jvm-overhead.fraction": "0.05"})),
		ok("autoscaler in range", dep("flink_configuration", map[string]any{"job.autoscaler.enabled": "true", "job.autoscaler.utilization.target": "1.0",
			"job.autoscaler.utilization.max": "1.0", "job.autoscaler.utilization.min": "0", "job.autoscaler.observed-scalability.coefficient-min": "0.01"})),
		ok("autoscaler off", dep("flink_configuration", map[string]any{"job.autoscaler.utilization.target": "1.5"})),
		ok("recorded savepoint", r("flinkstate_snapshot", with(snapBase, "already_exists", true, "path", tURI+"/savepoints/savepoint-1"))),
		// Issue 37: the valid neighbours of the refused families.
		ok("dotted bucket with path-style access", dep("state.store_id", "my.bucket.name/flink/orders", "flink_configuration", map[string]any{"fs.s3a.path.style.access": "true"})),
		ok("dotted bucket with s3. path-style access", depD("state.checkpoint_dir", "s3://a.b/flink/orders/checkpoints", "state.savepoint_dir", "s3://a.b/flink/orders/savepoints",
			"state.ha_dir", "s3://a.b/flink/orders/ha", "flink_configuration", map[string]any{"s3.path.style.access": "true"})),
		ok("dotted bucket with per-bucket path-style access", dep("state.store_id", "a.b/flink/orders", "job.initial_savepoint_path", "s3://a.b/flink/orders/savepoints/sp-1",
			"flink_configuration", map[string]any{"fs.s3a.bucket.a.b.path.style.access": "true"})),
		ok("dotted data source bucket with path-style access", conf("state.store_id", "a.b/flink/orders", "flink_configuration", map[string]any{"s3a.path.style.access": "TRUE"})),
		ok("target_dir in the store the directories lay out", depD(), r("flinkstate_snapshot", with(snapBase, "target_dir", "s3a://acme-flink-state/flink/orders/adhoc"))),
		ok("target_dir in another store the role grants", r("flinkstate_iam_role", with(roleBase, "state_store_ids", []any{tStore, "acme-flink-state/flink/adhoc"})),
			dep(), r("flinkstate_snapshot", with(snapBase, "target_dir", "s3://acme-flink-state/flink/adhoc/sp"))),
		ok("aws-us-gov KMS key in the policy document's partition", d("flinkstate_policy_document", map[string]any{"state_store_ids": []any{tStore}, "partition": "aws-us-gov",
			"kms_key_arns": []any{"arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"}})),
		inRegionOK("cn-north-1", ok("aws-cn stack in cn-north-1",
			r("flinkstate_bucket", with(bucketBase, "kms_key_arn", "arn:aws-cn:kms:cn-north-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab")),
			r("flinkstate_iam_role", with(roleBase, "irsa.oidc_provider_arn", "arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/ABC",
				"kms_key_arns", []any{"arn:aws-cn:kms:cn-north-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"})),
			r("flinkstate_service_account", with(saBase, "irsa_role_arn", "arn:aws-cn:iam::123456789012:role/flink-orders")))),
		inRegionOK("us-gov-west-1", ok("aws-us-gov Pod Identity in us-gov-west-1", r("flinkstate_pod_identity_association", with(assocBase, "role_arn", "arn:aws-us-gov:iam::123456789012:role/flink-orders")))),
	}
}

func inRegionOK(region string, c planCase) planCase { c.region = region; return c }

func noSavepointDirDep() res {
	return depD("state.savepoint_dir", nil, "job.upgrade_mode", "stateless", "state.ha_dir", nil)
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestPlanSafety_table plans every case through the protocol server,
// asserting each rule's diagnostics (errors and warnings, with their
// attribute paths) and that the whole table made no API request.
func TestPlanSafety_table(t *testing.T) {
	// It shares its loopback only with the other plan-safety tests, which
	// must make no request either: it counts from where it starts.
	t.Parallel()
	l := planLoopback()
	before, _ := l.requests()
	cases := planSafetyCases()
	perRule := map[int]int{}
	for _, c := range cases {
		perRule[c.rule]++
	}
	if len(cases) < 150 {
		t.Errorf("the table has %d rejected or warned cases, want at least 150", len(cases))
	}
	for rule := 1; rule <= 9; rule++ {
		if perRule[rule] == 0 {
			t.Errorf("rule %d has no case", rule)
		}
	}
	t.Logf("cases per rule: %v (plus %d valid configurations)", perRule, len(validPlanCases()))
	t.Run("cases", func(t *testing.T) {
		for _, c := range append(cases, validPlanCases()...) {
			t.Run(fmt.Sprintf("rule%d/%s", c.rule, c.name), func(t *testing.T) {
				t.Parallel()
				checkDiags(t, c, planThroughProtocol(t, l, c))
			})
		}
	})
	if n, seen := l.requests(); n != before {
		t.Errorf("planning made %d API requests, want none: %v", n-before, seen)
	}
}

// TestAccPlanSafety_cli runs the table's rejected cases through the
// terraform CLI (plan only): terraform itself must stop each plan with the
// rule's error, and no case may reach the API.
func TestAccPlanSafety_cli(t *testing.T) {
	skipUnlessAcc(t)
	// Its own loopback counts the requests: other tests do not reach it.
	t.Parallel()
	l := planLoopback()
	before, _ := l.requests()
	only := os.Getenv("PLAN_SAFETY_RULE") // e.g. 4: run one rule's cases
	t.Run("cases", func(t *testing.T) {
		for _, c := range planSafetyCases() {
			re := cliErrorRE(c)
			if re == nil || (only != "" && only != fmt.Sprint(c.rule)) {
				continue
			}
			t.Run(fmt.Sprintf("rule%d/%s", c.rule, c.name), func(t *testing.T) {
				resource.ParallelTest(t, resource.TestCase{
					ProtoV6ProviderFactories: testProviderFactories,
					Steps: []resource.TestStep{{
						Config:      caseHCL(t, l, c),
						PlanOnly:    true,
						ExpectError: re,
					}},
				})
			})
		}
	})
	if n, seen := l.requests(); n != before {
		t.Errorf("planning made %d API requests, want none: %v", n-before, seen)
	}
}

// TestAccPlanSafety_examples: examples/complete, the whole stack the docs
// show, still plans with no error and no API request under the safety net.
func TestAccPlanSafety_examples(t *testing.T) {
	skipUnlessAcc(t)
	l := planLoopback()
	before, _ := l.requests()
	src, err := os.ReadFile("../../examples/complete/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(src)
	// The example's own terraform and provider blocks name the registry
	// source and take the test bed's environment; here the provider is the
	// in-process one, pointed at the loopback server.
	cfg = regexp.MustCompile(`(?s)terraform \{.*?\n\}\n`).ReplaceAllString(cfg, "")
	var prov strings.Builder
	prov.WriteString("provider \"flinkstate\" {\n")
	hclBody(&prov, providerSchemaBlocks(t)["provider"], l.providerConfig(), "  ")
	prov.WriteString("}\n")
	if !strings.Contains(cfg, `provider "flinkstate" {}`) {
		t.Fatal("examples/complete/main.tf no longer has an empty provider block; update this test")
	}
	cfg = strings.Replace(cfg, `provider "flinkstate" {}`, prov.String(), 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:             cfg,
			ConfigVariables:    config.Variables{"oidc_provider_arn": config.StringVariable(tOIDC), "bucket_name": config.StringVariable("acme-flink-state")},
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
	if n, seen := l.requests(); n != before {
		t.Errorf("planning examples/complete made %d API requests, want none: %v", n-before, seen)
	}
}
