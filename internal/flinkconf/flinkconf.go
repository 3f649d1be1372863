// Package flinkconf derives what a FlinkDeployment needs to keep its state
// on S3 (flinkConfiguration keys, the operator's flinkVersion, the S3 plugin
// jar, the S3 credentials class for IRSA or Pod Identity) and checks the
// combination, as plain Go: no Terraform here. Each check cites the Flink,
// operator or AWS source it follows and is reported with the attribute path
// it concerns.
package flinkconf

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Severity of a finding.
type Severity int

const (
	Warning Severity = iota
	Error
)

// Finding is a plan-time check result about one attribute.
type Finding struct {
	Severity Severity
	Path     []string // attribute path, e.g. ["state", "min_pause"]
	Summary  string
	Detail   string
}

// OperatorFlinkVersions are the flinkVersion values the Flink Kubernetes
// Operator 1.15.0 CRD accepts.
var OperatorFlinkVersions = []string{"v1_13", "v1_14", "v1_15", "v1_16", "v1_17", "v1_18", "v1_19", "v1_20", "v2_0", "v2_1", "v2_2"}

var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

// Version is a full Flink version such as 2.2.1.
type Version struct{ Major, Minor, Patch int }

// ParseVersion parses "2.2.1" and checks that the operator knows its minor version.
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a full Flink version such as 2.2.1", s)
	}
	v := Version{}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	ok := false
	for _, e := range OperatorFlinkVersions {
		if e == v.OperatorEnum() {
			ok = true
		}
	}
	if !ok {
		return v, fmt.Errorf("Flink %s is not supported by the Flink Kubernetes Operator 1.15.0, which knows %s", s, strings.Join(displayVersions(), ", "))
	}
	if msg := checkReleased(v); msg != "" {
		return v, fmt.Errorf("Flink %s %s", s, msg)
	}
	return v, nil
}

func displayVersions() []string {
	out := make([]string, len(OperatorFlinkVersions))
	for i, e := range OperatorFlinkVersions {
		out[i] = strings.ReplaceAll(strings.TrimPrefix(e, "v"), "_", ".") + ".x"
	}
	return out
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// OperatorEnum is the operator's flinkVersion value, e.g. v2_2.
func (v Version) OperatorEnum() string { return fmt.Sprintf("v%d_%d", v.Major, v.Minor) }

// S3PluginJar is the built-in Hadoop S3 filesystem plugin of that version,
// as ENABLE_BUILT_IN_PLUGINS names it.
func (v Version) S3PluginJar() string { return "flink-s3-fs-hadoop-" + v.String() + ".jar" }

// Credentials providers of the AWS SDK for Java v1 that the Hadoop S3
// plugin (s3a) bundles.
const (
	IRSACredentialsProvider        = "com.amazonaws.auth.WebIdentityTokenCredentialsProvider"
	PodIdentityCredentialsProvider = "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"
	KubernetesHAFactory            = "org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory"
	// CredentialsProviderKey is the S3A option naming the credentials
	// class (Hadoop S3A, fs.s3a.aws.credentials.provider).
	CredentialsProviderKey = "fs.s3a.aws.credentials.provider"
	DefaultLocalDir        = "/opt/flink/state"
)

// State is the state-related part of a deployment.
type State struct {
	CheckpointDir, SavepointDir, HADir string
	Backend                            string // Backends
	ExternalizedRetention              string // Retentions
	LocalDir                           string
	// StoreURI is s3://bucket/prefix of the state store given by store_id
	// (empty without one): every directory must lie inside it.
	StoreURI string
}

// Input is everything the derivation looks at.
type Input struct {
	FlinkVersion     string
	Identity         string // Identities
	S3Plugin         string // S3Plugins; "" is S3PluginProvider
	UpgradeMode      string // UpgradeModes
	HighAvailability *bool  // nil: on with last-state, and with savepoint when there is an HA directory
	// HasJob tells whether the deployment runs a job (application mode);
	// Parallelism is job.parallelism (nil: unset).
	HasJob      bool
	Parallelism *int64
	Image       string // container image; its tag must agree with FlinkVersion
	JarURI      string // job.jar_uri
	RestorePath string // job.initial_savepoint_path ("" when unset or unknown)
	State       State

	// JobManagerMemory and TaskManagerMemory are job_manager.memory and
	// task_manager.memory ("" when unset or unknown: not checked).
	JobManagerMemory, TaskManagerMemory string

	// Values are the table's settings (Settings) by attribute, in the form
	// the provider writes; absent or "" is unset (Flink's default).
	Values map[string]string
	Extra  map[string]string // flink_configuration
	// Unwritten are provider defaults an imported object did not have
	// (the Absent* names): while their attribute is unset they stay
	// unwritten, so adopting an object does not change its spec.
	Unwritten map[string]bool
}

// Provider defaults an adopted object may lack (Input.Unwritten). Written
// to a running job they would change its spec, which the operator applies
// as an upgrade: a restart (flink-kubernetes-operator release-1.15.0,
// ReflectiveDiffBuilder over FlinkDeploymentSpec).
const (
	AbsentMode      = "spec.mode"                      // mode native (null runs native too: KubernetesDeploymentMode.getDeploymentMode)
	AbsentBackend   = "state.backend.type"             // rocksdb (Flink's default is hashmap: StateBackendOptions.STATE_BACKEND)
	AbsentLocalDir  = "state.backend.rocksdb.localdir" // the local directory and its emptyDir
	AbsentRetention = RetentionKey                     // RETAIN_ON_CANCELLATION for savepoint and last-state
	AbsentStorage   = "execution.checkpointing.storage"
	AbsentFSGroup   = "podTemplate.spec.securityContext.fsGroup"
)

// HAEnabled tells whether Kubernetes HA is on: explicitly, or by default
// for the stateful upgrade modes. The operator's safety nets for stateful
// jobs need HA (flink-kubernetes-operator release-1.15.0: recovery of a
// lost JobManager, AbstractFlinkResourceReconciler.shouldRecoverDeployment;
// the last-state fallback of a savepoint upgrade whose job is not running,
// AbstractJobReconciler.getJobUpgrade; rollback, DefaultValidator; the check
// that a failed job's recorded savepoint is not stale,
// AbstractJobReconciler.useStatusSavepoint). With savepoint upgrades the
// default needs an HA directory (the store's, or state.ha_dir); without one
// HA stays off and the plan says what that gives up (haOffFinding).
func (in Input) HAEnabled() bool {
	if in.HighAvailability != nil {
		return *in.HighAvailability
	}
	switch in.UpgradeMode {
	case UpgradeLastState:
		return true
	case UpgradeSavepoint:
		return in.State.HADir != ""
	}
	return false
}

// haOffDetail says what a stateful deployment without HA gives up, with the
// operator source of each (flink-kubernetes-operator release-1.15.0).
const haOffDetail = "Without Kubernetes HA the operator: cannot recover a lost JobManager deployment " +
	"(AbstractFlinkResourceReconciler.shouldRecoverDeployment: \"Could not recover lost jobmanager deployment without HA enabled\"); " +
	"cannot fall back to the last checkpoint when a savepoint upgrade finds the job not running (AbstractJobReconciler.getJobUpgrade, " +
	"kubernetes.operator.job.upgrade.last-state-fallback.enabled); cannot roll back (DefaultValidator: \"HA must be enabled for rollback " +
	"support.\"); restores a failed or finished job from the savepoint it recorded last, which may be older than the job's last " +
	"checkpoint (AbstractJobReconciler.useStatusSavepoint); and runs a last-state upgrade by cancelling the job and restoring its " +
	"latest checkpoint instead of keeping HA metadata (AbstractJobReconciler.allowLastStateCancel)."

// WritesPluginEnv tells whether the provider adds ENABLE_BUILT_IN_PLUGINS
// with the S3 plugin to the main container: unless the image brings the
// plugin (S3PluginImage).
func (in Input) WritesPluginEnv() bool { return in.S3Plugin != S3PluginImage }

// LocalDir is the RocksDB/ForSt local working directory (an emptyDir).
func (in Input) LocalDir() string {
	if in.State.LocalDir != "" {
		return in.State.LocalDir
	}
	return DefaultLocalDir
}

// UsesLocalDir tells whether the backend keeps local files that need a volume.
func (in Input) UsesLocalDir() bool {
	if in.Unwritten[AbsentLocalDir] && in.State.LocalDir == "" {
		return false
	}
	return in.State.Backend == BackendRocksDB || in.State.Backend == BackendForSt
}

// keyAttr maps every configuration key the provider manages to the
// attribute that sets it (for "a key the provider manages" errors): the
// keys Derive writes itself, and the table's (Settings).
var keyAttr = func() map[string]string {
	m := map[string]string{}
	for k, a := range specialKeyAttr {
		m[k] = a
	}
	for _, s := range Settings {
		m[s.Key] = s.Attr
	}
	return m
}()

// specialKeyAttr are the managed keys Derive writes from more than one
// attribute, or with a default of its own.
var specialKeyAttr = map[string]string{
	"state.backend.type":                                        "state.backend",
	"state.backend.rocksdb.localdir":                            "state.local_dir",
	"state.backend.forst.local-dir":                             "state.local_dir",
	"state.backend.incremental":                                 "state.incremental",
	"execution.checkpointing.storage":                           "state",
	"execution.checkpointing.dir":                               "state.checkpoint_dir",
	"execution.checkpointing.savepoint-dir":                     "state.savepoint_dir",
	"execution.checkpointing.externalized-checkpoint-retention": "state.externalized_retention",
	"state.checkpoints.dir":                                     "state.checkpoint_dir",
	"state.savepoints.dir":                                      "state.savepoint_dir",
	"high-availability.type":                                    "high_availability",
	"high-availability":                                         "high_availability",
	"high-availability.storageDir":                              "state.ha_dir",
	CredentialsProviderKey:                                      "identity",
	"execution.savepoint-restore-mode":                          "job.claim_mode",
}

// ClaimModeKey is Flink's StateRecoveryOptions.RESTORE_MODE
// (execution.state-recovery.claim-mode, deprecated key
// execution.savepoint-restore-mode; from Flink 1.20, in 2.x values CLAIM and
// NO_CLAIM, default NO_CLAIM; 1.20 also has the deprecated LEGACY, which the
// provider does not offer). CLAIM hands the restored snapshot to the job,
// which deletes it once newer checkpoints subsume it.
const ClaimModeKey = "execution.state-recovery.claim-mode"

// RetentionKey is Flink's
// CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION; its default,
// NO_EXTERNALIZED_CHECKPOINTS, deletes checkpoints when the job is cancelled.
const RetentionKey = "execution.checkpointing.externalized-checkpoint-retention"

// DefaultRetention is the externalized_retention the provider writes when
// none is given: RETAIN_ON_CANCELLATION for last-state and savepoint
// upgrades, which resume from retained state (the operator defaults a job's
// configuration to it too: FlinkConfigBuilder.applyJobConfig,
// flink-kubernetes-operator release-1.15.0), nothing otherwise.
func DefaultRetention(upgradeMode string) string {
	if upgradeMode == UpgradeLastState || upgradeMode == UpgradeSavepoint {
		return RetainOnCancellation
	}
	return ""
}

// ManagedKeys lists the configuration keys the provider owns, sorted.
func ManagedKeys() []string {
	out := make([]string, 0, len(keyAttr))
	for k := range keyAttr {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Derive returns the flinkConfiguration the provider writes (managed keys
// plus the user's extra keys) and the findings of the plan-time checks.
// With any Error finding the configuration must not be applied.
func Derive(in Input) (map[string]string, []Finding) {
	var fs []Finding
	add := func(sev Severity, summary, detail string, path ...string) {
		fs = append(fs, Finding{Severity: sev, Path: path, Summary: summary, Detail: detail})
	}
	cfg := map[string]string{}

	v, err := ParseVersion(in.FlinkVersion)
	if err != nil {
		add(Error, "Unsupported Flink version", err.Error()+".", "flink_version")
	} else if msg := ImageVersionMismatch(in.Image, in.FlinkVersion); msg != "" {
		add(Error, "Image and Flink version disagree", msg+".", "image")
	}
	if err == nil && NewerPatch(v) {
		add(Warning, "Flink patch release newer than the provider knows",
			fmt.Sprintf("Flink %s is newer than the %d.%d releases the provider knows (up to %d.%d.%d); it is accepted, and the provider "+
				"enables %s and writes the %d.%d keys. Check that the image is Flink %s and has that jar in /opt/flink/opt.",
				v, v.Major, v.Minor, v.Major, v.Minor, newestPatch(v), v.S3PluginJar(), v.Major, v.Minor, v), "flink_version")
	}
	if err == nil && v.Major == 2 && v.Minor == 2 {
		detail := "The Flink 2.2 Hadoop S3 plugin (" + v.S3PluginJar() + ") bundles Hadoop 3.3.4 and the AWS SDK for Java 1.12.779, " +
			"which reached end of support on 2025-12-31. The provider uses that SDK's real v1 credentials classes; do not swap " +
			"single jars or class names between SDK generations. Assess the file system's support and security for production."
		if in.Identity == IdentityPodIdentity {
			detail += " For EKS Pod Identity, SDK 1.12.779 meets the documented minimum (1.12.746); the container-credentials chain " +
				PodIdentityCredentialsProvider + " is used."
		}
		add(Warning, "S3 plugin bundles an AWS SDK past end of support", detail, "flink_version")
	}

	if err == nil && in.Identity == IdentityPodIdentity && v == (Version{1, 20, 0}) {
		// The 1.20.0 plugin bundles aws-java-sdk-core 1.12.319 (its
		// META-INF/NOTICE and com/amazonaws/sdk/versionInfo.properties);
		// FLINK-36643 raised it to 1.12.779 on the 1.20 branch after 1.20.0.
		// EKS Pod Identity needs the SDK for Java v1 1.12.746 or later (EKS
		// User Guide, "Use pod identity with the AWS SDK"): older SDKs do
		// not send the agent's authorization token, so the job gets no
		// credentials and takes no checkpoint.
		add(Error, "Flink 1.20.0's S3 plugin is too old for EKS Pod Identity",
			"The flink-s3-fs-hadoop-1.20.0.jar plugin bundles the AWS SDK for Java 1.12.319; EKS Pod Identity needs 1.12.746 or later, "+
				"so the job would get no S3 credentials. Use flink_version 1.20.1 or later (their plugin bundles 1.12.779, FLINK-36643), "+
				"or identity = \"irsa\".", "identity")
	}
	switch in.Identity {
	case IdentityIRSA:
		cfg[CredentialsProviderKey] = IRSACredentialsProvider
	case IdentityPodIdentity:
		cfg[CredentialsProviderKey] = PodIdentityCredentialsProvider
	case "":
		// Unset: no credentials class is written, and one the object has
		// is left to whoever wrote it (an adopted object keeps its own).
	default:
		add(Error, "Invalid identity", fmt.Sprintf("identity must be irsa or pod_identity (or unset), got %q", in.Identity), "identity")
	}

	writeSettings(in, cfg, add)
	if err == nil && v.before(ISODurationsFrom) {
		for _, s := range Settings {
			if val := in.Values[s.Attr]; s.Kind == KindDuration && IsISODuration(val) {
				add(Error, "ISO-8601 durations need Flink 2.1", fmt.Sprintf("%s %q is an ISO-8601 duration, which Flink reads from "+
					"2.1.0 on (TimeUtils.parseDuration); Flink %s refuses it (\"text does not start with a number\") and the job "+
					"would not start. Write it in Flink's own form, e.g. 60s or 10 min.", s.Attr, val, v), s.Path()...)
			}
		}
	}

	st := in.State
	switch st.Backend {
	case "":
		// Only an adopted object without state.backend.type (Unwritten):
		// Flink's default applies.
	case BackendRocksDB, BackendHashMap, BackendForSt:
		cfg["state.backend.type"] = st.Backend
	default:
		add(Error, "Invalid state backend", fmt.Sprintf("backend must be rocksdb, hashmap or forst, got %q", st.Backend), "state", "backend")
	}
	if st.Backend == BackendForSt && err == nil && v.Major < 2 {
		// ForSt arrived with Flink 2.0's disaggregated state (FLIP-423/FLIP-427).
		add(Error, "ForSt needs Flink 2.0 or later", fmt.Sprintf("Flink %s has no ForSt state backend: use rocksdb or hashmap, or a Flink 2.x image.", in.FlinkVersion),
			"state", "backend")
	} else if st.Backend == BackendForSt {
		add(Warning, "ForSt is experimental", "The ForSt state backend is experimental in Flink 2.2: check the asynchronous state APIs "+
			"and its snapshot restrictions before relying on it.", "state", "backend")
	}
	if in.UsesLocalDir() {
		if st.Backend == BackendForSt {
			cfg["state.backend.forst.local-dir"] = in.LocalDir()
		} else {
			cfg["state.backend.rocksdb.localdir"] = in.LocalDir()
		}
		if msg := ValidateLocalDir(in.LocalDir()); msg != "" {
			add(Error, "Invalid local directory", fmt.Sprintf("state.local_dir %q %s.", in.LocalDir(), msg), "state", "local_dir")
		}
	}
	if !in.Unwritten[AbsentStorage] {
		cfg["execution.checkpointing.storage"] = "filesystem"
	}
	if st.CheckpointDir != "" {
		cfg["execution.checkpointing.dir"] = st.CheckpointDir
	}
	if st.SavepointDir != "" {
		cfg["execution.checkpointing.savepoint-dir"] = st.SavepointDir
	}
	checkDirs(st, add)
	checkBuckets(in, add)

	interval, minPause := in.Value(AttrCheckpointInterval), in.Value(AttrMinPause)
	iv, ivErr := ParseDuration(interval)
	if mp, err := ParseDuration(minPause); interval != "" && minPause != "" && ivErr == nil && err == nil && mp > iv && ValidateCheckpointInterval(interval) == "" {
		add(Warning, "Checkpoints will not happen every interval",
			fmt.Sprintf("min_pause (%s) is longer than checkpoint_interval (%s): a checkpoint starts at the earliest min_pause after the "+
				"previous one ended, so snapshots come less often than the interval says. Application code may also override the interval "+
				"(StateMachineExample sets 2 s in code); check the effective runtime settings.", minPause, interval),
			"state", "min_pause")
	}
	if interval != "" && ivErr == nil && ValidateCheckpointInterval(interval) == "" {
		if jar, own, ok := ownInterval(in.JarURI); ok && iv != own {
			add(Warning, "The job sets its own checkpoint interval",
				fmt.Sprintf("%s sets a checkpoint interval of %s in code, which wins over state.checkpoint_interval (%s): checkpoints "+
					"will come every %s. Change the interval in the job's code, or set state.checkpoint_interval = \"%s\" so the "+
					"configuration says what happens.", jar, own, interval, own, own),
				"state", "checkpoint_interval")
		}
	}
	// No warning for last-state without an interval: the operator sets
	// execution.checkpointing.interval to 5 min when it is absent and the
	// upgrade mode is last-state (FlinkConfigBuilder.applyJobConfig,
	// DEFAULT_CHECKPOINTING_INTERVAL, flink-kubernetes-operator release-1.15.0).
	// With savepoint it sets none, and Flink checkpoints only when an
	// interval is set (CheckpointingOptions.CHECKPOINTING_INTERVAL has no
	// default; CheckpointConfig.getCheckpointInterval is -1 without it and
	// isCheckpointingEnabled false, flink-core/flink-runtime release-2.2.1).
	// No other key enables it: Flink 2.2.1's option has no deprecated key,
	// and execution.checkpointing.interval in flink_configuration is refused
	// as state.checkpoint_interval's.
	if in.UpgradeMode == UpgradeSavepoint && interval == "" && !ownsInterval(in.JarURI) {
		add(Warning, "No checkpoint interval",
			"upgrade_mode = \"savepoint\" and no state.checkpoint_interval: Flink takes no checkpoints unless an interval is set "+
				"(execution.checkpointing.interval has no default; the operator sets 5 min for last-state only, FlinkConfigBuilder."+
				"applyJobConfig). The job then keeps no checkpoint: a restart after a failure loses the state since the last "+
				"savepoint, a savepoint upgrade that finds the job not running falls back to last-state with no checkpoint to restore, "+
				"and flinkstate_latest_checkpoint finds nothing. Set state.checkpoint_interval (e.g. \"60s\"). If the job's own "+
				"code enables checkpointing (env.enableCheckpointing), this warning can be ignored.",
			"state", "checkpoint_interval")
	}
	if inc := in.BoolValue(AttrIncremental); inc != nil && *inc && st.Backend == BackendHashMap {
		add(Warning, "hashmap takes no incremental checkpoints",
			"state.incremental = true has no effect with the hashmap backend: every checkpoint is a full copy of the state "+
				"(only rocksdb and forst checkpoint incrementally). Use backend = \"rocksdb\" or drop incremental.",
			"state", "incremental")
	}
	if st.ExternalizedRetention != "" {
		cfg[RetentionKey] = st.ExternalizedRetention
	} else if d := DefaultRetention(in.UpgradeMode); d != "" && !in.Unwritten[AbsentRetention] {
		cfg[RetentionKey] = d
	}
	if st.ExternalizedRetention == DeleteOnCancellation {
		// Flink deletes a job's retained checkpoints when it is cancelled
		// (CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION). The
		// operator cancels on a savepoint redeploy
		// (AbstractJobReconciler.redeployWithSavepoint), on a last-state
		// upgrade or suspend without HA metadata (allowLastStateCancel,
		// SuspendMode.CANCEL: it then restores the latest checkpoint), and on
		// delete (ApplicationReconciler.cleanupInternal, savepoint-on-deletion
		// off by default).
		cancels := "the operator cancels the job on a savepoint redeploy (a new initial_savepoint_path), on a last-state upgrade or " +
			"suspend without HA metadata (then restoring from the latest checkpoint), and on destroy; with DELETE_ON_CANCELLATION " +
			"Flink deletes the retained checkpoints at that cancel"
		if in.UpgradeMode == UpgradeLastState || in.UpgradeMode == UpgradeSavepoint {
			add(Error, "Checkpoints deleted on cancellation",
				fmt.Sprintf("state.externalized_retention = \"DELETE_ON_CANCELLATION\" with upgrade_mode = %q: %s, including the one "+
					"a restore needs. Use RETAIN_ON_CANCELLATION (the default for this upgrade mode).", in.UpgradeMode, cancels),
				"state", "externalized_retention")
		} else {
			add(Warning, "Checkpoints deleted on cancellation",
				"state.externalized_retention = \"DELETE_ON_CANCELLATION\": "+cancels+", so no checkpoint is left to restore from "+
					"after an upgrade or destroy. Use RETAIN_ON_CANCELLATION to keep them.",
				"state", "externalized_retention")
		}
	}

	if in.HAEnabled() {
		cfg["high-availability.type"] = KubernetesHAFactory
		if st.HADir == "" {
			add(Error, "High availability needs a storage directory",
				"Kubernetes HA keeps its metadata in high-availability.storageDir: set state.ha_dir or state.store_id.", "state", "ha_dir")
		} else {
			cfg["high-availability.storageDir"] = st.HADir
		}
	}
	if (in.UpgradeMode == UpgradeLastState || in.UpgradeMode == UpgradeSavepoint) && !in.HAEnabled() {
		// The operator allows stateful upgrade modes without HA
		// (DefaultValidator has no such rule; its job-management docs:
		// last-state restores from HA metadata or the last checkpoint), so
		// this is said, not refused.
		why := "high_availability = false"
		if in.HighAvailability == nil {
			why = "no HA directory (state.ha_dir or state.store_id), so high availability is off"
		}
		add(Warning, "Stateful upgrades without high availability",
			fmt.Sprintf("upgrade_mode = %q with %s. %s Keep high_availability on (the default for last-state and savepoint) "+
				"with an HA directory, or set high_availability = false to accept this.", in.UpgradeMode, why, haOffDetail), "high_availability")
	}
	switch in.UpgradeMode {
	case UpgradeLastState:
		if st.CheckpointDir == "" {
			// DefaultValidator.validateJobSpec: "Checkpoint directory[%s] must
			// be defined for last-state and savepoint upgrade modes".
			add(Error, "last-state upgrades need checkpoints",
				"upgrade_mode = \"last-state\" resumes from the latest retained checkpoint: set state.checkpoint_dir or state.store_id.", "state", "checkpoint_dir")
		}
		if st.ExternalizedRetention == NoExternalized {
			add(Error, "last-state upgrades need retained checkpoints",
				"upgrade_mode = \"last-state\" needs checkpoints retained on cancellation, not NO_EXTERNALIZED_CHECKPOINTS.", "state", "externalized_retention")
		}
	case UpgradeSavepoint:
		if st.CheckpointDir == "" {
			add(Error, "savepoint upgrades need checkpoints",
				"The operator refuses upgrade_mode = \"savepoint\" without a checkpoint directory (DefaultValidator.validateJobSpec: "+
					"\"Checkpoint directory must be defined for last-state and savepoint upgrade modes\"): set state.checkpoint_dir or state.store_id.",
				"state", "checkpoint_dir")
		}
		if st.SavepointDir == "" {
			add(Error, "savepoint upgrades need a savepoint directory",
				"upgrade_mode = \"savepoint\" takes a savepoint before each upgrade: set state.savepoint_dir or state.store_id.", "state", "savepoint_dir")
		}
	}

	operatorRules(in, add)
	memoryRules(in, add)
	autoscalerRules(in, add)
	parallelismRules(in, add)
	if in.HasJob && (in.Parallelism == nil || *in.Parallelism < 1) {
		add(Error, "Job parallelism required",
			"Set job.parallelism (at least 1): the operator's JobSpec.parallelism is an int that defaults to 0, and its "+
				"DefaultValidator.validateJobSpec refuses it (\"Job parallelism must be larger than 0\"); the deployment would never start.",
			"job", "parallelism")
	}

	keys := make([]string, 0, len(in.Extra))
	for k := range in.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msg := ValidateExtraKey(k); msg != "" {
			summary := "Key managed by the provider"
			if IsStaticCredential(k) {
				summary = "Static AWS credentials in flink_configuration"
			}
			add(Error, summary, fmt.Sprintf("flink_configuration: the key %q %s.", k, msg), "flink_configuration", k)
			continue
		}
		cfg[k] = in.Extra[k]
	}
	return cfg, fs
}

var durationRE = regexp.MustCompile(`^(\d+)\s*([a-zA-Zµ]*)$`)

// ParseDuration parses Flink's duration syntax ("60s", "2 s", "10 min",
// "500ms", "1h"; a bare number is milliseconds, as in Flink) and the
// ISO-8601 form ("PT1M", "PT0.5S", "P1DT2H") that Flink 2.1 and later read
// too (IsISODuration; ISODurationsFrom says which versions).
func ParseDuration(s string) (time.Duration, error) {
	if IsISODuration(s) {
		return parseISODuration(s)
	}
	m := durationRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a duration such as 60s, 10 min, 500 ms or PT1M", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	// The unit labels of Flink's TimeUtils.TimeUnit (flink-core,
	// org.apache.flink.util.TimeUtils, 2.2.1): singular labels have no
	// plural ("min" and "m", but no "mins"), case-insensitive.
	var unit time.Duration
	switch strings.ToLower(m[2]) {
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		unit = time.Nanosecond
	case "µs", "micro", "micros", "microsecond", "microseconds":
		unit = time.Microsecond
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		unit = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		unit = time.Second
	case "m", "min", "minute", "minutes":
		unit = time.Minute
	case "h", "hour", "hours":
		unit = time.Hour
	case "d", "day", "days":
		unit = 24 * time.Hour
	default:
		return 0, fmt.Errorf("%q has an unknown unit %q (use ms, s, min, h or d)", s, m[2])
	}
	return time.Duration(n) * unit, nil
}

// ISODurationsFrom is the first Flink release whose TimeUtils.parseDuration
// reads ISO-8601 durations: from flink-core 2.1.0 on, a value that does not
// start with a digit is read with java.time.Duration.parse, and a negative
// result is refused ("negative duration is not supported"). In 1.20.x and
// 2.0.x (checked in flink-core 1.20.5 and 2.0.2) such a value fails with
// "text does not start with a number": the job would not start.
var ISODurationsFrom = Version{Major: 2, Minor: 1, Patch: 0}

// IsISODuration tells whether s is written in the ISO-8601 form (it starts
// with a sign or P, where Flink's own syntax starts with a digit).
func IsISODuration(s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && (t[0] == 'P' || t[0] == 'p' || t[0] == '-' || t[0] == '+')
}

// isoDurationRE is the grammar of java.time.Duration.parse (JDK 17 and 21:
// "[-+]PnDTnHnMn.nS", case-insensitive, each number signed, at most nine
// fraction digits, "PT" or "P" alone refused).
var isoDurationRE = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// parseISODuration reads an ISO-8601 duration as Flink 2.1+ does
// (java.time.Duration.parse, then negative refused). A duration beyond
// about 292 years (Go's time.Duration) is refused too: no setting of the
// provider's table wants one.
func parseISODuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	m := isoDurationRE.FindStringSubmatch(t)
	if m == nil || (m[2] == "" && m[3] == "") || strings.EqualFold(m[3], "T") {
		return 0, fmt.Errorf("%q is not an ISO-8601 duration such as PT1M, PT30S or PT0.5S", s)
	}
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	var secs int64
	var nanos int64
	overflow := false
	addPart := func(num string, unit int64) {
		if num == "" || overflow {
			return
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > maxSeconds/unit || n < -maxSeconds/unit {
			overflow = true
			return
		}
		secs += n * unit
		if secs > maxSeconds || secs < -maxSeconds {
			overflow = true
		}
	}
	addPart(m[2], 86400)
	addPart(m[4], 3600)
	addPart(m[5], 60)
	addPart(m[6], 1)
	if f := m[7]; f != "" && !overflow {
		n, _ := strconv.ParseInt((f + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			n = -n // the fraction takes the seconds' sign (Duration.parse)
		}
		nanos = n
	}
	if overflow {
		return 0, fmt.Errorf("%q is longer than the provider can check (about 292 years)", s)
	}
	d := time.Duration(secs)*time.Second + time.Duration(nanos)
	if m[1] == "-" {
		d = -d
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: Flink refuses negative durations", s)
	}
	return d, nil
}

// ValidMemory tells whether the operator can read s as a memory size
// (ParseResourceMemory): 2048m, 2g, 1024 mb, 2Gi.
func ValidMemory(s string) bool { _, err := ParseResourceMemory(s); return err == nil }

// NewestPatch is the newest release of a minor version ("2.2") the provider
// knows; false for a minor it does not know.
func NewestPatch(minor string) (int, bool) {
	patches, ok := ReleasedVersions[minor]
	n := 0
	for _, p := range patches {
		n = max(n, p)
	}
	return n, ok && len(patches) > 0
}

func newestPatch(v Version) int {
	n, _ := NewestPatch(fmt.Sprintf("%d.%d", v.Major, v.Minor))
	return n
}
