package flinkconf

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// ReleasedVersions are the Flink releases the provider knows: every
// release of the minor versions whose configuration keys the provider
// writes (see MinMinor). Source: the versions of org.apache.flink:flink-core
// published in the Maven repository (listed 2026-11-25: 1.20.0-1.20.5,
// 2.0.0-2.0.2, 2.1.0-2.1.3, 2.2.0-2.2.1; 2.3.0 too, which the operator
// 1.15.0 CRD has no flinkVersion for). The official images
// (apache/flink-docker) may lag a release (2.1.3 has none). A newer patch
// of a known minor is accepted with a warning (NewerPatch): a user on a
// fresh patch release is not blocked until the provider knows it.
var ReleasedVersions = map[string][]int{
	"1.20": {0, 1, 2, 3, 4, 5},
	"2.0":  {0, 1, 2},
	"2.1":  {0, 1, 2, 3},
	"2.2":  {0, 1},
}

// NewerPatch tells whether v is a patch of a known minor newer than every
// release the provider knows (accepted, with a warning).
func NewerPatch(v Version) bool {
	patches, ok := ReleasedVersions[fmt.Sprintf("%d.%d", v.Major, v.Minor)]
	if !ok {
		return false
	}
	for _, p := range patches {
		if p >= v.Patch {
			return false
		}
	}
	return true
}

// MinMinor is the oldest Flink minor version whose keys the provider
// writes. Flink 1.20 renamed the checkpointing options (FLINK-34482:
// state.checkpoints.dir -> execution.checkpointing.dir,
// state.savepoints.dir -> execution.checkpointing.savepoint-dir,
// state.backend.incremental -> execution.checkpointing.incremental,
// state.checkpoints.num-retained -> execution.checkpointing.num-retained,
// state.checkpoint-storage -> execution.checkpointing.storage; the old
// names are the new options' deprecated keys in CheckpointingOptions).
// Older versions would ignore the new names and run without the
// configured checkpoint storage, so they are refused rather than
// half-configured.
var MinMinor = Version{Major: 1, Minor: 20}

func (v Version) before(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// ReleasedList names the releases the provider knows, for messages.
func ReleasedList() string { return releasedList() }

func releasedList() string {
	var out []string
	for minor, patches := range ReleasedVersions {
		for _, p := range patches {
			out = append(out, fmt.Sprintf("%s.%d", minor, p))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := parseNumbers(out[i])
		b, _ := parseNumbers(out[j])
		return a.before(b)
	})
	return strings.Join(out, ", ")
}

func parseNumbers(s string) (Version, bool) {
	var v Version
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return v, false
	}
	fmt.Sscan(m[1], &v.Major)
	fmt.Sscan(m[2], &v.Minor)
	fmt.Sscan(m[3], &v.Patch)
	return v, true
}

// checkReleased says why a well-formed version is not accepted, or "".
func checkReleased(v Version) string {
	if v.before(MinMinor) {
		return fmt.Sprintf("is older than Flink %d.%d, which renamed the checkpointing options the provider writes (FLINK-34482, e.g. "+
			"state.checkpoints.dir -> execution.checkpointing.dir): Flink %s would ignore them and keep no checkpoints on S3. "+
			"Use a Flink %d.%d or later image", MinMinor.Major, MinMinor.Minor, v, MinMinor.Major, MinMinor.Minor)
	}
	patches, ok := ReleasedVersions[fmt.Sprintf("%d.%d", v.Major, v.Minor)]
	if !ok {
		return "is not a Flink release the provider knows (released: " + releasedList() + ")"
	}
	if NewerPatch(v) {
		return ""
	}
	for _, p := range patches {
		if p == v.Patch {
			return ""
		}
	}
	return fmt.Sprintf("was never released: Flink %d.%d has %s", v.Major, v.Minor, strings.TrimSuffix(strings.Join(func() []string {
		var s []string
		for _, p := range patches {
			s = append(s, fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, p))
		}
		return s
	}(), ", "), ", "))
}

// ValidateVersion returns what is wrong with flink_version, or "".
func ValidateVersion(s string) string {
	if _, err := ParseVersion(s); err != nil {
		return strings.TrimPrefix(err.Error(), fmt.Sprintf("Flink %s ", s))
	}
	return ""
}

// ValidateNotBlank refuses an empty or blank value where one is needed to run.
func ValidateNotBlank(s string) string {
	if strings.TrimSpace(s) == "" {
		return "must not be empty: the job cannot start without it"
	}
	return ""
}

// ValidateImage returns what is wrong with a container image reference, or "".
func ValidateImage(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "must not be empty: the pods need an image, e.g. flink:2.2.1-java17"
	case strings.ContainsAny(s, " \t\n"):
		return "must not contain white space"
	}
	return ""
}

// imageTagVersionRE reads the Flink version at the start of an official
// image tag: 2.2.1-java17, 2.2-scala_2.12-java17, 1.20.4 (tags listed in
// apache/flink-docker's release.metadata files).
var imageTagVersionRE = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?(?:-|$)`)

// ImageVersionMismatch says how an official Flink image's tag disagrees
// with flink_version, or "". Only images whose repository is named flink
// (flink, apache/flink, a mirror's .../flink) are read: other images' tags
// are the application's own versions.
func ImageVersionMismatch(image, flinkVersion string) string {
	if strings.Contains(image, "@") {
		return "" // pinned by digest: no tag to read
	}
	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	if colon <= slash {
		return ""
	}
	if path.Base(image[:colon]) != "flink" {
		return ""
	}
	m := imageTagVersionRE.FindStringSubmatch(image[colon+1:])
	v, ok := parseNumbers(flinkVersion)
	if m == nil || !ok {
		return ""
	}
	tagged := m[1] + "." + m[2]
	if m[3] != "" {
		tagged += "." + m[3]
	}
	if fmt.Sprintf("%d.%d", v.Major, v.Minor) != m[1]+"."+m[2] || (m[3] != "" && fmt.Sprint(v.Patch) != m[3]) {
		return fmt.Sprintf("the image %s is Flink %s but flink_version is %s: the provider would write the S3 plugin jar and "+
			"configuration keys of %s, which the image does not have. Make them agree", image, tagged, flinkVersion, flinkVersion)
	}
	return ""
}

// ValidateMemory returns what is wrong with a memory size the operator
// reads (ParseResourceMemory), or "".
func ValidateMemory(s string) string {
	if _, err := ParseResourceMemory(s); err != nil {
		return "must be a memory size such as 2048m, 2g or 2Gi: it " + err.Error()
	}
	return ""
}

// ValidateDuration returns what is wrong with a Flink duration, or "".
func ValidateDuration(s string) string {
	if _, err := ParseDuration(s); err != nil {
		return "is not a duration such as 60s, 10 min, 500 ms or (Flink 2.1 and later) PT1M"
	}
	return ""
}

// MinCheckpointTime is Flink's lower bound for the checkpoint interval and
// timeout: CheckpointCoordinatorConfiguration.MINIMAL_CHECKPOINT_TIME =
// 10 ms, enforced by CheckpointConfig#setCheckpointInterval and
// #setCheckpointTimeout (the job fails to start below it).
const MinCheckpointTime = 10 * time.Millisecond

func atLeastMin(s, what string) string {
	d, err := ParseDuration(s)
	if err != nil {
		return "is not a duration such as 60s, 10 min, 500 ms or (Flink 2.1 and later) PT1M"
	}
	if d < MinCheckpointTime {
		return fmt.Sprintf("is below Flink's minimum %s of 10 ms (CheckpointCoordinatorConfiguration.MINIMAL_CHECKPOINT_TIME): "+
			"the job would fail to start. Use at least 10ms (typically 10s to 10 min)", what)
	}
	return ""
}

// ValidateCheckpointInterval: a duration of at least 10 ms.
func ValidateCheckpointInterval(s string) string { return atLeastMin(s, "checkpoint interval") }

// ValidateCheckpointTimeout: a duration of at least 10 ms.
func ValidateCheckpointTimeout(s string) string { return atLeastMin(s, "checkpoint timeout") }

// systemDirs must not be the state backend's local directory: an emptyDir
// mounted there hides what the image keeps there (the Flink distribution
// lives in /opt/flink in the official images: apache/flink-docker's
// Dockerfile, FLINK_HOME=/opt/flink).
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/root", "/run", "/sbin", "/sys", "/usr", "/var",
	"/opt/flink/bin", "/opt/flink/conf", "/opt/flink/lib", "/opt/flink/opt", "/opt/flink/plugins", "/opt/flink/usrlib", "/opt/flink/log", "/opt/flink/examples"}

// FlinkHome is the distribution's directory in the official images.
const FlinkHome = "/opt/flink"

// ValidateLocalDir returns what is wrong with state.local_dir, or "".
func ValidateLocalDir(s string) string {
	if !strings.HasPrefix(s, "/") {
		return "must be an absolute path in the container, e.g. /opt/flink/state"
	}
	clean := path.Clean(s)
	if clean == "/" || strings.HasPrefix(FlinkHome+"/", clean+"/") {
		return fmt.Sprintf("would hide the Flink distribution in %s under the state volume: use a directory of its own, e.g. %s", FlinkHome, DefaultLocalDir)
	}
	for _, d := range systemDirs {
		if clean == d || strings.HasPrefix(clean, d+"/") {
			return fmt.Sprintf("is in the system directory %s, which the state volume would hide: use a directory of its own, e.g. %s", d, DefaultLocalDir)
		}
	}
	return ""
}

// Key aliases. Flink's S3 file systems hand every key starting with s3.,
// s3a. or fs.s3a. to Hadoop as fs.s3a.<rest> (S3FileSystemFactory's
// FLINK_CONFIG_PREFIXES and HadoopConfigLoader), and mirror
// fs.s3a.access-key and fs.s3a.secret-key to fs.s3a.access.key and
// fs.s3a.secret.key (MIRRORED_CONFIG_KEYS). Hadoop's S3A also reads
// per-bucket options fs.s3a.bucket.<bucket>.<option> over the global ones
// (Hadoop S3A documentation, "Configuring different S3 buckets").
var s3Prefixes = []string{"fs.s3a.", "s3a.", "s3."}

var mirroredS3Keys = map[string]string{"access-key": "access.key", "secret-key": "secret.key"}

// s3Option returns the fs.s3a option a key reaches ("aws.credentials.provider"),
// or "" when the key is not an S3 file system key.
func s3Option(k string) string {
	for _, p := range s3Prefixes {
		if rest, ok := strings.CutPrefix(k, p); ok {
			if b, ok := strings.CutPrefix(rest, "bucket."); ok {
				// bucket.<name>.<option>: bucket names may hold dots, options are known.
				for opt := range staticCredentialOptions {
					if strings.HasSuffix(b, "."+opt) {
						return opt
					}
				}
				if strings.HasSuffix(b, ".aws.credentials.provider") {
					return "aws.credentials.provider"
				}
				return ""
			}
			if m, ok := mirroredS3Keys[rest]; ok {
				return m
			}
			return rest
		}
	}
	return ""
}

// staticCredentialOptions are the S3A options that hold static AWS
// credentials (Hadoop S3A documentation, "Authenticating with S3").
var staticCredentialOptions = map[string]bool{"access.key": true, "secret.key": true, "session.token": true}

// deprecatedKeys maps the deprecated names Flink still reads to the
// option the provider writes (withDeprecatedKeys of CheckpointingOptions,
// StateBackendOptions, HighAvailabilityOptions, RocksDBOptions,
// StateRecoveryOptions; flink-core release-2.2.1).
var deprecatedKeys = map[string]string{
	"execution.savepoint-restore-mode":       ClaimModeKey,
	"state.backend":                          "state.backend.type",
	"state.checkpoint-storage":               "execution.checkpointing.storage",
	"state.checkpoints.dir":                  "execution.checkpointing.dir",
	"state.backend.fs.checkpointdir":         "execution.checkpointing.dir",
	"state.savepoints.dir":                   "execution.checkpointing.savepoint-dir",
	"savepoints.state.backend.fs.dir":        "execution.checkpointing.savepoint-dir",
	"state.backend.incremental":              "execution.checkpointing.incremental",
	"state.checkpoints.num-retained":         "execution.checkpointing.num-retained",
	"high-availability":                      "high-availability.type",
	"recovery.mode":                          "high-availability.type",
	"high-availability.zookeeper.storageDir": "high-availability.storageDir",
	"recovery.zookeeper.storageDir":          "high-availability.storageDir",
	"state.backend.rocksdb.checkpointdir":    "state.backend.rocksdb.localdir",
}

// ManagedAttr tells which attribute sets the managed key a
// flink_configuration key reaches under any alias ("" if none), and the
// managed key itself.
func ManagedAttr(k string) (attr, managed string) {
	if a, ok := keyAttr[k]; ok {
		return a, k
	}
	if m, ok := deprecatedKeys[k]; ok {
		return keyAttr[m], m
	}
	if opt := s3Option(k); opt != "" {
		if a, ok := keyAttr["fs.s3a."+opt]; ok {
			return a, "fs.s3a." + opt
		}
	}
	return "", ""
}

// IsStaticCredential tells whether a flink_configuration key holds static
// AWS credentials under any alias.
func IsStaticCredential(k string) bool { return staticCredentialOptions[s3Option(k)] }

// ValidateExtraKey returns what is wrong with a flink_configuration key, or "".
func ValidateExtraKey(k string) string {
	if msg := ValidateKeyNotBlank(k); msg != "" {
		return msg
	}
	if IsStaticCredential(k) {
		return "holds static AWS credentials, which would sit in clear text in the plan, the state and the FlinkDeployment: " +
			"remove it and let the pods get credentials from their identity (identity = \"irsa\" or \"pod_identity\")"
	}
	if attr, managed := ManagedAttr(k); attr != "" {
		if managed == k {
			return fmt.Sprintf("is managed by the provider, which derives it from %s: set %s instead", attr, attr)
		}
		return fmt.Sprintf("is an alias of %s, which the provider manages and derives from %s: set %s instead", managed, attr, attr)
	}
	return ""
}

// ValidateKeyNotBlank refuses an empty or white-space-only configuration
// key. Flink's flink-conf.yaml reader trims each "key: value" line's key
// and skips the line when it is then empty, with only a log warning ("Key
// or value was empty": GlobalConfiguration.loadYAMLResource, flink-core
// release-1.20); with config.yaml (Flink 2.x) the key reaches no
// ConfigOption either, since none has an empty or blank name: the value is
// ignored, and the job runs without the setting it was given.
func ValidateKeyNotBlank(k string) string {
	if strings.TrimSpace(k) == "" {
		return "is empty or white space only: it names no Flink option, so Flink would ignore its value and the job would run " +
			"without the setting. Remove the entry, or write the option's name (e.g. \"state.backend.rocksdb.memory.managed\")"
	}
	return ""
}

// ValidatePodTemplate returns what is wrong with a pod template's YAML, or
// "": it must be a Pod, and the fields the provider merges into must have
// the Pod's types (a field of the wrong type is named, never replaced).
func ValidatePodTemplate(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var doc any
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return "is not valid YAML: " + err.Error()
	}
	if doc == nil {
		return ""
	}
	pod, ok := doc.(map[string]any)
	if !ok {
		return fmt.Sprintf("must be a Pod (a YAML mapping with apiVersion, kind, metadata, spec), got %s", typeName(doc))
	}
	return checkShape(pod, podShape, "")
}

// shape is the expected type of a YAML value: "map", "list", "string",
// "int", "bool", or a nested map of field shapes / a list element shape.
type shape struct {
	kind   string
	fields map[string]shape
	elem   *shape
}

var (
	strS       = shape{kind: "string"}
	intS       = shape{kind: "int"}
	boolS      = shape{kind: "bool"}
	envVarS    = shape{kind: "map", fields: map[string]shape{"name": strS, "value": strS}}
	mountS     = shape{kind: "map", fields: map[string]shape{"name": strS, "mountPath": strS, "readOnly": boolS}}
	containerS = shape{kind: "map", fields: map[string]shape{
		"name": strS, "image": strS, "env": {kind: "list", elem: &envVarS}, "volumeMounts": {kind: "list", elem: &mountS},
	}}
	volumeS = shape{kind: "map", fields: map[string]shape{"name": strS}}
	// podShape lists the Pod fields the provider reads or writes (core/v1 Pod).
	podShape = shape{kind: "map", fields: map[string]shape{
		"apiVersion": strS, "kind": strS,
		"metadata": {kind: "map", fields: map[string]shape{"labels": {kind: "map"}, "annotations": {kind: "map"}}},
		"spec": {kind: "map", fields: map[string]shape{
			"securityContext": {kind: "map", fields: map[string]shape{"fsGroup": intS, "runAsUser": intS}},
			"containers":      {kind: "list", elem: &containerS},
			"initContainers":  {kind: "list", elem: &containerS},
			"volumes":         {kind: "list", elem: &volumeS},
		}},
	}}
)

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int64, int:
		return "a number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func checkShape(v any, s shape, at string) string {
	want := map[string]string{"map": "a mapping", "list": "a list", "string": "a string", "int": "an integer", "bool": "a boolean"}[s.kind]
	wrong := func() string {
		return fmt.Sprintf("has %s of the wrong type: it must be %s, got %s", at, want, typeName(v))
	}
	if v == nil {
		return ""
	}
	switch s.kind {
	case "map":
		m, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		keys := make([]string, 0, len(s.fields))
		for k := range s.fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if c, ok := m[k]; ok {
				sub := k
				if at != "" {
					sub = at + "." + k
				}
				if msg := checkShape(c, s.fields[k], sub); msg != "" {
					return msg
				}
			}
		}
	case "list":
		l, ok := v.([]any)
		if !ok {
			return wrong()
		}
		if s.elem != nil {
			for i, e := range l {
				if msg := checkShape(e, *s.elem, fmt.Sprintf("%s[%d]", at, i)); msg != "" {
					return msg
				}
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return wrong()
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return wrong()
		}
	case "int":
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return wrong()
		}
	}
	return ""
}

// PathStyleKey is the Hadoop S3A option that turns virtual-hosted-style
// addressing off (hadoop-common's core-default.xml and the S3A
// documentation, fs.s3a.path.style.access: "Enable S3 path style access
// ie disabling the default virtual hosting behaviour", default false;
// Constants.PATH_STYLE_ACCESS in hadoop-aws 3.3.4, the Hadoop that
// flink-s3-fs-hadoop bundles).
const PathStyleKey = "fs.s3a.path.style.access"

// s3aSetting reads an S3A option for a bucket as Hadoop would: the
// per-bucket fs.s3a.bucket.BUCKET.OPTION wins over fs.s3a.OPTION
// (S3AUtils.propagateBucketOptions), each under Flink's s3., s3a. and
// fs.s3a. prefixes (S3FileSystemFactory's FLINK_CONFIG_PREFIXES).
func s3aSetting(extra map[string]string, bucket, option string) (string, bool) {
	var global, perBucket string
	var hasGlobal, hasBucket bool
	for k, v := range extra {
		for _, p := range s3Prefixes {
			rest, ok := strings.CutPrefix(k, p)
			if !ok {
				continue
			}
			switch rest {
			case option:
				global, hasGlobal = v, true
			case "bucket." + bucket + "." + option:
				perBucket, hasBucket = v, true
			}
		}
	}
	if hasBucket {
		return perBucket, true
	}
	return global, hasGlobal
}

// hadoopBool is Hadoop's Configuration.getBoolean: "true" or "false",
// trimmed, in any case; anything else is the default.
func hadoopBool(v string, set, def bool) bool {
	if !set {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true
	case "false":
		return false
	}
	return def
}

// NeedsPathStyle reports whether Flink's S3 file system, with the given
// flink_configuration, would address a bucket virtual-hosted style over
// TLS although S3's certificate does not match it
// (store.WildcardCertMatches: a name with dots). The AWS SDK for Java 1.12
// that Hadoop 3.3.4's S3A uses addresses every DNS-compatible name, dots
// included, virtual-hosted style unless path-style access is on
// (S3RequestEndpointResolver.shouldUseVirtualAddressing: !isPathStyleAccess
// && BucketNameUtils.isDNSBucketName(bucketName) && the endpoint is not an
// IPv4 address), and S3A then fails with "Certificate for
// <a.b.s3.amazonaws.com> doesn't match any of the subject alternative
// names: [*.s3.amazonaws.com, s3.amazonaws.com]" (aws/sagemaker-spark#149,
// hadoop-aws 3.3.1). Not with path-style access, nor without TLS
// (fs.s3a.connection.ssl.enabled = false, or an http:// endpoint).
func NeedsPathStyle(extra map[string]string, bucket string) bool {
	if store.WildcardCertMatches(bucket) {
		return false
	}
	if v, ok := s3aSetting(extra, bucket, "path.style.access"); hadoopBool(v, ok, false) {
		return false
	}
	if v, ok := s3aSetting(extra, bucket, "connection.ssl.enabled"); !hadoopBool(v, ok, true) {
		return false
	}
	v, _ := s3aSetting(extra, bucket, "endpoint")
	return !strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "http://")
}

// bucketTLSDetail is the message of NeedsPathStyle: the attribute, the
// bucket, the bucket again.
const bucketTLSDetail = "%s names the bucket %q, whose name has dots. Flink's S3 file system (Hadoop S3A in flink-s3-fs-hadoop) " +
	"addresses it virtual-hosted style, as %s.s3.REGION.amazonaws.com, unless fs.s3a.path.style.access is true (its default is " +
	"false); S3's TLS certificate *.s3.REGION.amazonaws.com does not match that host (a wildcard covers one label: S3 User Guide, " +
	"\"Virtual hosting of general purpose buckets\"), so every checkpoint and savepoint would fail with a certificate error. Use a " +
	"bucket whose name has no dots, or set flink_configuration[\"fs.s3a.path.style.access\"] = \"true\" (or the per-bucket " +
	"fs.s3a.bucket.BUCKET.path.style.access)."

// checkBuckets applies NeedsPathStyle to every bucket the job reads or
// writes: the store's (state.store_id), each directory's outside it and
// the restore path's.
func checkBuckets(in Input, add func(Severity, string, string, ...string)) {
	st := in.State
	storeBucket := ""
	needs := func(uri string) (string, bool) {
		d, err := store.ParseDir(uri)
		if uri == "" || err != nil || d.Bucket == storeBucket {
			return "", false // unset, invalid (reported elsewhere), or the store's (reported at store_id)
		}
		return d.Bucket, NeedsPathStyle(in.Extra, d.Bucket)
	}
	if b, ok := needs(st.StoreURI); ok {
		add(Error, "Bucket unreachable over TLS", fmt.Sprintf(bucketTLSDetail, "state.store_id", b, b), "state", "store_id")
	}
	if d, err := store.ParseDir(st.StoreURI); err == nil {
		storeBucket = d.Bucket
	}
	if b, ok := needs(st.CheckpointDir); ok {
		add(Error, "Bucket unreachable over TLS", fmt.Sprintf(bucketTLSDetail, "state.checkpoint_dir", b, b), "state", "checkpoint_dir")
	}
	if b, ok := needs(st.SavepointDir); ok {
		add(Error, "Bucket unreachable over TLS", fmt.Sprintf(bucketTLSDetail, "state.savepoint_dir", b, b), "state", "savepoint_dir")
	}
	if b, ok := needs(st.HADir); ok {
		add(Error, "Bucket unreachable over TLS", fmt.Sprintf(bucketTLSDetail, "state.ha_dir", b, b), "state", "ha_dir")
	}
	storeBucket = "" // the restore path is its own attribute, even in the store's bucket
	if b, ok := needs(in.RestorePath); ok {
		add(Error, "Bucket unreachable over TLS", fmt.Sprintf(bucketTLSDetail, "job.initial_savepoint_path", b, b), "job", "initial_savepoint_path")
	}
}

// checkDirs applies the directory rules to the effective checkpoint,
// savepoint and HA directories: each a valid state directory, no two equal
// or nested (Flink would subsume or clean up the other's files: retained
// checkpoints are deleted under the checkpoint dir, HA metadata is removed
// under the HA dir when a job terminates), and with a state store, all
// inside it (its role grants nothing else).
func checkDirs(st State, add func(Severity, string, string, ...string)) {
	type dir struct {
		attr string
		val  string
		d    store.Dir
	}
	var ok []dir
	for _, d := range []struct{ attr, val string }{{"checkpoint_dir", st.CheckpointDir}, {"savepoint_dir", st.SavepointDir}, {"ha_dir", st.HADir}} {
		if d.val == "" {
			continue
		}
		p, err := store.ParseDir(d.val)
		if err != nil {
			add(Error, "Invalid S3 directory", fmt.Sprintf("state.%s %q %s.", d.attr, d.val, err), "state", d.attr)
			continue
		}
		ok = append(ok, dir{d.attr, d.val, p})
	}
	for i := range ok {
		for j := 0; j < i; j++ {
			a, b := ok[j], ok[i]
			switch {
			case a.d == b.d:
				add(Error, "State directories must differ",
					fmt.Sprintf("state.%s and state.%s are both %s: checkpoints, savepoints and HA metadata need directories of their own "+
						"(Flink deletes subsumed checkpoints and finished jobs' HA data in theirs). Set distinct directories, e.g. the "+
						"store's checkpoints/, savepoints/ and ha/.", a.attr, b.attr, b.val), "state", b.attr)
			case a.d.Overlaps(b.d):
				add(Error, "State directories must not be nested",
					fmt.Sprintf("state.%s (%s) and state.%s (%s) are nested: Flink's clean-up in one would reach the other's files. "+
						"Use sibling directories, e.g. the store's checkpoints/, savepoints/ and ha/.", a.attr, a.val, b.attr, b.val), "state", b.attr)
			}
		}
	}
	if st.StoreURI == "" {
		return
	}
	store, err := store.ParseDir(st.StoreURI)
	if err != nil {
		return
	}
	for _, d := range ok {
		if !d.d.Within(store) {
			add(Error, "Directory outside the state store",
				fmt.Sprintf("state.%s (%s) is outside the state store %s given by state.store_id: the store's role grants access to its "+
					"prefix only, so Flink could not write there. Remove state.%s to use the store's directory, or choose one under %s/.",
					d.attr, d.val, st.StoreURI, d.attr, st.StoreURI), "state", d.attr)
		}
	}
}

// SetsOwnInterval names jobs known to set their checkpoint interval in
// code, which wins over execution.checkpointing.interval: the bundled
// StateMachineExample calls env.enableCheckpointing(2000L) (Flink
// release-2.2.1, flink-examples-streaming StateMachineExample.java).
var SetsOwnInterval = map[string]time.Duration{"StateMachineExample.jar": 2 * time.Second}

// ownInterval is the job of SetsOwnInterval that jar_uri names, and the
// interval its code sets; ok is false for any other jar.
func ownInterval(jarURI string) (jar string, interval time.Duration, ok bool) {
	for jar, own := range SetsOwnInterval {
		if strings.HasSuffix(jarURI, "/"+jar) {
			return jar, own, true
		}
	}
	return "", 0, false
}

func ownsInterval(jarURI string) bool { _, _, ok := ownInterval(jarURI); return ok }
