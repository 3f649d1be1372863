package flinkconf

import (
	"fmt"
	"strings"
)

// The Flink Kubernetes Operator's own validation of a FlinkDeployment's
// flinkConfiguration (flink-kubernetes-operator release-1.15.0,
// validation/DefaultValidator.java), checked at plan so that a spec the
// operator would refuse is never applied. Only the rules that depend on
// keys a user can put into flink_configuration are here; the directory and
// parallelism rules are in Derive.

// ForbiddenKeys are the keys the operator sets itself and refuses in a spec
// (DefaultValidator.FORBIDDEN_CONF_KEYS: "Forbidden Flink config key: ").
var ForbiddenKeys = []string{"kubernetes.namespace", "kubernetes.cluster-id", "high-availability.cluster-id"}

// Operator configuration keys the rules below read
// (KubernetesOperatorConfigOptions, release-1.15.0).
const (
	rollbackKey           = "kubernetes.operator.deployment.rollback.enabled"
	healthCheckKey        = "kubernetes.operator.cluster.health-check.enabled"
	jmRecoveryKey         = "kubernetes.operator.jm-deployment-recovery.enabled"
	periodicSavepointKey  = "kubernetes.operator.periodic.savepoint.interval"
	maxCheckpointAgeKey   = "kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age"
	jmRecoveryDefaultTrue = true // KubernetesOperatorConfigOptions.OPERATOR_JM_DEPLOYMENT_RECOVERY_ENABLED
	// SavepointFormatKey is the format of every savepoint the operator
	// takes itself: a savepoint-mode upgrade's, a periodic one, a Flink
	// version upgrade's, a blue/green transition's (OPERATOR_SAVEPOINT_FORMAT_TYPE,
	// default SavepointFormatType.DEFAULT, CANONICAL; read by
	// AbstractFlinkService.cancelJob/triggerSavepoint and
	// BlueGreenUtils.triggerSavepoint).
	SavepointFormatKey = "kubernetes.operator.savepoint.format.type"
)

// isTrue reads a Flink boolean (ConfigurationUtils.convertToBoolean:
// "true"/"false", case-insensitive).
func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

func operatorRules(in Input, add func(Severity, string, string, ...string)) {
	forstSavepointRule(in, add)
	for _, k := range ForbiddenKeys {
		if _, ok := in.Extra[k]; ok {
			add(Error, "Key the operator forbids",
				fmt.Sprintf("flink_configuration: the operator refuses %q (DefaultValidator.validateFlinkDeploymentConfig: \"Forbidden Flink "+
					"config key\"); it sets it itself from the deployment's namespace and name. Remove it.", k),
				"flink_configuration", k)
		}
	}
	for k, why := range OverriddenKeys {
		if _, ok := in.Extra[k]; ok {
			add(Error, "Key the operator overrides",
				fmt.Sprintf("flink_configuration: %q never reaches Flink: %s (FlinkConfigBuilder). Remove it.", k, why),
				"flink_configuration", k)
		}
	}
	if v, ok := in.Extra[rollbackKey]; ok && isTrue(v) && !in.HAEnabled() {
		add(Error, "Rollback needs high availability",
			fmt.Sprintf("flink_configuration %q = true without high availability: the operator refuses it (DefaultValidator: \"HA must be "+
				"enabled for rollback support.\"). Turn high_availability on, or remove the key.", rollbackKey),
			"flink_configuration", rollbackKey)
	}
	if v, ok := in.Extra[healthCheckKey]; ok && isTrue(v) {
		recovery := jmRecoveryDefaultTrue
		if r, ok := in.Extra[jmRecoveryKey]; ok {
			recovery = isTrue(r)
		}
		if !recovery {
			add(Error, "Health check needs deployment recovery",
				fmt.Sprintf("flink_configuration %q = true with %q = false: the operator refuses it (DefaultValidator: \"Deployment recovery "+
					"... must be enabled for job health check ... support.\"). Remove one of them.", healthCheckKey, jmRecoveryKey),
				"flink_configuration", healthCheckKey)
		}
	}
	if in.HasJob && in.State.SavepointDir == "" {
		// DefaultValidator.validateJobSpec: the key's presence is enough,
		// whatever its value.
		for k, msg := range map[string]string{
			periodicSavepointKey: "Periodic savepoints cannot be enabled when config key[execution.checkpointing.savepoint-dir] is not set",
			maxCheckpointAgeKey:  "In order to use max-checkpoint age functionality config key[execution.checkpointing.savepoint-dir] must be set to allow triggering savepoint upgrades.",
		} {
			if _, ok := in.Extra[k]; ok {
				add(Error, "Savepoint directory required",
					fmt.Sprintf("flink_configuration %q needs a savepoint directory: the operator refuses it without one (DefaultValidator: %q). "+
						"Set state.savepoint_dir or state.store_id.", k, msg),
					"flink_configuration", k)
			}
		}
	}
}

// Keys the operator writes into every application deployment's
// configuration (flink-kubernetes-operator release-1.15.0,
// config/FlinkConfigBuilder.java).
const (
	intervalKey          = "execution.checkpointing.interval"
	parallelismKey       = "parallelism.default"
	shutdownOnFinishKey  = "execution.shutdown-on-application-finish"
	submitFailedJobKey   = "execution.submit-failed-job-on-application-error"
	webCancelKey         = "web.cancel.enable"
	restServiceTypeKey   = "kubernetes.rest-service.exposed.type"
	pipelineNameKey      = "pipeline.name"
	k8sNamespaceKey      = "kubernetes.namespace"
	k8sClusterIDKey      = "kubernetes.cluster-id"
	haClusterIDKey       = "high-availability.cluster-id"
	operatorLastStateInt = "5 min" // FlinkConfigBuilder.DEFAULT_CHECKPOINTING_INTERVAL (Duration.ofMinutes(5))
)

// OverriddenKeys are the keys the operator always overwrites, so a value in
// flink_configuration would never reach Flink (FlinkConfigBuilder:
// parallelism.default from job.parallelism in applyJobOrSessionSpec,
// execution.shutdown-on-application-finish forced to false).
var OverriddenKeys = map[string]string{
	parallelismKey:      "the operator sets it from job.parallelism: set job.parallelism instead",
	shutdownOnFinishKey: "the operator always sets it to false (the JobManager must outlive the job for the operator to observe it)",
}

// OperatorDefaults is what the operator adds to the configuration of a
// deployment named name in namespace when it builds the one Flink runs
// (FlinkConfigBuilder.buildFrom): forced values (namespace, cluster id,
// HA cluster id, parallelism.default, shutdown-on-application-finish) and
// defaults it sets only when a key is absent (setDefaultConf: REST service
// type, web.cancel.enable; applyJobConfig: pipeline.name, the 5 minute
// checkpoint interval for last-state, RETAIN_ON_CANCELLATION;
// submit-failed-job-on-application-error).
func OperatorDefaults(in Input, namespace, name string) map[string]string {
	d := map[string]string{
		restServiceTypeKey: "ClusterIP",
		webCancelKey:       "false",
		k8sNamespaceKey:    namespace,
		k8sClusterIDKey:    name,
	}
	if in.HAEnabled() {
		d[haClusterIDKey] = name
	}
	if in.HasJob {
		d[pipelineNameKey] = name
		d[RetentionKey] = RetainOnCancellation
		d[shutdownOnFinishKey] = "false"
		d[submitFailedJobKey] = "true"
		if in.UpgradeMode == UpgradeLastState {
			d[intervalKey] = operatorLastStateInt
		}
		if in.Parallelism != nil {
			d[parallelismKey] = fmt.Sprint(*in.Parallelism)
		}
	}
	return d
}

// OperatorAdded is the part of OperatorDefaults the provider does not write
// itself: shown in effective_flink_configuration, never written into the
// spec (writing them would change the spec of running deployments, which
// the operator applies as an upgrade).
func OperatorAdded(in Input, namespace, name string) map[string]string {
	d := OperatorDefaults(in, namespace, name)
	for k := range in.Extra {
		delete(d, k)
	}
	if in.Value(AttrCheckpointInterval) != "" {
		delete(d, intervalKey)
	}
	// The provider writes the retention unless it is left unwritten for an
	// adopted object: then the operator's RETAIN_ON_CANCELLATION is what
	// the job runs with, and shown.
	if in.State.ExternalizedRetention != "" || (DefaultRetention(in.UpgradeMode) != "" && !in.Unwritten[AbsentRetention]) {
		delete(d, RetentionKey)
	}
	return d
}

// forstSavepointRule: ForSt takes NATIVE savepoints only
// (ForStStateBackend.supportsSavepointFormat, FLINK-37301), and the
// savepoints the operator takes itself are in SavepointFormatKey's format,
// CANONICAL unless flink_configuration says NATIVE (the key is read from
// the deployment's own configuration: FlinkConfigManager.getObserveConfig
// lays its kubernetes.operator.* keys over the operator's). Flink fails a
// CANONICAL one, so a savepoint-mode upgrade (AbstractJobReconciler.
// getJobUpgrade: JobUpgrade.savepoint) or a periodic savepoint
// (SnapshotObserver) of a ForSt job would fail every time: refused. A
// last-state job takes one only on a Flink version upgrade (getJobUpgrade:
// "Using savepoint to upgrade Flink version"): said.
func forstSavepointRule(in Input, add func(Severity, string, string, ...string)) {
	if in.State.Backend != BackendForSt || !in.HasJob {
		return
	}
	format, set := in.Extra[SavepointFormatKey]
	if strings.EqualFold(strings.TrimSpace(format), "NATIVE") {
		return
	}
	what := fmt.Sprintf("flink_configuration %q is %q", SavepointFormatKey, format)
	if !set {
		what = fmt.Sprintf("flink_configuration sets no %q, so the operator takes CANONICAL savepoints (its default)", SavepointFormatKey)
	}
	fix := fmt.Sprintf("Set flink_configuration[%q] = \"NATIVE\".", SavepointFormatKey)
	_, periodic := in.Extra[periodicSavepointKey]
	switch {
	case in.UpgradeMode == UpgradeSavepoint || periodic:
		takes := "every upgrade (upgrade_mode = \"savepoint\")"
		if periodic {
			takes = fmt.Sprintf("every periodic savepoint (%q)", periodicSavepointKey)
		}
		add(Error, "Savepoint format ForSt cannot take",
			fmt.Sprintf("state.backend is \"forst\" and %s: %s Flink would fail the savepoint the operator takes for %s, and the job "+
				"would never be upgraded. %s", what, ForStFormatAdvice, takes, fix), "flink_configuration", SavepointFormatKey)
	case in.UpgradeMode == UpgradeLastState:
		add(Warning, "Savepoint format ForSt cannot take",
			fmt.Sprintf("state.backend is \"forst\" and %s: %s The operator takes a savepoint for a Flink version upgrade of a last-state "+
				"job (and for every blue/green transition), and Flink would fail it. %s", what, ForStFormatAdvice, fix), "flink_configuration", SavepointFormatKey)
	}
}
