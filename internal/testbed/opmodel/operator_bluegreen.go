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
	"k8s.io/client-go/dynamic"
)

// The FlinkBlueGreenDeployment controller, as the operator 1.15.0 runs it
// (controller/FlinkBlueGreenDeploymentController, controller/bluegreen/
// BlueGreenDeploymentService, handlers/*StateHandler, utils/bluegreen/
// BlueGreenUtils). It writes child FlinkDeployments, which the model's
// FlinkDeployment controller then reconciles like any other:
//
//   - A new resource is INITIALIZING_BLUE; its first reconciliation writes
//     <name>-blue from spec.template.spec (label
//     flink/blue-green-deployment-type, an owner reference to the
//     resource, no other metadata) and moves to TRANSITIONING_TO_BLUE
//     with jobStatus.state RECONCILING and abortTimestamp = now + the
//     grace period (InitializingBlueStateHandler, initiateDeployment,
//     prepareFlinkDeployment).
//   - TRANSITIONING_TO_x: once child x is STABLE with its job RUNNING
//     (BlueGreenKubernetesService.isFlinkDeploymentReady), the other
//     child, if any, is deleted after deployment-deletion.delay
//     (deploymentReadyTimestamp), and the state becomes ACTIVE_x, job
//     RUNNING; while x is not ready past abortTimestamp, x is suspended
//     and the state rolls back with jobStatus.state FAILING and "Aborting
//     deployment …" (monitorTransition, shouldWeDelete, shouldWeAbort,
//     abortDeployment, finalizeBlueGreenDeployment).
//   - ACTIVE_x: the spec diff of template.spec against lastReconciledSpec
//     (FlinkBlueGreenDeploymentSpecDiff): a TRANSITION of a ready child
//     triggers a savepoint of the running job into its savepoint dir
//     (BlueGreenUtils.triggerSavepoint: the job keeps running), waits in
//     SAVEPOINTING_x, then writes the other child from the template with
//     job.initialSavepointPath the savepoint's location
//     (configureInitialSavepoint, startTransition); a PATCH_CHILD diff
//     (only ignored fields changed) rewrites child x and moves to
//     TRANSITIONING_TO_x (patchFlinkDeployment); with a child that is not
//     ready the change fails ("Transition to … not possible").
//
//   - SUSPEND and RESUME (a job.state change), and any change while the
//     active child is suspended, patch the active child in place
//     (TRANSITIONING_TO_x); a suspended child whose lifecycle is SUSPENDED
//     makes the state ACTIVE_x with jobStatus SUSPENDED
//     (finalizeSuspendedDeployment; TestDifferential_blueGreenSuspendResume).
//
// Not modelled: savepoint redeploys, spec changes during a transition,
// ingress.

// bgStatus is FlinkBlueGreenDeploymentStatus (the fields the model writes).
type bgStatus struct {
	State, JobState, LastReconciledSpec, LastReconciledTimestamp string
	AbortTimestamp, ReadyTimestamp, TriggerID, Error             string
}

func readBGStatus(obj *unstructured.Unstructured) bgStatus {
	s := func(path ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"status"}, path...)...)
		return v
	}
	return bgStatus{State: s("blueGreenState"), JobState: s("jobStatus", "state"), LastReconciledSpec: s("lastReconciledSpec"),
		LastReconciledTimestamp: s("lastReconciledTimestamp"), AbortTimestamp: s("abortTimestamp"),
		ReadyTimestamp: s("deploymentReadyTimestamp"), TriggerID: s("savepointTriggerId"), Error: s("error")}
}

func (st bgStatus) object() map[string]any {
	out := map[string]any{"jobStatus": map[string]any{}}
	set := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	set("blueGreenState", st.State)
	set("lastReconciledSpec", st.LastReconciledSpec)
	set("lastReconciledTimestamp", st.LastReconciledTimestamp)
	set("abortTimestamp", st.AbortTimestamp)
	set("deploymentReadyTimestamp", st.ReadyTimestamp)
	set("savepointTriggerId", st.TriggerID)
	set("error", st.Error)
	if st.JobState != "" {
		out["jobStatus"] = map[string]any{"state": st.JobState}
	}
	return out
}

// bgContext is one reconciliation's resource, spec, status and children.
type bgContext struct {
	obj      *unstructured.Unstructured
	template map[string]any // spec.template.spec
	st       *bgStatus
	children map[string]*unstructured.Unstructured // bgBlue/bgGreen -> child
}

// epoch is what finalizeBlueGreenDeployment resets the timestamps to
// (millisToInstantStr(0)).
const epoch = "1970-01-01T00:00:00Z"

func instant(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func instantMillis(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

func (o *Operator) blueGreens(ctx context.Context, dyn dynamic.Interface) {
	r := dyn.Resource(flinkBlueGreenGVR).Namespace(o.Namespace)
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		o.reconcileBlueGreen(ctx, dyn, r, &list.Items[i])
	}
}

// reconcileBlueGreen is one FlinkBlueGreenDeploymentController.reconcile.
// The controller is no Cleaner: it adds no finalizer, and a deleted
// resource's children go by their owner references (the garbage collector).
func (o *Operator) reconcileBlueGreen(ctx context.Context, dyn dynamic.Interface, r dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	if obj.GetDeletionTimestamp() != nil {
		return
	}
	st := readBGStatus(obj)
	before := st
	tmpl, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
	c := bgContext{obj: obj, template: tmpl, st: &st, children: map[string]*unstructured.Unstructured{}}
	deps := dyn.Resource(flinkDeploymentGVR).Namespace(obj.GetNamespace())
	for _, t := range []string{bgBlue, bgGreen} {
		// From the informer's cache: a child being deleted is still there.
		if d, err := deps.Get(ctx, childName(obj, t), metav1.GetOptions{}); err == nil {
			c.children[t] = d
		} else if err != nil && !apierrors.IsNotFound(err) {
			return
		}
	}
	var err error
	switch st.State {
	case "":
		st.State = bgInitializingBlue
	case bgInitializingBlue:
		if jobField(tmpl, "state", jobRunning) == jobSuspended {
			st.JobState = bgJobSuspended
		} else if st.LastReconciledSpec == "" || (st.JobState == bgJobFailing && o.bgSpecChanged(c)) {
			o.setLastReconciled(c)
			err = o.initiateDeployment(ctx, deps, c, bgBlue, bgTransitioningTo+bgBlue, "", true)
		}
	case bgActive + bgBlue, bgActive + bgGreen:
		err = o.bgActive(ctx, deps, c, strings.TrimPrefix(st.State, bgActive))
	case bgSavepointing + bgBlue, bgSavepointing + bgGreen:
		o.bgSavepoint(ctx, c, strings.TrimPrefix(st.State, bgSavepointing))
	case bgTransitioningTo + bgBlue, bgTransitioningTo + bgGreen:
		err = o.monitorTransition(ctx, deps, c, strings.TrimPrefix(st.State, bgTransitioningTo))
	}
	if err != nil {
		// JOSDK retries a reconciliation that threw; the status is not written.
		o.logf("operator: FlinkBlueGreenDeployment %s: %v", obj.GetName(), err)
		return
	}
	if st == before {
		return
	}
	obj.Object["status"] = st.object()
	if _, err := r.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
		o.logf("operator: status of FlinkBlueGreenDeployment %s: %v", obj.GetName(), err)
		return
	}
	o.logf("operator: FlinkBlueGreenDeployment %s: %s, job %s %s", obj.GetName(), st.State, st.JobState, st.Error)
}

func childName(obj *unstructured.Unstructured, t string) string {
	return obj.GetName() + "-" + strings.ToLower(t)
}

// setLastReconciled is BlueGreenUtils.setLastReconciledSpec: the whole
// spec (SpecUtils.writeSpecAsJSON(spec, "spec")).
func (o *Operator) setLastReconciled(c bgContext) {
	spec, _, _ := unstructured.NestedMap(c.obj.Object, "spec")
	b, _ := json.Marshal(map[string]any{"spec": spec})
	c.st.LastReconciledSpec, c.st.LastReconciledTimestamp = string(b), instant(time.Now())
}

func (o *Operator) lastTemplate(c bgContext) map[string]any {
	var last struct {
		Spec struct {
			Template struct {
				Spec map[string]any `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	_ = json.Unmarshal([]byte(c.st.LastReconciledSpec), &last)
	return last.Spec.Template.Spec
}

func (o *Operator) bgSpecChanged(c bgContext) bool {
	return !reflect.DeepEqual(runtimeCopy(o.lastTemplate(c)), runtimeCopy(c.template))
}

// bgDiff is FlinkBlueGreenDeploymentSpecDiff.compare over template.spec:
// a job.state change is SUSPEND or RESUME, a SAVEPOINT_REDEPLOY stays one,
// equal specs are IGNORE, a change of ignored fields only is PATCH_CHILD,
// anything else (UPGRADE, SCALE) TRANSITION.
func bgDiff(last, cur map[string]any) string {
	ls, cs := jobField(last, "state", jobRunning), jobField(cur, "state", jobRunning)
	switch {
	case ls != cs && cs == jobSuspended:
		return bgDiffSuspend
	case ls != cs:
		return bgDiffResume
	}
	d := diffType(last, cur)
	switch {
	case d == diffSavepointRedeploy:
		return diffSavepointRedeploy
	case reflect.DeepEqual(runtimeCopy(last), runtimeCopy(cur)):
		return diffIgnore
	case d == diffIgnore:
		return bgDiffPatchChild
	}
	return bgDiffTransition
}

// childSuspended is BlueGreenDeploymentService.isChildSuspended: the
// child's spec asks for job.state suspended.
func childSuspended(d *unstructured.Unstructured) bool {
	if d == nil {
		return false
	}
	spec, _, _ := unstructured.NestedMap(d.Object, "spec")
	return jobField(spec, "state", jobRunning) == jobSuspended
}

// bgReady is BlueGreenKubernetesService.isFlinkDeploymentReady.
func bgReady(d *unstructured.Unstructured) bool {
	if d == nil {
		return false
	}
	lc, _, _ := unstructured.NestedString(d.Object, "status", "lifecycleState")
	js, _, _ := unstructured.NestedString(d.Object, "status", "jobStatus", "state")
	return lc == lifecycleStable && js == flinkRunning
}

// bgOption reads a kubernetes.operator.bluegreen.* duration from the
// resource's spec.configuration only (BlueGreenUtils.getConfigOption).
func bgOption(obj *unstructured.Unstructured, key string, def time.Duration) time.Duration {
	v, _, _ := unstructured.NestedString(obj.Object, "spec", "configuration", key)
	if d, ok := flinkDuration(v); ok {
		return d
	}
	return def
}

// flinkDuration parses Flink's duration format (TimeUtils.parseDuration):
// a number and an optional unit; a bare number is milliseconds.
func flinkDuration(s string) (time.Duration, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	var n int64
	_, _ = fmt.Sscan(s[:i], &n)
	units := map[string]time.Duration{"": time.Millisecond, "ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
		"s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hour": time.Hour, "hours": time.Hour, "d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	u, ok := units[strings.TrimSpace(s[i:])]
	return time.Duration(n) * u, ok
}

// initiateDeployment is BlueGreenDeploymentService.initiateDeployment:
// the child t written whole (createOrReplace) from the template, the
// abort deadline set, the job RECONCILING.
func (o *Operator) initiateDeployment(ctx context.Context, deps dynamic.ResourceInterface, c bgContext, t, next, savepoint string, first bool) error {
	spec := runtimeCopy(c.template)
	if !first && savepoint != "" {
		if job, ok := spec["job"].(map[string]any); ok {
			job["initialSavepointPath"] = strings.TrimPrefix(savepoint, "file:")
		}
	}
	child := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{
			"name": childName(c.obj, t), "namespace": c.obj.GetNamespace(),
			"labels": map[string]any{bgTypeLabel: t},
			"ownerReferences": []any{map[string]any{"apiVersion": c.obj.GetAPIVersion(), "kind": c.obj.GetKind(),
				"name": c.obj.GetName(), "uid": string(c.obj.GetUID()), "blockOwnerDeletion": true, "controller": false}},
		},
		"spec": spec,
	}}
	if old := c.children[t]; old != nil {
		// createOrReplace: a PUT of the new object over the existing one.
		child.SetResourceVersion(old.GetResourceVersion())
		child.SetFinalizers(old.GetFinalizers())
		if _, err := deps.Update(ctx, child, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
			return err
		}
	} else if _, err := deps.Create(ctx, child, metav1.CreateOptions{FieldManager: operatorManager}); err != nil {
		return err
	}
	c.st.AbortTimestamp = instant(time.Now().Add(bgOption(c.obj, bgAbortGracePeriod, 10*time.Minute)))
	c.st.State, c.st.JobState, c.st.Error = next, flinkReconciling, ""
	return nil
}

func other(t string) string {
	if t == bgBlue {
		return bgGreen
	}
	return bgBlue
}

// bgActive is ActiveStateHandler and checkAndInitiateDeployment.
func (o *Operator) bgActive(ctx context.Context, deps dynamic.ResourceInterface, c bgContext, t string) error {
	diff := bgDiff(o.lastTemplate(c), c.template)
	if diff == diffIgnore {
		return nil
	}
	cur := c.children[t]
	if cur != nil && (diff == bgDiffSuspend || diff == bgDiffResume || childSuspended(cur)) {
		// In-place suspend or resume, or any change of a suspended child:
		// the active child patched, before its readiness is asked
		// (checkAndInitiateDeployment; TestDifferential_blueGreenSuspendResume).
		o.setLastReconciled(c)
		return o.initiateDeployment(ctx, deps, c, t, bgTransitioningTo+t, "", len(c.children) != 2)
	}
	if !bgReady(cur) {
		if c.st.JobState != bgJobFailing {
			o.setLastReconciled(c)
			name := "null"
			if cur != nil {
				name = cur.GetName()
			}
			o.markFailing(c, fmt.Sprintf("Transition to %s not possible, current Flink Deployment '%s' is not READY. FAILING '%s'",
				other(t), name, c.obj.GetName()))
		}
		return nil
	}
	if diff != bgDiffTransition {
		// PATCH_CHILD (and what the model does not tell apart): the active
		// child rewritten from the template. patchFlinkDeployment carries
		// over the savepoint it started from, but with one child
		// prepareFlinkDeployment (isFirstDeployment) uses the template's
		// initialSavepointPath instead, so a transition savepoint is no
		// longer recorded (seen on the real operator 1.15.0:
		// TestAccRealOperator_blueGreenDataSources).
		o.setLastReconciled(c)
		return o.initiateDeployment(ctx, deps, c, t, bgTransitioningTo+t, "", len(c.children) != 2)
	}
	stateful := jobField(c.template, "upgradeMode", modeStateless) != modeStateless
	if stateful && c.st.TriggerID == "" {
		// handleSavepoint → triggerSavepoint: Preconditions.checkNotNull on
		// the savepoint directory of the child's observe configuration.
		childSpec, _, _ := unstructured.NestedMap(cur.Object, "spec")
		if confValue(childSpec, savepointDirKey, savepointDirKeyOld) == "" && o.DefaultConfig[savepointDirKey] == "" {
			o.markFailing(c, "Could not trigger Savepoint. Details: null")
			return nil
		}
		c.st.TriggerID, c.st.State = randomHex(16), bgSavepointing+t
		return nil
	}
	o.setLastReconciled(c)
	location := ""
	if stateful {
		res := o.takeBGSavepoint(c.st.TriggerID)
		if res.err != "" {
			c.st.TriggerID = ""
			o.markFailing(c, fmt.Sprintf("Could not start Transition. Details: Could not fetch savepoint with triggerId: %s. Error: %s",
				res.trigger, res.err))
			return nil
		}
		location = res.path
	}
	return o.initiateDeployment(ctx, deps, c, other(t), bgTransitioningTo+other(t), location, false)
}

// bgSavepointResult is what the savepoint of a trigger id came to.
type bgSavepointResult struct{ trigger, path, err string }

// bgSavepoint is SavepointingStateHandler: Flink takes the savepoint of
// the running job (no stop), and the state goes back to ACTIVE_t, where
// the transition starts from it.
func (o *Operator) bgSavepoint(ctx context.Context, c bgContext, t string) {
	cur := c.children[t]
	res := bgSavepointResult{trigger: c.st.TriggerID}
	if cur == nil {
		res.err = "the FlinkDeployment is gone"
	} else if msg, failed := o.takeSavepointFailure(); failed {
		res.err = msg
	} else {
		spec, _, _ := unstructured.NestedMap(cur.Object, "spec")
		dir := confValue(spec, savepointDirKey, savepointDirKeyOld)
		if dir == "" {
			dir = o.DefaultConfig[savepointDirKey]
		}
		jobID := readDeploymentStatus(cur).JobID
		var err error
		if o.Flink != nil {
			res.path, err = o.Flink.Savepoint(ctx, cur, jobID, dir, SavepointRequest{FormatType: "CANONICAL"})
		} else {
			res.path, err = o.writeSavepoint(ctx, dir, jobID, specParallelism(spec))
		}
		if err != nil {
			res.err = err.Error()
		}
	}
	o.mu.Lock()
	if o.bgResults == nil {
		o.bgResults = map[string]bgSavepointResult{}
	}
	o.bgResults[c.st.TriggerID] = res
	o.mu.Unlock()
	c.st.State = bgActive + t
}

func (o *Operator) takeBGSavepoint(trigger string) bgSavepointResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	if res, ok := o.bgResults[trigger]; ok {
		return res
	}
	return bgSavepointResult{trigger: trigger, err: "unknown trigger id"}
}

// markFailing is markDeploymentFailing.
func (o *Operator) markFailing(c bgContext, msg string) {
	c.st.JobState, c.st.Error = bgJobFailing, msg
}

// monitorTransition is BlueGreenDeploymentService.monitorTransition into
// child t.
func (o *Operator) monitorTransition(ctx context.Context, deps dynamic.ResourceInterface, c bgContext, t string) error {
	next, old := c.children[t], c.children[other(t)]
	if next == nil {
		// The operator's Preconditions.checkNotNull message (determineTransitionState).
		return errors.New("Target Dependent Deployment resource not found. Blue/Green deployment name: " + c.obj.GetName()) //nolint:staticcheck // the operator's words
	}
	if lc, _, _ := unstructured.NestedString(next.Object, "status", "lifecycleState"); childSuspended(next) && lc == lifecycleSuspended {
		// finalizeSuspendedDeployment: the suspended child is the active one.
		c.st.ReadyTimestamp, c.st.AbortTimestamp, c.st.TriggerID = epoch, epoch, ""
		c.st.State, c.st.JobState = bgActive+t, bgJobSuspended
		return nil
	}
	if childSuspended(next) || !bgReady(next) {
		if instantMillis(c.st.AbortTimestamp) >= time.Now().UnixMilli() {
			return nil
		}
		// abortDeployment: the new child suspended, the state back.
		if err := unstructured.SetNestedField(next.Object, jobSuspended, "spec", "job", "state"); err != nil {
			return err
		}
		if _, err := deps.Update(ctx, next, metav1.UpdateOptions{FieldManager: operatorManager}); err != nil {
			return err
		}
		prev := bgInitializingBlue
		if len(c.children) == 2 {
			prev = bgActive + other(t)
		}
		c.st.State, c.st.TriggerID = prev, ""
		o.markFailing(c, fmt.Sprintf("Aborting deployment '%s', rolling B/G deployment back to %s", next.GetName(), prev))
		return nil
	}
	if old != nil {
		// shouldWeDelete
		delay := bgOption(c.obj, bgDeletionDelay, 0)
		ready := instantMillis(c.st.ReadyTimestamp)
		if ready == 0 {
			c.st.ReadyTimestamp = instant(time.Now())
			return nil
		}
		if ready+delay.Milliseconds() < time.Now().UnixMilli() {
			if err := deps.Delete(ctx, old.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	}
	// finalizeBlueGreenDeployment
	c.st.ReadyTimestamp, c.st.AbortTimestamp, c.st.TriggerID = epoch, epoch, ""
	c.st.State, c.st.JobState, c.st.Error = bgActive+t, flinkRunning, ""
	return nil
}
