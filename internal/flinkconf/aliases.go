package flinkconf

import (
	"sort"
	"strconv"
	"strings"
)

// Objects written by hand or by other tools use the deprecated keys of
// deprecatedKeys (the operator's own examples write state.checkpoints.dir and
// high-availability: kubernetes), so an import reads them and an update keeps
// the spelling the object has (flinkdeploy.ShapeConfiguration).

// Aliases returns key followed by the deprecated keys Flink reads for it, in
// the order Flink looks them up (the key itself wins:
// Configuration.getRawValueFromOption).
func Aliases(key string) []string {
	out := []string{key}
	for _, d := range deprecatedKeyList {
		if deprecatedKeys[d] == key {
			out = append(out, d)
		}
	}
	return out
}

// deprecatedKeyList is deprecatedKeys' keys, sorted (a stable lookup order).
var deprecatedKeyList = func() []string {
	out := make([]string, 0, len(deprecatedKeys))
	for k := range deprecatedKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}()

// Lookup finds key, or one of its deprecated keys, in a flat configuration:
// the value Flink would use and the key it was found under.
func Lookup(cfg map[string]string, key string) (value, foundKey string, ok bool) {
	for _, k := range Aliases(key) {
		if v, ok := cfg[k]; ok {
			return v, k, true
		}
	}
	return "", "", false
}

// valueKind says how Flink parses a managed key's value, for Equivalent:
// the table's settings by their Kind, and the keys Derive writes itself.
var valueKind = func() map[string]string {
	m := map[string]string{
		"execution.checkpointing.externalized-checkpoint-retention": "enum",
		"execution.checkpointing.storage":                           "enum",
		"state.backend.type":                                        "enum",
		"high-availability.type":                                    "ha",
	}
	for _, s := range Settings {
		switch s.Kind {
		case KindBool:
			m[s.Key] = "bool"
		case KindEnum:
			m[s.Key] = "enum"
		case KindDuration:
			m[s.Key] = "duration"
		case KindInt:
			m[s.Key] = "int"
		}
	}
	return m
}()

// Equivalent tells whether Flink reads two values of key the same way, so
// that an object spelling a value differently from the provider need not be
// rewritten (a rewrite changes the spec, which the operator applies as an
// upgrade: a restart). Enums and booleans are case-insensitive
// (ConfigurationUtils.convertToEnum, convertToBoolean; the state backend
// name is lower-cased by StateBackendLoader.loadStateBackendFromConfig),
// durations compare by length (TimeUtils.parseDuration, every form it
// reads: ParseDuration), integers by value (convertToInt:
// Integer.parseInt, which reads "02" and "+2" as 2), and the Kubernetes
// HA type may be written as "kubernetes" or as its factory class
// (HighAvailabilityMode.fromConfig; flink-kubernetes-operator release-1.15.0
// FlinkUtils.isKubernetesHAActivated accepts both, case-insensitively).
func Equivalent(key, a, b string) bool {
	if a == b {
		return true
	}
	switch valueKind[CanonicalKey(key)] {
	case "bool", "enum":
		return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
	case "duration":
		da, errA := ParseDuration(a)
		db, errB := ParseDuration(b)
		return errA == nil && errB == nil && da == db
	case "int":
		na, errA := strconv.ParseInt(a, 10, 32)
		nb, errB := strconv.ParseInt(b, 10, 32)
		return errA == nil && errB == nil && na == nb
	case "ha":
		return IsKubernetesHA(a) && IsKubernetesHA(b)
	}
	return false
}

// IsKubernetesHA tells whether a high-availability.type value selects
// Kubernetes HA: "kubernetes" in any case (HighAvailabilityMode.valueOf of the
// upper-cased value) or the factory class.
func IsKubernetesHA(v string) bool {
	v = strings.TrimSpace(v)
	return strings.EqualFold(v, "kubernetes") || v == KubernetesHAFactory
}

// IsNoHA tells whether a high-availability.type value turns HA off: NONE,
// or the old default "standalone" (HighAvailabilityMode.fromConfig).
func IsNoHA(v string) bool {
	v = strings.TrimSpace(v)
	return strings.EqualFold(v, "none") || strings.EqualFold(v, "standalone")
}

// CanonicalKey maps a deprecated key to the key the provider writes.
func CanonicalKey(key string) string {
	if k, ok := deprecatedKeys[key]; ok {
		return k
	}
	return key
}

// Respell writes a derived configuration the way prior (what the object
// holds, as last read) spells it: a derived key whose setting prior holds
// under a deprecated key, or with a value Flink reads the same
// (Equivalent), takes prior's key and value. So the plan of an adopted
// object shows no change where the object already says what the provider
// would write.
func Respell(derived, prior map[string]string) map[string]string {
	if len(prior) == 0 {
		return derived
	}
	out := make(map[string]string, len(derived))
	for k, v := range derived {
		key, val := k, v
		for _, a := range Aliases(k) {
			if pv, ok := prior[a]; ok && Equivalent(k, pv, v) {
				key, val = a, pv
				break
			}
		}
		out[key] = val
	}
	return out
}

// sensitiveKeyParts are the parts of a configuration key whose value Flink
// hides (GlobalConfiguration.SENSITIVE_KEYS, flink-core release-2.2.1).
var sensitiveKeyParts = []string{"password", "secret", "fs.azure.account.key", "apikey", "api-key", "auth-params",
	"service-key", "token", "basic-auth", "jaas.config", "http-headers"}

// notSecretValues are keys Flink hides by name whose values are not secrets
// but name Kubernetes Secrets to mount or read (flink-kubernetes
// release-2.2.1 KubernetesConfigOptions.KUBERNETES_SECRETS,
// KUBERNETES_ENV_SECRET_KEY_REF): kept in flink_configuration, where an
// import's generated configuration writes them (it writes a sensitive value
// as null, and an apply would then remove the mounts).
var notSecretValues = map[string]bool{"kubernetes.secrets": true, "kubernetes.env.secretkeyref": true}

// IsSensitiveKey tells whether a key's value is a secret: Flink hides it
// (its lower-cased name contains one of sensitiveKeyParts:
// GlobalConfiguration.isSensitive) and it is not one of notSecretValues.
func IsSensitiveKey(key string) bool {
	k := strings.ToLower(key)
	if notSecretValues[k] {
		return false
	}
	for _, p := range sensitiveKeyParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// SensitivePlaceholder stands for a sensitive value in a configuration shown
// in plans (effective_flink_configuration).
const SensitivePlaceholder = "(sensitive)"
