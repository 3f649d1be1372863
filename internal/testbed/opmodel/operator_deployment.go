package opmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// deploymentStatus is the part of FlinkDeploymentStatus the model keeps.
type deploymentStatus struct {
	ObservedGeneration   int64
	JMStatus             string
	JobID                string
	JobName              string
	JobState             string
	StartTime            string
	UpgradeSavepointPath string
	ReconTimestamp       int64
	LastReconciledSpec   string
	LastStableSpec       string
	ReconState           string
	Error                string
}

func readDeploymentStatus(obj *unstructured.Unstructured) deploymentStatus {
	s := func(path ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"status"}, path...)...)
		return v
	}
	g, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	ts, _, _ := unstructured.NestedInt64(obj.Object, "status", "reconciliationStatus", "reconciliationTimestamp")
	return deploymentStatus{
		ObservedGeneration: g, JMStatus: s("jobManagerDeploymentStatus"),
		JobID: s("jobStatus", "jobId"), JobName: s("jobStatus", "jobName"), JobState: s("jobStatus", "state"),
		StartTime: s("jobStatus", "startTime"), UpgradeSavepointPath: s("jobStatus", "upgradeSavepointPath"),
		ReconTimestamp: ts, LastReconciledSpec: s("reconciliationStatus", "lastReconciledSpec"),
		LastStableSpec: s("reconciliationStatus", "lastStableSpec"), ReconState: s("reconciliationStatus", "state"),
		Error: s("error"),
	}
}

func (st deploymentStatus) object(deleting bool) map[string]any {
	job := map[string]any{"savepointInfo": map[string]any{}, "checkpointInfo": map[string]any{}}
	for k, v := range map[string]string{"jobId": st.JobID, "jobName": st.JobName, "state": st.JobState,
		"startTime": st.StartTime, "upgradeSavepointPath": st.UpgradeSavepointPath} {
		if v != "" {
			job[k] = v
		}
	}
	// Defaults of the status the operator serialises: ReconciliationStatus
	// .state UPGRADING, FlinkDeploymentStatus.jobManagerDeploymentStatus
	// MISSING (flink-kubernetes-operator-api release-1.15.0); the CRD
	// refuses an empty state.
	reconState, jm := st.ReconState, st.JMStatus
	if reconState == "" {
		reconState = reconUpgrading
	}
	if jm == "" {
		jm = jmMissing
	}
	recon := map[string]any{"reconciliationTimestamp": st.ReconTimestamp, "state": reconState}
	if st.LastReconciledSpec != "" {
		recon["lastReconciledSpec"] = st.LastReconciledSpec
	}
	if st.LastStableSpec != "" {
		recon["lastStableSpec"] = st.LastStableSpec
	}
	out := map[string]any{
		"jobStatus": job, "reconciliationStatus": recon, "lifecycleState": st.lifecycle(deleting),
		"clusterInfo": map[string]any{},
	}
	if st.ObservedGeneration != 0 {
		out["observedGeneration"] = st.ObservedGeneration
	}
	out["jobManagerDeploymentStatus"] = jm
	if st.Error != "" {
		out["error"] = st.Error
	}
	return out
}

// reconciledSpec is a lastReconciledSpec as SpecUtils.writeSpecWithMeta
// writes it: {"spec": …, "resource_metadata": {"apiVersion", "firstDeployment"}}.
type reconciledSpec struct {
	Spec map[string]any `json:"spec"`
	Meta struct {
		APIVersion      string `json:"apiVersion"`
		FirstDeployment bool   `json:"firstDeployment"`
	} `json:"resource_metadata"`
}

func parseReconciled(s string) *reconciledSpec {
	if s == "" {
		return nil
	}
	var r reconciledSpec
	if json.Unmarshal([]byte(s), &r) != nil {
		return nil
	}
	return &r
}

// LastReconciledSpec decodes status.reconciliationStatus.lastReconciledSpec
// of a FlinkDeployment: the spec the operator last acted on (nil if none).
func LastReconciledSpec(obj *unstructured.Unstructured) map[string]any {
	s, _, _ := unstructured.NestedString(obj.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	if r := parseReconciled(s); r != nil {
		return r.Spec
	}
	return nil
}

// lifecycle is CommonStatus.getLifecycleState.
func (st deploymentStatus) lifecycle(deleting bool) string {
	if deleting {
		return lifecycleDeleting
	}
	last := parseReconciled(st.LastReconciledSpec)
	if last == nil {
		if st.Error != "" {
			return lifecycleFailed
		}
		return lifecycleCreated
	}
	if st.ReconState == reconUpgrading {
		return lifecycleUpgrading
	}
	if jobField(last.Spec, "state", jobRunning) == jobSuspended {
		return lifecycleSuspended
	}
	if st.JobState == flinkFailed {
		return lifecycleFailed
	}
	if (st.JMStatus == jmMissing || st.JMStatus == jmError) && st.Error != "" &&
		(strings.Contains(st.Error, "Manual restore required.") || strings.Contains(st.Error, "HA metadata is not available") ||
			strings.Contains(st.Error, "It is possible that the job has finished or terminally failed, or the configmaps have been deleted.")) {
		return lifecycleFailed
	}
	if st.LastReconciledSpec == st.LastStableSpec {
		return lifecycleStable
	}
	return lifecycleDeployed
}

// operatorException is status.error as ReconciliationUtils
// .updateFlinkResourceException serialises an exception (FlinkResourceException).
// failedReconcile is a reconciliation that threw an UpgradeFailureException.
type failedReconcile struct {
	generation int64
	at         time.Time
}

// rescheduled tells whether obj's last reconciliation failed on its
// current generation less than a reconcile interval ago: the operator
// reconciles it again only then.
func (o *Operator) rescheduled(obj *unstructured.Unstructured) bool {
	o.mu.Lock()
	f, ok := o.failedAt[string(obj.GetUID())]
	o.mu.Unlock()
	return ok && f.generation == obj.GetGeneration() && time.Since(f.at) < o.reconcileInterval()
}

// upgradeFailureError is an UpgradeFailureException the reconciliation
// throws: its message, its event's reason, and its cause's message.
type upgradeFailureError struct{ msg, reason, cause string }

func (e *upgradeFailureError) Error() string { return e.msg + ": " + e.cause }

func operatorException(typ, msg string) string {
	b, _ := json.Marshal(map[string]any{"type": typ, "message": msg, "additionalMetadata": map[string]any{}, "throwableList": []any{}})
	return string(b)
}

func jobField(spec map[string]any, field, def string) string {
	if v, ok, _ := unstructured.NestedString(spec, "job", field); ok && v != "" {
		return v
	}
	return def
}

// ignoredJobFields are JobSpec's @SpecDiff(DiffType.IGNORE) fields.
var ignoredJobFields = []string{"initialSavepointPath", "upgradeMode", "allowNonRestoredState",
	"savepointTriggerNonce", "checkpointTriggerNonce", "autoscalerResetNonce", "savepointRedeployNonce"}

// ignoredConfPrefixes are FlinkDeploymentSpec.flinkConfiguration's
// @SpecDiff.Entry(type = IGNORE) prefixes.
var ignoredConfPrefixes = []string{"job.autoscaler", "parallelism.default", "kubernetes.operator"}

func withoutIgnored(spec map[string]any) map[string]any {
	c := runtimeCopy(spec)
	if job, ok := c["job"].(map[string]any); ok {
		for _, f := range ignoredJobFields {
			delete(job, f)
		}
		if job["state"] == nil {
			job["state"] = jobRunning
		}
	}
	// The operator compares flinkConfiguration flattened
	// (ReflectiveDiffBuilder: ConfigObjectNode.asFlatMap): nesting and
	// value types are no change.
	if raw, ok := c["flinkConfiguration"]; ok {
		flat := flatConf(raw)
		cfg := map[string]any{}
		for k, v := range flat {
			ignored := false
			for _, p := range ignoredConfPrefixes {
				ignored = ignored || strings.HasPrefix(k, p)
			}
			if !ignored {
				cfg[k] = v
			}
		}
		c["flinkConfiguration"] = cfg
	}
	return c
}

func runtimeCopy(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// diffType is ReflectiveDiffBuilder over the @SpecDiff annotations: a
// savepointRedeployNonce changed to a new non-null value is
// SAVEPOINT_REDEPLOY (JobSpec: onNullIgnore), any other non-ignored change
// UPGRADE, else IGNORE.
func diffType(last, cur map[string]any) string {
	ln, _, _ := unstructured.NestedFieldNoCopy(last, "job", "savepointRedeployNonce")
	cn, _, _ := unstructured.NestedFieldNoCopy(cur, "job", "savepointRedeployNonce")
	if cn != nil && fmt.Sprint(cn) != fmt.Sprint(ln) {
		return diffSavepointRedeploy
	}
	if !reflect.DeepEqual(withoutIgnored(last), withoutIgnored(cur)) {
		return diffUpgrade
	}
	return diffIgnore
}

// forbiddenConfKeys are DefaultValidator.FORBIDDEN_CONF_KEYS: the
// operator sets them itself (KubernetesConfigOptions.NAMESPACE,
// CLUSTER_ID, HighAvailabilityOptions.HA_CLUSTER_ID).
var forbiddenConfKeys = []string{"kubernetes.namespace", "kubernetes.cluster-id", "high-availability.cluster-id"}

// validate is the part of DefaultValidator.validateDeployment the model
// keeps, on the effective configuration the validator reads (the
// operator's default configuration with the spec's flinkConfiguration over
// it): validateFlinkDeploymentConfig's forbidden keys and "HA must be
// enabled for rollback support." (kubernetes.operator.deployment.rollback
// .enabled while HighAvailabilityMode.isHighAvailabilityModeActivated is
// false: high-availability.type, or its deprecated key high-availability,
// unset or NONE), and validateSpecChange's savepoint-redeploy check against
// the last reconciled spec: a new nonce needs an initialSavepointPath.
func (o *Operator) validate(last, cur map[string]any) string {
	conf := map[string]string{}
	o.mu.Lock()
	for k, v := range o.DefaultConfig {
		conf[k] = v
	}
	o.mu.Unlock()
	for k, v := range flatConf(cur["flinkConfiguration"]) {
		conf[k] = v
	}
	for _, k := range forbiddenConfKeys {
		if _, ok := conf[k]; ok {
			return "Forbidden Flink config key: " + k
		}
	}
	ha := conf["high-availability.type"]
	if ha == "" {
		ha = conf["high-availability"]
	}
	if strings.EqualFold(conf["kubernetes.operator.deployment.rollback.enabled"], "true") && (ha == "" || strings.EqualFold(ha, "NONE")) {
		return "HA must be enabled for rollback support."
	}
	// validateJobSpec: a job needs taskManager.replicas, or else a
	// parallelism of at least 1 (JobSpec.parallelism is an int, 0 when
	// unset). Found by the differential suite: the model had let such a
	// spec deploy.
	if job, ok := cur["job"].(map[string]any); ok {
		if r, set, _ := unstructured.NestedInt64(cur, "taskManager", "replicas"); set {
			if r < 1 {
				return "TaskManager replicas must be larger than 0"
			}
		} else if p, _, _ := unstructured.NestedInt64(job, "parallelism"); p < 1 {
			return "Job parallelism must be larger than 0"
		}
	}
	// validateJmSpec / validateTmSpec: without resource.memory the memory
	// must come from the configuration (the validator asks Flink's
	// JobManagerProcessUtils / TaskExecutorProcessUtils; the model only
	// looks for a size key, which is all this project's tests need). Found
	// by the differential suite, like the rule above.
	for _, c := range []struct{ field, prefix, msg string }{
		{"jobManager", "jobmanager.memory.", "JobManager resource memory must be defined using `spec.jobManager.resource.memory`"},
		{"taskManager", "taskmanager.memory.", "TaskManager resource memory must be defined using `spec.taskManager.resource.memory`"},
	} {
		if m, _, _ := unstructured.NestedString(cur, c.field, "resource", "memory"); strings.TrimSpace(m) != "" {
			continue
		}
		if conf[c.prefix+"process.size"] == "" && conf[c.prefix+"flink.size"] == "" {
			return c.msg
		}
	}
	if last == nil {
		return ""
	}
	ln, _, _ := unstructured.NestedFieldNoCopy(last, "job", "savepointRedeployNonce")
	cn, _, _ := unstructured.NestedFieldNoCopy(cur, "job", "savepointRedeployNonce")
	if cn != nil && fmt.Sprint(cn) != fmt.Sprint(ln) && strings.TrimSpace(jobField(cur, "initialSavepointPath", "")) == "" {
		return "InitialSavepointPath must not be empty for savepoint redeployment"
	}
	return ""
}

// depCtx is one reconciliation of one FlinkDeployment.
type depCtx struct {
	obj  *unstructured.Unstructured
	spec map[string]any
	st   *deploymentStatus
	dyn  dynamic.Interface
}

// recordSpec is ReconciliationUtils.updateStatusForSpecReconciliation:
// clears the error, records the spec (job.state set to what the job is
// after this step, job.upgradeMode as given) with its metadata, moves
// observedGeneration, and marks a user-suspended spec stable.
func recordSpec(c depCtx, spec map[string]any, jobStateAfter string, upgrading bool) {
	st := c.st
	st.Error = ""
	st.ReconTimestamp = time.Now().UnixMilli()
	old := parseReconciled(st.LastReconciledSpec)
	st.ReconState = reconDeployed
	if upgrading {
		st.ReconState = reconUpgrading
	}
	clone := runtimeCopy(spec)
	if job, ok := clone["job"].(map[string]any); ok {
		job["state"] = jobStateAfter
	}
	r := reconciledSpec{Spec: clone}
	r.Meta.APIVersion = c.obj.GetAPIVersion()
	// ReconciliationMetadata.from: first deployment until a later spec is deployed.
	r.Meta.FirstDeployment = old == nil || (st.ReconState == reconDeployed && old.Meta.FirstDeployment)
	b, _ := json.Marshal(r)
	st.LastReconciledSpec = string(b)
	st.ObservedGeneration = c.obj.GetGeneration()
	if jobField(spec, "state", jobRunning) == jobSuspended {
		st.LastStableSpec = st.LastReconciledSpec
	}
}

func withUpgradeMode(spec map[string]any, mode string) map[string]any {
	c := runtimeCopy(spec)
	if job, ok := c["job"].(map[string]any); ok {
		job["upgradeMode"] = mode
	}
	return c
}

// checkAndUpdateStableSpec is ReconciliationUtils.checkAndUpdateStableSpec,
// run by JobStatusObserver: a deployed spec whose job runs (or finished on
// its own) is stable.
func checkAndUpdateStableSpec(st *deploymentStatus) {
	if st.ReconState != reconDeployed {
		return
	}
	last := parseReconciled(st.LastReconciledSpec)
	if st.JobState == flinkRunning || (last != nil && jobField(last.Spec, "state", jobRunning) == jobRunning && st.JobState == flinkFinished) {
		st.LastStableSpec = st.LastReconciledSpec
	}
}

func (o *Operator) deployments(ctx context.Context, dyn dynamic.Interface) {
	r := dyn.Resource(flinkDeploymentGVR).Namespace(o.Namespace)
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		o.reconcileDeployment(ctx, dyn, r, &list.Items[i])
	}
}

func hasFinalizer(obj *unstructured.Unstructured, f string) bool {
	for _, x := range obj.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

func addFinalizer(ctx context.Context, r dynamic.ResourceInterface, obj *unstructured.Unstructured, f string) (*unstructured.Unstructured, error) {
	fins := append(append([]string{}, obj.GetFinalizers()...), f)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fins, "resourceVersion": obj.GetResourceVersion()}})
	return r.Patch(ctx, obj.GetName(), ktypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: operatorManager})
}

func removeFinalizer(ctx context.Context, r dynamic.ResourceInterface, obj *unstructured.Unstructured, f string) error {
	var fins []string
	for _, x := range obj.GetFinalizers() {
		if x != f {
			fins = append(fins, x)
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fins, "resourceVersion": obj.GetResourceVersion()}})
	_, err := r.Patch(ctx, obj.GetName(), ktypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: operatorManager})
	return err
}

// reconcileDeployment is one FlinkDeploymentController.reconcile: observe,
// validate, reconcile, write status. Deletion is its cleanup: the cluster
// goes and the finalizer with it.
func (o *Operator) reconcileDeployment(ctx context.Context, dyn dynamic.Interface, r dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	if obj.GetDeletionTimestamp() != nil {
		if o.Flink != nil {
			o.Flink.Stop(obj, true)
		}
		o.deleteJobManager(ctx, dyn, obj)
		o.deleteHAConfigMaps(ctx, dyn, obj)
		if hasFinalizer(obj, DeploymentFinalizer) {
			if err := removeFinalizer(ctx, r, obj, DeploymentFinalizer); err == nil {
				o.logf("operator: FlinkDeployment %s cleaned up", obj.GetName())
			}
		}
		return
	}
	if !hasFinalizer(obj, DeploymentFinalizer) {
		updated, err := addFinalizer(ctx, r, obj, DeploymentFinalizer)
		if err != nil {
			return
		}
		obj = updated
	}
	st := readDeploymentStatus(obj)
	before := st
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	c := depCtx{obj: obj, spec: spec, st: &st, dyn: dyn}
	if o.currentFaults().JobManagerUnreachable && obj.GetGeneration() > st.ObservedGeneration {
		// The reconciliation of a spec change observes the job first, by
		// asking the JobManager (JobStatusObserver.observe), which does not
		// answer: the job is RECONCILING before the spec is reconciled
		// (getJobUpgrade then finds it not running). The real operator's
		// periodic observation would find it so too; the model waits for
		// the first call it makes, as with a snapshot's trigger.
		o.mu.Lock()
		o.markUnreachable(string(obj.GetUID()))
		o.mu.Unlock()
	}
	o.observe(ctx, dyn, c)
	var last map[string]any
	if l := parseReconciled(st.LastReconciledSpec); l != nil {
		last = l.Spec
	}
	if msg := o.validate(last, spec); msg != "" {
		// FlinkDeploymentController.validateDeployment: a ValidationError
		// event, then ReconciliationUtils.applyValidationErrorAndResetSpec:
		// the error is reported and the last reconciled spec stays in
		// force; before the first deployment nothing else is recorded (no
		// observedGeneration).
		o.warnEvery(ctx, dyn, obj, "ValidationError", msg, componentOperator)
		st.Error = operatorException("org.apache.flink.kubernetes.operator.exception.ValidationException", msg)
	} else if o.rescheduled(obj) {
		// FlinkDeploymentController: after an UpgradeFailureException the
		// resource is reconciled again after the reconcile interval
		// (ReconciliationUtils.toUpdateControl: rescheduleAfter), or at once
		// on a spec change (a new generation: the informer's event).
	} else if err := o.reconcile(ctx, dyn, c); err != nil {
		var ufe *upgradeFailureError
		if errors.As(err, &ufe) {
			o.mu.Lock()
			if o.failedAt == nil {
				o.failedAt = map[string]failedReconcile{}
			}
			o.failedAt[string(obj.GetUID())] = failedReconcile{generation: obj.GetGeneration(), at: time.Now()}
			o.mu.Unlock()
			// FlinkDeploymentController.reconcile: an UpgradeFailureException
			// goes to status.error (updateForReconciliationError) and to a
			// Warning event of its reason whose message is the causal chain
			// (triggerErrorEvent, ExceptionUtils.getExceptionMessage:
			// "message -> cause").
			st.Error = operatorException("org.apache.flink.kubernetes.operator.exception.UpgradeFailureException", ufe.msg)
			o.warnEvery(ctx, dyn, obj, ufe.reason, ufe.msg+" -> "+ufe.cause, componentJobManager)
		} else {
			// FlinkDeploymentController: ReconciliationException, error in status.
			st.Error = operatorException("org.apache.flink.kubernetes.operator.exception.ReconciliationException", err.Error())
		}
	}
	if st == before {
		return
	}
	obj.Object["status"] = st.object(false)
	if _, err := r.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
		o.logf("operator: status of FlinkDeployment %s: %v", obj.GetName(), err)
		return
	}
	o.logf("operator: FlinkDeployment %s generation %d: %s, job %s %s", obj.GetName(), obj.GetGeneration(), st.lifecycle(false), st.JobID, st.JobState)
}

// observe is AbstractFlinkDeploymentObserver plus JobStatusObserver, one
// step per pass: a JobManager being deployed becomes ready (or fails with
// the container's error, DeploymentFailedException), then the job runs,
// restoring from the path it was deployed with.
func (o *Operator) observe(ctx context.Context, dyn dynamic.Interface, c depCtx) {
	st, f := c.st, o.currentFaults()
	if o.Flink != nil && st.JMStatus == jmReady && st.JobState == flinkRunning && !o.Flink.Running(c.obj) {
		// Real Flink whose processes are gone (an earlier test bed run
		// ended): the pods come back, as the kubelet restarts them, and
		// with Kubernetes HA the job resumes from its HA metadata.
		if id, err := o.Flink.Start(ctx, c.obj, LastStateDummyPath, st.JobID, false); err != nil {
			st.JobState = flinkFailed
			st.Error = operatorException("org.apache.flink.runtime.client.JobInitializationException", firstLines(err.Error(), 3))
		} else {
			st.JobID = id
		}
		return
	}
	if f.JobManagerDeleted && st.JMStatus != jmMissing && parseReconciled(st.LastReconciledSpec) != nil &&
		jobField(parseReconciled(st.LastReconciledSpec).Spec, "state", jobRunning) == jobRunning {
		// AbstractFlinkDeploymentObserver.observeJmDeployment without its
		// Deployment: MISSING, the job RECONCILING unless terminal, and
		// onMissingDeployment: MissingJobManagerException "Missing
		// JobManager deployment" in status.error and a Warning event
		// "Missing" (seen on the real operator 1.15.0 after the
		// Deployment was deleted: TestDifferential_upgradeNeverReady).
		prev := st.JMStatus
		st.JMStatus = jmMissing
		if !jobTerminal(st.JobState) {
			st.JobState = flinkReconciling
		}
		if prev != jmError {
			st.Error = operatorException("org.apache.flink.kubernetes.operator.exception.MissingJobManagerException", "Missing JobManager deployment")
			o.recordEvent(ctx, dyn, c.obj, eventWarning, "Missing", "Missing JobManager deployment", componentJobManager)
		}
		return
	}
	o.mu.Lock()
	unreachable := f.JobManagerUnreachable && o.unreachable[string(c.obj.GetUID())]
	o.mu.Unlock()
	if unreachable {
		// Seen on the real operator 1.15.0 with the JobManager's process
		// stopped (TestDifferential_finalSavepointUnreachable): the job
		// status request times out (kubernetes.operator.flink.client.timeout),
		// JobStatusObserver.observe moves a RUNNING job to RECONCILING
		// (ifRunningMoveToReconciling) and, on the TimeoutException,
		// ApplicationObserver.onTimeout → observeJmDeployment finds the
		// Deployment available and the port open (a stopped JVM's socket
		// still accepts) and says DEPLOYED_NOT_READY; the next observe
		// takes DEPLOYED_NOT_READY to READY without a call, and the one
		// after times out again: the JobManager flips between the two.
		if st.JobState == flinkRunning {
			st.JobState = flinkReconciling
		}
		switch st.JMStatus {
		case jmReady:
			st.JMStatus = jmDeployedNotReady
		case jmDeployedNotReady:
			st.JMStatus = jmReady
		}
		return
	}
	switch st.JMStatus {
	case jmDeploying:
		if f.JobManagerNeverReady {
			return
		}
		if cw := f.ContainerWaiting; cw != nil {
			o.containerWaiting(ctx, dyn, c, cw)
			return
		}
		st.JMStatus = jmDeployedNotReady
	case jmReady:
		// A job the JobNeverRuns fault held in RECONCILING starts once the
		// fault is cleared, as a slow job start would.
		if st.JobState != flinkReconciling || f.JobNeverRuns {
			break
		}
		fallthrough
	case jmDeployedNotReady:
		st.JMStatus = jmReady
		if f.JobNeverRuns {
			break
		}
		restore := o.restoreFrom(c.obj)
		if restore != "" && restore != LastStateDummyPath {
			if msg := o.restorable(ctx, restore); msg != "" {
				o.restoreUnresolvable(ctx, dyn, c, restore, msg)
				return
			}
		}
		if o.Flink != nil {
			// Real Flink: the dummy path means "resume from HA metadata",
			// which Kubernetes HA does by itself for the same cluster id.
			id, err := o.Flink.Start(ctx, c.obj, restore, st.JobID, true)
			if err != nil {
				st.JobState = flinkFailed
				st.Error = operatorException("org.apache.flink.runtime.client.JobInitializationException", firstLines(err.Error(), 3))
				return
			}
			st.JobID = id
			st.JobState, st.StartTime = flinkRunning, fmt.Sprint(time.Now().UnixMilli())
			checkAndUpdateStableSpec(st)
			return
		}
		st.JobState, st.StartTime = flinkRunning, fmt.Sprint(time.Now().UnixMilli())
		if dir := confValue(c.spec, checkpointDirKey, checkpointDirOld); dir != "" && !f.NoCheckpoints {
			n := o.nextCheckpoint(st.JobID)
			if _, err := o.writeCheckpoint(ctx, dir, st.JobID, n, specParallelism(c.spec)); err != nil {
				o.logf("operator: Flink writing a checkpoint of %s: %v", c.obj.GetName(), err)
			}
			if haEnabled(c.spec) {
				o.writeHAConfigMap(ctx, dyn, c.obj, st.JobID, n)
			}
		}
	}
	checkAndUpdateStableSpec(st)
}

// containerWaiting: the JobManager's container waits (a kubelet's reason
// and message). FlinkDeploymentController on DeploymentFailedException
// (forContainerStatus: "[container] message"), with a Warning event whose
// reason is the container's waiting reason (triggerErrorEvent with
// dfe.getReason(); seen on the real operator 1.15.0:
// TestDifferential_createImagePullBackOff).
func (o *Operator) containerWaiting(ctx context.Context, dyn dynamic.Interface, c depCtx, cw *ContainerState) {
	st := c.st
	st.JMStatus, st.JobState = jmError, flinkReconciling
	msg := fmt.Sprintf("[%s] %s", "flink-main-container", cw.Message)
	st.Error = operatorException("org.apache.flink.kubernetes.operator.exception.DeploymentFailedException", msg)
	o.recordEvent(ctx, dyn, c.obj, eventWarning, cw.Reason, msg, componentJobManager)
	o.writeWaitingJobManager(ctx, dyn, c)
}

// writeWaitingJobManager writes the JobManager Deployment of a waiting
// container as the API server shows it to the operator and the provider:
// named as the FlinkDeployment, with the JobManager labels (Flink's
// KubernetesUtils.getJobManagerSelectors), owned by the FlinkDeployment
// (the operator's setOwnerReference), and the status the deployment
// controller writes at its first sync for a pod that never becomes ready:
// Available False since the Deployment's creation (lastTransitionTime its
// creationTimestamp), which is what FlinkUtils.jmPodNeverStarted and
// kube.JobManagerNeverStarted read. The model writes no other JobManager
// Deployments: nothing else reads them.
func (o *Operator) writeWaitingJobManager(ctx context.Context, dyn dynamic.Interface, c depCtx) {
	deps := dyn.Resource(deploymentGVR).Namespace(c.obj.GetNamespace())
	name := c.obj.GetName()
	if _, err := deps.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return
	}
	labels := map[string]any{"app": name, "type": "flink-native-kubernetes", "component": "jobmanager"}
	image, _, _ := unstructured.NestedString(c.spec, "image")
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": c.obj.GetNamespace(), "labels": labels,
			"ownerReferences": []any{map[string]any{"apiVersion": c.obj.GetAPIVersion(), "kind": c.obj.GetKind(),
				"name": name, "uid": string(c.obj.GetUID()), "blockOwnerDeletion": true}}},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{
				"containers": []any{map[string]any{"name": "flink-main-container", "image": image}}}}},
	}}
	created, err := deps.Create(ctx, dep, metav1.CreateOptions{FieldManager: operatorManager})
	if err != nil {
		o.logf("operator: JobManager Deployment of %s: %v", name, err)
		return
	}
	at := created.GetCreationTimestamp().UTC().Format(time.RFC3339)
	created.Object["status"] = map[string]any{"observedGeneration": created.GetGeneration(), "replicas": int64(1),
		"updatedReplicas": int64(1), "unavailableReplicas": int64(1), "conditions": []any{map[string]any{
			"type": "Available", "status": "False", "reason": "MinimumReplicasAvailable",
			"message": "Deployment does not have minimum availability.", "lastUpdateTime": at, "lastTransitionTime": at}}}
	if _, err := deps.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
		o.logf("operator: JobManager Deployment status of %s: %v", name, err)
	}
}

// jmPodNeverStarted is FlinkUtils.jmPodNeverStarted (release-1.15.0),
// read by the model itself (not through the provider's
// kube.JobManagerNeverStarted, which it judges): the FlinkDeployment's
// JobManager Deployment has an Available condition False whose
// lastTransitionTime is the Deployment's creationTimestamp; no Deployment,
// or none such, is false ("to be on the safe side").
func jmPodNeverStarted(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) bool {
	dep, err := dyn.Resource(deploymentGVR).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return false
	}
	created := dep.GetCreationTimestamp().UTC().Format(time.RFC3339)
	conds, _, _ := unstructured.NestedSlice(dep.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Available" && m["status"] == "False" && m["lastTransitionTime"] == created {
			return true
		}
	}
	return false
}

// deleteJobManager deletes the JobManager Deployment writeWaitingJobManager
// wrote, as AbstractFlinkService.deleteClusterDeployment deletes the
// cluster's.
func (o *Operator) deleteJobManager(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) {
	err := dyn.Resource(deploymentGVR).Namespace(obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		o.logf("operator: deleting the JobManager Deployment of %s: %v", obj.GetName(), err)
	}
}

// restoreUnresolvable is what a user sees when Flink cannot resolve the
// restore path (AbstractFsCheckpointStorageAccess.resolveCheckpointPointer:
// "Cannot find checkpoint or savepoint …"), as seen on the real operator
// 1.15.0 with real Flink 2.2.1 and Kubernetes HA
// (TestDifferential_restoreFromMissingPath). The JobMaster does not start
// (JobInitializationException), so the application's main method fails
// and the JobManager process exits ("Fatal error occurred in the cluster
// entrypoint", ClusterEntrypoint); the failed job's result is in the
// job-result-store under the HA storage directory, so the restarted
// JobManager ignores the job ("the job already reached a globally-terminal
// state in a previous execution", Dispatcher) and runs none. The operator
// then finds no job: JobStatusObserver.onTargetJobNotFound sets
// status.error to JOB_NOT_FOUND_ERR ("Job Not Found", a plain string),
// the job RECONCILING, reconciliation DEPLOYED, and writes a Warning event
// Missing at each observation; the lifecycle stays DEPLOYED and the
// JobManager READY. Flink's own message is only in the JobManager's log.
// (The crash in between reaches the operator as a CrashLoopBackOff event
// when it observes the pod during it: not modelled.)
//
// Without HA the job-result-store is the JobManager's memory
// (EmbeddedJobResultStore), so every restart submits the job again, fails
// again and exits: the kubelet's crash loop (kuberuntime_manager.go:
// "back-off <delay> restarting failed container=<name> pod=<pod>",
// reason CrashLoopBackOff), which the operator reports as for any waiting
// container (containerWaiting; seen on the real operator 1.15.0 with real
// Flink 2.2.1: TestDifferential_restoreFromMissingPath/noHA).
func (o *Operator) restoreUnresolvable(ctx context.Context, dyn dynamic.Interface, c depCtx, path, flinkMsg string) {
	o.logf("operator: Flink cannot restore %s from %s: %s", c.obj.GetName(), path, flinkMsg)
	if !haEnabled(c.spec) {
		o.containerWaiting(ctx, dyn, c, &ContainerState{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off 10s restarting failed container=flink-main-container pod=%s-jobmanager_%s(%s)", c.obj.GetName(), c.obj.GetNamespace(), c.obj.GetUID())})
		return
	}
	st := c.st
	st.JMStatus, st.JobState, st.StartTime = jmReady, flinkReconciling, ""
	st.ReconState = reconDeployed
	st.Error = jobNotFound
	o.warnEvery(ctx, dyn, c.obj, "Missing", jobNotFound, componentJob)
}

// jobTerminal: Flink's globally terminal job states, FAILED, CANCELED and
// FINISHED (JobStatus.isGloballyTerminalState), as the operator reads
// them (ReconciliationUtils.isJobInTerminalState).
func jobTerminal(state string) bool {
	return state == flinkFinished || state == flinkFailed || state == flinkCanceled
}

// jobNotFound is JobStatusObserver.JOB_NOT_FOUND_ERR.
const jobNotFound = "Job Not Found"

func (o *Operator) nextCheckpoint(jobID string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.nextChk == nil {
		o.nextChk = map[string]int{}
	}
	o.nextChk[jobID]++
	return o.nextChk[jobID]
}

// lastCheckpoint is the number of the job's last checkpoint, 0 before one.
func (o *Operator) lastCheckpoint(jobID string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.nextChk[jobID]
}

func (o *Operator) hadCheckpoint(jobID string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.nextChk[jobID] > 0
}

// The path a deployed job restores from is what the operator passed Flink
// (execution.savepoint.path from the real operator 1.15.0, the deprecated
// key of Flink 2.2's execution.state-recovery.path); the model keeps it
// per object.
func (o *Operator) restoreFrom(obj *unstructured.Unstructured) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.restores[string(obj.GetUID())]
}

func (o *Operator) setRestore(obj *unstructured.Unstructured, path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.restores == nil {
		o.restores = map[string]string{}
	}
	o.restores[string(obj.GetUID())] = path
}

// reconcile is AbstractFlinkResourceReconciler.reconcile for an application
// deployment.
func (o *Operator) reconcile(ctx context.Context, dyn dynamic.Interface, c depCtx) error {
	st := c.st
	last := parseReconciled(st.LastReconciledSpec)
	o.mu.Lock()
	retry := o.refused[string(c.obj.GetUID())]
	wait := time.Now().Before(o.retryAt[string(c.obj.GetUID())])
	o.mu.Unlock()
	if retry && wait {
		return nil // the Java Operator SDK's retry is not due yet: the status stays as it is
	}
	if retry && last != nil {
		// A first deployment that never went through is deployed again:
		// the observer clears its spec first
		// (AbstractFlinkResourceObserver.isResourceReadyToBeObserved:
		// clearLastReconciledSpecIfFirstDeploy), and
		// FlinkDeploymentController.reconcile writes that status, the
		// error still set (lifecycle FAILED for a moment), before the
		// reconciler deploys again (the model's next pass).
		st.LastReconciledSpec, st.ReconState = "", reconUpgrading
		return nil
	}
	if last == nil {
		if msg := o.currentFaults().DeploymentCreateRefused; msg != "" {
			return o.deployRefused(ctx, dyn, c, msg)
		}
		o.mu.Lock()
		delete(o.refused, string(c.obj.GetUID()))
		o.mu.Unlock()
		return o.firstDeploy(c)
	}
	diff := diffType(last.Spec, c.spec)
	if diff == diffIgnore && st.ReconState != reconUpgrading {
		// ReconciliationUtils.updateReconciliationMetadata: the spec is not
		// recorded, only the generation observed.
		st.ObservedGeneration = c.obj.GetGeneration()
		return nil
	}
	if diff != diffIgnore {
		// AbstractFlinkResourceReconciler.triggerSpecChangeEvent: a Normal
		// SpecChanged event, once per generation (triggerEventOnce, key
		// "SpecChange: <generation>"), before the change is acted on, also
		// when the operator then waits (seen on the real operator 1.15.0
		// for an upgrade of a job whose JobManager never became ready:
		// TestDifferential_upgradeNeverReady). The model does not render
		// the diff itself.
		o.eventOnce(ctx, dyn, c.obj, eventNormal, "SpecChanged",
			diff+" change(s) detected (Diff: FlinkDeploymentSpec[…]), starting reconciliation.", componentJobManager,
			fmt.Sprintf("SpecChange: %d", c.obj.GetGeneration()))
	}
	return o.reconcileSpecChange(ctx, dyn, c, diff, last.Spec)
}

// deployRefused is a first deployment whose JobManager Deployment the API
// server refuses: the spec is recorded as upgrading before the attempt
// (updateStatusBeforeFirstDeployment → updateStatusBeforeDeploymentAttempt),
// Flink's KubernetesClusterDescriptor.deployClusterInternal fails with
// ClusterDeploymentException "Could not create Kubernetes cluster", and
// FlinkDeploymentController.reconcile writes a Warning Error event
// (triggerErrorEvent, ExceptionUtils.getExceptionMessage) and throws a
// ReconciliationException, which updateErrorStatus records in
// status.error; the Java Operator SDK retries it.
func (o *Operator) deployRefused(ctx context.Context, dyn dynamic.Interface, c depCtx, msg string) error {
	o.mu.Lock()
	if o.refused == nil {
		o.refused = map[string]bool{}
	}
	o.refused[string(c.obj.GetUID())] = true
	if o.retryAt == nil {
		o.retryAt = map[string]time.Time{}
	}
	// GenericRetry's first interval, kubernetes.operator.retry.initial.interval
	// (5 s by default: KubernetesOperatorConfigOptions), scaled as the
	// snapshot retries are (RetryBase stands for 10 s), at least 500 ms
	// apart so that a fast model does not flood the API server.
	o.retryAt[string(c.obj.GetUID())] = time.Now().Add(max(o.RetryBase/2, 500*time.Millisecond))
	o.mu.Unlock()
	recordSpec(c, withUpgradeMode(c.spec, modeStateless), jobSuspended, true)
	o.submitEvent(ctx, c)
	refusal := fmt.Sprintf("deployments.apps %q is forbidden: %s", c.obj.GetName(), msg)
	event := fmt.Sprintf("Could not create Kubernetes cluster %q. -> %s", c.obj.GetName(), refusal)
	o.recordEvent(ctx, dyn, c.obj, eventWarning, "Error", event, componentJobManager)
	return fmt.Errorf("org.apache.flink.client.deployment.ClusterDeploymentException: Could not create Kubernetes cluster %q.", c.obj.GetName()) //nolint:staticcheck // ST1005: Flink's wording
}

// firstDeploy is the isBeforeFirstDeployment branch with
// updateStatusBeforeFirstDeployment: initialSavepointPath, when set, is the
// restore path, recorded in jobStatus.upgradeSavepointPath, and the spec is
// recorded with upgradeMode savepoint (else stateless).
func (o *Operator) firstDeploy(c depCtx) error {
	if jobField(c.spec, "state", jobRunning) == jobSuspended {
		return nil
	}
	mode, isp := modeStateless, jobField(c.spec, "initialSavepointPath", "")
	if isp != "" {
		c.st.UpgradeSavepointPath, mode = isp, modeSavepoint
	}
	spec := withUpgradeMode(c.spec, mode)
	o.deploy(c, isp, false)
	recordSpec(c, spec, jobRunning, false)
	return nil
}

// deploy is ApplicationReconciler.deploy: the restore path is the savepoint
// given, else for a last-state restore with a checkpoint the dummy path
// (recorded in upgradeSavepointPath), else none; a new JobID unless this is
// a last-state restore (setJobIdIfNecessary); the job is RECONCILING and the
// JobManager DEPLOYING.
func (o *Operator) deploy(c depCtx, savepoint string, requireHA bool) {
	st := c.st
	if st.JMStatus != jmMissing && st.JMStatus != "" && jobTerminal(st.JobState) {
		// ApplicationReconciler.deploy: "Deleting cluster with terminated
		// application before new deployment" (deleteClusterDeployment,
		// its HA data too unless HA metadata is required), e.g. the cluster
		// a savepoint suspend or upgrade left up.
		st.JMStatus = jmMissing
		if !requireHA {
			o.deleteHAConfigMaps(context.Background(), c.dyn, c.obj)
		}
		if o.Flink != nil {
			o.Flink.Stop(c.obj, !requireHA)
		}
	}
	// The cluster of the new spec is a new Deployment (Flink's
	// KubernetesClusterDescriptor); the one of a container that waited
	// goes first.
	o.deleteJobManager(context.Background(), c.dyn, c.obj)
	restore := savepoint
	if restore == "" && requireHA && st.JobID != "" && o.hadCheckpoint(st.JobID) {
		restore = LastStateDummyPath
		st.UpgradeSavepointPath = LastStateDummyPath
	}
	if st.JobID == "" || !requireHA {
		st.JobID = newJobID()
	}
	st.JobName = c.obj.GetName()
	st.JobState, st.JMStatus, st.StartTime = flinkReconciling, jmDeploying, ""
	o.setRestore(c.obj, restore)
	o.submitEvent(context.Background(), c)
}

// submitEvent is the Normal Submit event ApplicationReconciler.deploy
// writes before it submits the cluster (MSG_SUBMIT "Starting deployment",
// component JobManagerDeployment), at every deployment, also one the API
// server then refuses.
func (o *Operator) submitEvent(ctx context.Context, c depCtx) {
	o.recordEvent(ctx, c.dyn, c.obj, eventNormal, "Submit", "Starting deployment", componentJobManager)
}

// jobUpgrade is AbstractJobReconciler.getJobUpgrade: how to suspend the
// running job and how to restore it, by the new spec's upgradeMode.
// available false means no upgrade is available yet; pending (only then)
// that it is JobUpgrade.pendingUpgrade, whose allowFallback is false, so
// ApplicationReconciler.getJobUpgrade does not fall back to the HA
// metadata either.
func jobUpgrade(st *deploymentStatus, last, cur map[string]any) (suspend, restore string, available, pending bool) {
	mode := jobField(cur, "upgradeMode", modeStateless)
	running := st.JobState == flinkRunning
	versionChanged := fmt.Sprint(last["flinkVersion"]) != fmt.Sprint(cur["flinkVersion"])
	switch mode {
	case modeStateless:
		return modeStateless, modeStateless, true, false
	case modeSavepoint:
		if running {
			return modeSavepoint, modeSavepoint, true, false
		}
		if !versionChanged && !fallbackAllowed(cur) {
			// "Last-state fallback is disabled, waiting for upgradable
			// state": JobUpgrade.pendingUpgrade.
			return "", "", false, true
		}
		mode = modeLastState
	}
	if mode == modeLastState {
		if versionChanged {
			if running && confValue(cur, savepointDirKey, savepointDirKeyOld) != "" {
				return modeSavepoint, modeSavepoint, true, false
			}
			return "", "", false, false
		}
		if running {
			// HA metadata present, kubernetes.operator.job.upgrade.last-state.job-cancel.enabled false:
			// JobUpgrade.lastStateUsingHaMeta.
			return modeLastState, modeLastState, true, false
		}
	}
	return "", "", false, false
}

// fallbackAllowed is kubernetes.operator.job.upgrade.last-state-fallback
// .enabled (default true) of spec: a savepoint-mode job that is not running
// is then suspended last-state (AbstractJobReconciler.getJobUpgrade falls
// back to LAST_STATE; ApplicationReconciler.getJobUpgrade, on
// JobUpgrade.isAllowFallback, to lastStateUsingHaMeta), which takes no
// savepoint. With it false the operator waits (pendingUpgrade, whose
// allowFallback is false).
func fallbackAllowed(spec map[string]any) bool {
	return confValue(spec, lastStateFallbackKey) != "false"
}

// upgradeFailure is ApplicationReconciler.getJobUpgrade when no stateful
// upgrade is available: a JobManager that is MISSING or in ERROR (e.g. never
// started) with no HA metadata to restore from throws UpgradeFailureException
// ("JobManager deployment is missing and " + MSG_HA_METADATA_NOT_AVAILABLE +
// " to make stateful upgrades. " + MSG_JOB_FINISHED_OR_CONFIGMAPS_DELETED +
// MSG_MANUAL_RESTORE_REQUIRED, CommonStatus), which the operator records in
// status.error instead of waiting. (A JobManager that never started, of a
// job last deployed in another mode than last-state, is deleted first:
// the operator then fails on "last checkpoint is unknown" — the same
// exception, also ending in "Manual restore required." — when its status
// savepoint is the last-state dummy, and otherwise restores from the
// savepoint recorded, or from empty state with none: reconcileSpecChange.)
// HA metadata exists in the model once the job completed a checkpoint, as in
// deploy's requireHA.
//
// FlinkDeploymentController.reconcile catches it: updateForReconciliationError
// records it in status.error and triggerErrorEvent writes a Warning event
// whose reason is the exception's ("UpgradeFailed") and whose message is
// its message, said again at each reconciliation (the operator reschedules
// the resource every reconcile interval).
func (o *Operator) upgradeFailure(ctx context.Context, dyn dynamic.Interface, c depCtx) {
	st := c.st
	if st.JMStatus != jmMissing && st.JMStatus != jmError {
		return // a running or deploying JobManager: the operator waits
	}
	if st.JobID != "" && o.hadCheckpoint(st.JobID) {
		return
	}
	// No space before "Manual": CommonStatus.MSG_JOB_FINISHED_OR_CONFIGMAPS_DELETED
	// ends with "deleted." and MSG_MANUAL_RESTORE_REQUIRED is appended as is
	// (the real operator 1.15.0 says "deleted.Manual restore required.").
	const msg = "JobManager deployment is missing and HA metadata is not available to make stateful upgrades. " +
		"It is possible that the job has finished or terminally failed, or the configmaps have been deleted.Manual restore required."
	st.Error = operatorException("org.apache.flink.kubernetes.operator.exception.UpgradeFailureException", msg)
	o.warnEvery(ctx, dyn, c.obj, "UpgradeFailed", msg, componentJobManager)
}

// reconcileSpecChange is AbstractJobReconciler.reconcileSpecChange.
func (o *Operator) reconcileSpecChange(ctx context.Context, dyn dynamic.Interface, c depCtx, diff string, last map[string]any) error {
	st := c.st
	lastJobState := jobField(last, "state", jobRunning)
	desired := jobField(c.spec, "state", jobRunning)

	if diff == diffSavepointRedeploy {
		// redeployWithSavepoint: stateless cancel, deploy from
		// initialSavepointPath (recorded in upgradeSavepointPath), stable.
		st.JobState, st.JMStatus = flinkFinished, jmMissing
		if o.Flink != nil {
			o.Flink.Stop(c.obj, true)
		}
		isp := jobField(c.spec, "initialSavepointPath", "")
		st.UpgradeSavepointPath = isp
		spec := withUpgradeMode(c.spec, modeSavepoint)
		if desired == jobRunning {
			o.deploy(c, isp, false)
		}
		recordSpec(c, spec, desired, false)
		st.LastStableSpec = st.LastReconciledSpec
		return nil
	}

	if lastJobState == jobRunning {
		suspend, restore, ok, pending := jobUpgrade(st, last, c.spec)
		if !ok && !pending && jobField(c.spec, "upgradeMode", modeStateless) != modeStateless && haEnabled(c.spec) && st.JobID != "" && o.hadCheckpoint(st.JobID) {
			// ApplicationReconciler.getJobUpgrade: "Job is not running but
			// HA metadata is available for last state restore, ready for
			// upgrade" (JobUpgrade.lastStateUsingHaMeta; the model's HA
			// metadata is the job's completed checkpoint, whose ConfigMap
			// it writes: writeHAConfigMap).
			suspend, restore, ok = modeLastState, modeLastState, true
		}
		if !ok && st.JMStatus != jmMissing && jobField(last, "upgradeMode", modeStateless) != modeLastState &&
			jobField(c.spec, "upgradeMode", modeStateless) != modeStateless && jmPodNeverStarted(ctx, dyn, c.obj) {
			// ApplicationReconciler.getJobUpgrade: a JobManager that never
			// started (FlinkUtils.jmPodNeverStarted, read from the
			// Deployment writeWaitingJobManager wrote) of a job not last deployed
			// last-state is deleted (deleteJmThatNeverStarted: the job
			// FAILED, HA data kept), and the terminal job restores from the
			// savepoint in its status (AbstractJobReconciler.getJobUpgrade,
			// useStatusSavepoint; seen on the real operator 1.15.0 with a
			// savepoint on record: TestRealOperator_fixNotRunningSavepoint),
			// or, with none on record (SnapshotUtils.lastSavepointKnown is
			// true for no savepoint at all), deploys the new spec from empty
			// state with a new job id (restoreJob finds no savepoint;
			// setJobIdIfNecessary: not a last-state deploy), e.g. a first
			// deployment, recorded stateless, whose JobManager never
			// started (seen on the real operator 1.15.0:
			// TestDifferential_fixNeverStartedNoSavepoint). With the
			// last-state dummy there the operator says "last checkpoint is
			// unknown"; not run on the real operator with a node, that case
			// stays with upgradeFailure.
			if p := st.UpgradeSavepointPath; p != LastStateDummyPath {
				st.JobState, st.JMStatus = flinkFailed, jmMissing
				o.deleteJobManager(ctx, dyn, c.obj)
				if o.Flink != nil {
					o.Flink.Stop(c.obj, false)
				}
				recordSpec(c, withUpgradeMode(c.spec, modeSavepoint), jobSuspended, desired == jobRunning)
				return nil
			}
		}
		if !ok {
			// "Job is not running and checkpoint information is not
			// available for executing the upgrade, waiting for upgradeable
			// state" (a log line only), unless the upgrade cannot happen
			// at all.
			o.upgradeFailure(ctx, dyn, c)
			return nil
		}
		if err := o.cancelJob(ctx, dyn, c, suspend); err != nil {
			return err
		}
		spec := withUpgradeMode(c.spec, restore)
		// The job is suspended; it is restored by the next reconciliation
		// (UPGRADING state), or stays suspended if so desired.
		recordSpec(c, spec, jobSuspended, desired == jobRunning)
		return nil
	}

	if lastJobState == jobSuspended && desired == jobRunning {
		spec := c.spec
		lastMode := jobField(last, "upgradeMode", modeStateless)
		if jobField(spec, "upgradeMode", modeStateless) != modeStateless {
			spec = withUpgradeMode(spec, lastMode)
		}
		// restoreJob: a savepoint restore uses jobStatus.upgradeSavepointPath;
		// HA is required when the job was suspended last-state.
		sp := ""
		if jobField(spec, "upgradeMode", modeStateless) == modeSavepoint {
			sp = st.UpgradeSavepointPath
		}
		o.deploy(c, sp, lastMode == modeLastState)
		recordSpec(c, spec, jobRunning, false)
	}
	return nil
}

// cancelJob is ApplicationReconciler.cancelJob over AbstractFlinkService
// .cancelJob: a savepoint suspend stops the job with a savepoint into the
// savepoint dir and records it (setUpgradeSavepointPath, which also creates
// an UPGRADE FlinkStateSnapshot); the JobManager goes and the job is
// FINISHED. A failed savepoint leaves the job running.
func (o *Operator) cancelJob(ctx context.Context, dyn dynamic.Interface, c depCtx, suspend string) error {
	st := c.st
	if suspend == modeSavepoint {
		dir := confValue(c.spec, savepointDirKey, savepointDirKeyOld)
		if dir == "" {
			// Flink's own message, as the operator reports it.
			return errors.New("java.lang.IllegalArgumentException: No savepoint location given and no default location configured.") //nolint:staticcheck // ST1005: Flink's wording
		}
		if msg, failed := o.takeSavepointFailure(); failed {
			// AbstractFlinkService.savepointJobOrError: a stop-with-savepoint
			// that fails (not StopWithSavepointStoppingException, whose
			// savepoint completed) throws UpgradeFailureException("Savepoint
			// Error", SavepointError); the job runs on.
			return &upgradeFailureError{msg: "Savepoint Error", reason: "SavepointError", cause: msg}
		}
		var path string
		var err error
		if o.Flink != nil {
			// savepointJobOrError: clusterClient.stopWithSavepoint(jobID,
			// drain-on-savepoint-deletion, savepoint dir, savepoint.format.type),
			// the operator settings read from the current spec (its observe
			// config: FlinkConfigManager.getObserveConfig).
			path, err = o.Flink.Savepoint(ctx, c.obj, st.JobID, dir, SavepointRequest{Stop: true,
				Drain: confValue(c.spec, drainOnSavepointKey) == "true", FormatType: confValue(c.spec, savepointFormatKey)})
		} else {
			path, err = o.writeSavepoint(ctx, dir, st.JobID, specParallelism(c.spec))
		}
		if err != nil {
			return err
		}
		st.UpgradeSavepointPath = path
		if err := o.createUpgradeSnapshot(ctx, dyn, c.obj, path); err != nil {
			o.logf("operator: upgrade snapshot of %s: %v", c.obj.GetName(), err)
		}
	}
	st.JobState = flinkFinished
	if suspend == modeSavepoint {
		// AbstractFlinkService.cancelJob deletes the cluster only for the
		// suspend modes that ask it (SuspendMode.deleteCluster: STATELESS
		// and LAST_STATE) or in standalone mode; after a native
		// stop-with-savepoint the application cluster stays up with its
		// job FINISHED (FlinkConfigBuilder sets
		// execution.shutdown-on-application-finish false) until the next
		// deploy deletes it ("Deleting cluster with terminated application
		// before new deployment": ApplicationReconciler.deploy). Seen on
		// the real operator 1.15.0 with the node: a suspended job's
		// JobManager keeps running (TestDifferential_suspendResume).
		return nil
	}
	st.JMStatus = jmMissing
	// A stateless cancel deletes the cluster's HA data
	// (AbstractFlinkService.deleteClusterDeployment with deleteHaData).
	if suspend != modeLastState {
		o.deleteHAConfigMaps(ctx, dyn, c.obj)
	}
	if o.Flink != nil {
		// What the model counts itself, real Flink leaves in S3: whether
		// the job completed a checkpoint (a chk-N with _metadata under its
		// job dir; deploy's last-state rule reads it).
		if dir := confValue(c.spec, checkpointDirKey, checkpointDirOld); dir != "" && o.completedCheckpoint(ctx, dir, st.JobID) {
			o.nextCheckpoint(st.JobID)
		}
		// The cluster goes; its HA data stays only for a last-state resume.
		o.Flink.Stop(c.obj, suspend != modeLastState)
	}
	return nil
}

// createUpgradeSnapshot is FlinkStateSnapshotUtils.createUpgradeSnapshotResource
// (snapshot resources enabled, the 1.15 default): a savepoint
// FlinkStateSnapshot named <deployment>-savepoint-upgrade-<millis>, labelled
// snapshot.trigger-type UPGRADE, alreadyExists, with
// kubernetes.operator.savepoint.format.type (CANONICAL) and
// kubernetes.operator.savepoint.dispose-on-delete (false) defaults.
func (o *Operator) createUpgradeSnapshot(ctx context.Context, dyn dynamic.Interface, dep *unstructured.Unstructured, path string) error {
	snap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkStateSnapshot",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("%s-savepoint-upgrade-%d", dep.GetName(), time.Now().UnixMilli()),
			"namespace": dep.GetNamespace(),
			"labels":    map[string]any{"snapshot.trigger-type": triggerUpgrade},
		},
		"spec": map[string]any{
			"jobReference": map[string]any{"kind": "FlinkDeployment", "name": dep.GetName()},
			"savepoint":    map[string]any{"path": path, "formatType": "CANONICAL", "disposeOnDelete": false, "alreadyExists": true},
		},
	}}
	_, err := dyn.Resource(flinkStateSnapshotGVR).Namespace(dep.GetNamespace()).Create(ctx, snap, metav1.CreateOptions{FieldManager: operatorManager})
	return err
}

// haEnabled: the spec's configuration activates HA (high-availability.type,
// or its deprecated key high-availability, set and not NONE:
// HighAvailabilityMode.isHighAvailabilityModeActivated).
func haEnabled(spec map[string]any) bool {
	conf := flatConf(spec["flinkConfiguration"])
	ha := conf["high-availability.type"]
	if ha == "" {
		ha = conf["high-availability"]
	}
	return ha != "" && !strings.EqualFold(ha, "NONE")
}

// writeHAConfigMap stands in for Flink's Kubernetes HA services recording
// a completed checkpoint: the job's ConfigMap "<cluster-id>-<job-id>-config-map"
// labelled with the cluster's common labels (app=<cluster-id>,
// type=flink-native-kubernetes) and configmap-type=high-availability, with a
// "checkpointID-<n>" key (Flink's KubernetesUtils.getConfigMapLabels and
// KubernetesCheckpointStoreUtil: CHECKPOINT_ID_KEY_PREFIX, the id written
// as 19 digits). What the operator reads of it is that it exists
// (FlinkUtils.isKubernetesHaMetadataAvailable).
func (o *Operator) writeHAConfigMap(ctx context.Context, dyn dynamic.Interface, dep *unstructured.Unstructured, jobID string, n int) {
	name := dep.GetName() + "-" + jobID + "-config-map"
	r := dyn.Resource(configMapGVR).Namespace(dep.GetNamespace())
	key := fmt.Sprintf("checkpointID-%019d", n)
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": dep.GetNamespace(), "labels": map[string]any{
			"app": dep.GetName(), "type": "flink-native-kubernetes", "configmap-type": "high-availability"}},
		"data": map[string]any{key: "checkpoint pointer (test bed)"},
	}}
	if _, err := r.Create(ctx, cm, metav1.CreateOptions{FieldManager: operatorManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		o.logf("operator: HA ConfigMap of %s: %v", dep.GetName(), err)
	}
}

// deleteHAConfigMaps is FlinkUtils.deleteKubernetesHaMetadata: the
// cluster's HA ConfigMaps go.
func (o *Operator) deleteHAConfigMaps(ctx context.Context, dyn dynamic.Interface, dep *unstructured.Unstructured) {
	err := dyn.Resource(configMapGVR).Namespace(dep.GetNamespace()).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "app=" + dep.GetName() + ",type=flink-native-kubernetes,configmap-type=high-availability"})
	if err != nil {
		o.logf("operator: deleting the HA ConfigMaps of %s: %v", dep.GetName(), err)
	}
}
