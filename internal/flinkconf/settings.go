package flinkconf

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind says how an attribute's value is written and how Flink parses it.
type Kind int

const (
	KindString   Kind = iota
	KindDuration      // Flink's TimeUtils.parseDuration syntax ("60s", "10 min")
	KindInt
	KindBool
	KindEnum // one of Setting.Values, Flink reads it case-insensitively
)

// Identities the provider writes a credentials class for (identity).
const (
	IdentityIRSA        = "irsa"
	IdentityPodIdentity = "pod_identity"
)

// Identities are the values of identity.
var Identities = []string{IdentityIRSA, IdentityPodIdentity}

// Who enables the Hadoop S3 file system plugin (s3_plugin, Input.S3Plugin).
// Flink loads a file system plugin only from its own folder under
// /opt/flink/plugins (Flink docs, "Amazon S3": "copy the respective JAR file
// from the opt directory to the plugins directory"); the official image's
// docker-entrypoint.sh (apache/flink-docker, copy_plugins_if_required)
// links each jar ENABLE_BUILT_IN_PLUGINS names from /opt/flink/opt there
// when the container starts. An image built with the plugin already in
// /opt/flink/plugins needs no variable.
const (
	// S3PluginProvider: the provider adds ENABLE_BUILT_IN_PLUGINS naming
	// the plugin jar of flink_version to the main container (the default).
	S3PluginProvider = "provider"
	// S3PluginImage: the image brings the plugin; the provider writes no
	// variable (what the user's pod template has stays as it is).
	S3PluginImage = "image"
)

// S3Plugins are the values of s3_plugin.
var S3Plugins = []string{S3PluginProvider, S3PluginImage}

// Upgrade modes of the operator's JobSpec.upgradeMode (job.upgrade_mode).
const (
	UpgradeLastState = "last-state"
	UpgradeSavepoint = "savepoint"
	UpgradeStateless = "stateless"
)

// UpgradeModes are the values of job.upgrade_mode.
var UpgradeModes = []string{UpgradeLastState, UpgradeSavepoint, UpgradeStateless}

// State backends of StateBackendOptions.STATE_BACKEND (state.backend).
const (
	BackendRocksDB = "rocksdb"
	BackendHashMap = "hashmap"
	BackendForSt   = "forst"
)

// SavepointFormatFor is the format of a savepoint the provider asks for of
// a job whose state backend is backend: requested, or CANONICAL when none
// is — except that ForSt takes NATIVE savepoints only
// (ForStStateBackend.supportsSavepointFormat returns true for NATIVE alone,
// FLINK-37301; flink-statebackend-forst release-2.2.0), so NATIVE then, and
// ok is false when CANONICAL was asked for.
func SavepointFormatFor(backend, requested string) (format string, ok bool) {
	if strings.EqualFold(strings.TrimSpace(backend), BackendForSt) {
		return "NATIVE", requested == "" || requested == "NATIVE"
	}
	if requested == "" {
		return "CANONICAL", true
	}
	return requested, true
}

// ForStFormatAdvice is what to do when a CANONICAL savepoint is asked of a
// ForSt job.
const ForStFormatAdvice = "ForSt takes NATIVE savepoints only (ForStStateBackend.supportsSavepointFormat, FLINK-37301): Flink would " +
	"fail a CANONICAL one."

// Backends are the values of state.backend.
var Backends = []string{BackendRocksDB, BackendHashMap, BackendForSt}

// Values of CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION
// (state.externalized_retention).
const (
	RetainOnCancellation = "RETAIN_ON_CANCELLATION"
	DeleteOnCancellation = "DELETE_ON_CANCELLATION"
	NoExternalized       = "NO_EXTERNALIZED_CHECKPOINTS"
)

// Retentions are the values of state.externalized_retention.
var Retentions = []string{RetainOnCancellation, DeleteOnCancellation, NoExternalized}

// Values of job.claim_mode (StateRecoveryOptions.RESTORE_MODE).
const (
	ClaimModeClaim   = "CLAIM"
	ClaimModeNoClaim = "NO_CLAIM"
)

// Attributes of the table's settings that Derive's cross-setting checks
// read (Input.Value).
const (
	AttrCheckpointInterval = "state.checkpoint_interval"
	AttrMinPause           = "state.min_pause"
	AttrIncremental        = "state.incremental"
	AttrTaskSlots          = "task_manager.task_slots"
	AttrClaimMode          = "job.claim_mode"
)

// Setting is one flinkConfiguration key the provider writes straight from
// one attribute: the only declaration of it. Derive writes and checks it,
// flinkdeploy.ParseConfiguration reads it back on import, keyAttr (so
// ManagedKeys and "a key the provider manages") and Equivalent know it,
// and the provider builds the attribute's schema (description, validator)
// and its conversion from it. Its value travels as a string (Input.Values,
// flinkdeploy.Settings.Values) in the form the provider writes.
//
// Every flinkConfiguration key is part of the spec the operator diffs
// (flink-kubernetes-operator release-1.15.0, ReflectiveDiffBuilder over
// FlinkDeploymentSpec): changing one is an upgrade, a job restart, unless
// the operator ignores its prefix (IgnoredConfigKey), which no setting here
// has (flinkdeploy.TestSettingsTable).
//
// The keys whose value is not one attribute's (the directories, the
// backend and its local directory, the credentials class, HA, the storage
// and the retention default) are written by Derive itself and listed in
// keyAttr directly.
type Setting struct {
	// Attr is the attribute's path in flinkstate_deployment, block first
	// ("state.min_pause"); the flinkstate_flink_configuration data source
	// has the same attributes (task_slots at its root).
	Attr string
	Key  string
	Kind Kind
	// Values are an enum's values, as the provider writes them.
	Values []string
	// MinInt is the least value of a KindInt (Flink refuses less).
	MinInt int64
	// Check says what is wrong with a well-formed value ("" if nothing),
	// as a sentence after the value ("is below ...").
	Check func(string) string
	// CheckRule says in a few words what Check wants (validators).
	CheckRule string
	// Label names the attribute in messages ("checkpoint interval").
	Label       string
	Description string
}

// Name is the attribute's name within its block ("min_pause").
func (s Setting) Name() string { return s.Attr[strings.LastIndex(s.Attr, ".")+1:] }

// Path is the attribute path of findings about it.
func (s Setting) Path() []string { return strings.Split(s.Attr, ".") }

// Block is the block the attribute is in ("state").
func (s Setting) Block() string {
	if i := strings.LastIndex(s.Attr, "."); i >= 0 {
		return s.Attr[:i]
	}
	return ""
}

// Settings are every single-attribute setting, in the order Derive checks
// them.
var Settings = []Setting{
	// TaskManagerOptions.NUM_TASK_SLOTS.
	{Attr: AttrTaskSlots, Key: "taskmanager.numberOfTaskSlots", Kind: KindInt, MinInt: 1, Label: "task slots",
		Description: "taskmanager.numberOfTaskSlots."},
	// CheckpointingOptions.CHECKPOINTING_INTERVAL, MIN_PAUSE_BETWEEN_CHECKPOINTS,
	// CHECKPOINTING_TIMEOUT (flink-core release-2.2.1).
	{Attr: AttrCheckpointInterval, Key: "execution.checkpointing.interval", Kind: KindDuration, Check: ValidateCheckpointInterval,
		CheckRule: "a Flink duration of at least 10 ms", Label: "checkpoint interval",
		Description: "execution.checkpointing.interval, e.g. `60s`. Application code may override it."},
	{Attr: AttrMinPause, Key: "execution.checkpointing.min-pause", Kind: KindDuration,
		Description: "execution.checkpointing.min-pause, e.g. `30s`."},
	{Attr: "state.timeout", Key: "execution.checkpointing.timeout", Kind: KindDuration, Check: ValidateCheckpointTimeout,
		CheckRule: "a Flink duration of at least 10 ms", Label: "checkpoint timeout",
		Description: "execution.checkpointing.timeout, e.g. `10 min`."},
	// CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE (CheckpointingMode).
	{Attr: "state.mode", Key: "execution.checkpointing.mode", Kind: KindEnum, Values: []string{"EXACTLY_ONCE", "AT_LEAST_ONCE"},
		Label:       "checkpointing mode",
		Description: "execution.checkpointing.mode: `EXACTLY_ONCE` or `AT_LEAST_ONCE`."},
	// CheckpointingOptions.INCREMENTAL_CHECKPOINTS (deprecated key
	// state.backend.incremental).
	{Attr: AttrIncremental, Key: "execution.checkpointing.incremental", Kind: KindBool,
		Description: "execution.checkpointing.incremental. Incremental checkpoints share files: restoring needs every file a checkpoint references."},
	// CheckpointingOptions.MAX_RETAINED_CHECKPOINTS (deprecated key
	// state.checkpoints.num-retained).
	{Attr: "state.num_retained", Key: "execution.checkpointing.num-retained", Kind: KindInt, MinInt: 1, Label: "num_retained",
		Description: "execution.checkpointing.num-retained: completed checkpoints kept."},
	// StateRecoveryOptions.RESTORE_MODE (ClaimModeKey): every Flink version
	// the provider accepts (1.20 and later) reads it.
	{Attr: AttrClaimMode, Key: ClaimModeKey, Kind: KindEnum, Values: []string{ClaimModeClaim, ClaimModeNoClaim}, Label: "claim mode",
		Description: "execution.state-recovery.claim-mode: `NO_CLAIM` (Flink's default: the restored snapshot stays yours) or `CLAIM` " +
			"(the job owns it and may delete it once newer checkpoints subsume it)."},
}

// SettingsIn are the settings of one block ("state"), in table order.
func SettingsIn(block string) []Setting {
	var out []Setting
	for _, s := range Settings {
		if s.Block() == block {
			out = append(out, s)
		}
	}
	return out
}

// SettingByAttr finds a setting by its attribute.
func SettingByAttr(attr string) (Setting, bool) {
	for _, s := range Settings {
		if s.Attr == attr {
			return s, true
		}
	}
	return Setting{}, false
}

// Validate says what is wrong with a value of the setting: the summary and
// the detail of the finding, or "" when it is fine. The texts are the
// ones SettingChecks documents.
func (s Setting) Validate(v string) (summary, detail string) {
	label := s.Label
	if label == "" {
		label = strings.ReplaceAll(s.Name(), "_", " ")
	}
	switch s.Kind {
	case KindDuration:
		if _, err := ParseDuration(v); err != nil {
			return "Invalid duration", fmt.Sprintf("%s: %s", s.Attr, err)
		}
	case KindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < s.MinInt {
			return "Invalid " + label, fmt.Sprintf("%s must be at least %d", s.Name(), s.MinInt)
		}
	case KindEnum:
		for _, e := range s.Values {
			if v == e {
				return "", ""
			}
		}
		return "Invalid " + label, fmt.Sprintf("%s must be %s, got %q", s.Name(), orList(s.Values), v)
	}
	if s.Check != nil {
		if msg := s.Check(v); msg != "" {
			return "Invalid " + label, fmt.Sprintf("%s %q %s.", s.Attr, v, msg)
		}
	}
	return "", ""
}

// writeSettings writes the table's settings into cfg (Derive), each as
// given, with a finding for an invalid value (documented by SettingChecks:
// this file is not among docgen's CheckSources).
func writeSettings(in Input, cfg map[string]string, add func(sev Severity, summary, detail string, path ...string)) {
	for _, s := range Settings {
		v := in.Values[s.Attr]
		if v == "" {
			continue
		}
		if summary, detail := s.Validate(v); summary != "" {
			add(Error, summary, detail, s.Path()...)
			if s.Kind == KindDuration {
				continue // not written: Flink could not read it
			}
		}
		cfg[s.Key] = v
	}
}

// SettingCheck documents one check Setting.Validate makes ("…" for the value).
type SettingCheck struct{ Path, Summary, Detail string }

// SettingChecks are the checks Derive makes of the table's settings, for
// the documentation (internal/docgen): rendered by Validate itself.
func SettingChecks() []SettingCheck {
	var out []SettingCheck
	add := func(s Setting, v string) {
		sum, det := s.Validate(v)
		if sum == "" {
			return
		}
		det = strings.ReplaceAll(strings.ReplaceAll(det, strconv.Quote(v), "…"), v, "…")
		out = append(out, SettingCheck{Path: s.Attr, Summary: sum, Detail: det})
	}
	for _, s := range Settings {
		switch s.Kind {
		case KindDuration:
			add(s, "\x00")
			if s.Check != nil {
				add(s, "1ns")
			}
		case KindInt:
			add(s, strconv.FormatInt(s.MinInt-1, 10))
		case KindEnum:
			add(s, "\x00")
		}
	}
	return out
}

func orList(vs []string) string {
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// Value is the value of a table setting in the input ("" when unset).
func (in Input) Value(attr string) string { return in.Values[attr] }

// BoolValue and IntValue read a KindBool or KindInt setting (nil when unset
// or not one).
func (in Input) BoolValue(attr string) *bool {
	b, err := strconv.ParseBool(in.Values[attr])
	if err != nil {
		return nil
	}
	return &b
}

// FormatValue is the string form of a Go value of a setting's kind, as
// Input.Values holds it.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	}
	return fmt.Sprint(v)
}

// ParseValue reads a value as an imported object spells it into the form
// the provider writes: enums upper-cased (Flink reads them
// case-insensitively: ConfigurationUtils.convertToEnum), booleans true or
// false in any case (convertToBoolean upper-cases the value and accepts
// TRUE and FALSE only, flink-core 2.2.1), integers as Flink parses them,
// durations as written (ParseDuration reads every form Flink does); ok is
// false for an integer or boolean Flink would not read (the attribute
// stays unset, and the import's round trip names the key).
func (s Setting) ParseValue(raw string) (string, bool) {
	v := strings.TrimSpace(raw)
	switch s.Kind {
	case KindEnum:
		return strings.ToUpper(v), true
	case KindBool:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return "", false
		}
		return strconv.FormatBool(strings.EqualFold(v, "true")), true
	case KindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatInt(n, 10), true
	}
	return v, true
}
