package flinkdeploy

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The FlinkBlueGreenDeployment of the Flink Kubernetes Operator 1.15.0
// (flink-kubernetes-operator-api api/FlinkBlueGreenDeployment,
// spec/FlinkBlueGreenDeploymentSpec, status/FlinkBlueGreenDeploymentState;
// flink-kubernetes-operator controller/bluegreen/BlueGreenDeploymentService,
// utils/bluegreen/BlueGreenUtils). Its spec.template.spec is a whole
// FlinkDeploymentSpec, the one Spec renders; the operator copies it into a
// child FlinkDeployment <name>-blue or <name>-green.

// BlueGreenKind is the resource's kind, served as APIVersion.
const BlueGreenKind = "FlinkBlueGreenDeployment"

// The children's types (BlueGreenDeploymentType) and the states
// (FlinkBlueGreenDeploymentState) a wait reads.
const (
	Blue  = "blue"
	Green = "green"

	StateInitializingBlue = "INITIALIZING_BLUE"
	StateActiveBlue       = "ACTIVE_BLUE"
	StateActiveGreen      = "ACTIVE_GREEN"
	// JobFailing is the jobStatus.state the operator writes with
	// status.error when a deployment or transition fails or is aborted
	// (BlueGreenDeploymentService.markDeploymentFailing).
	JobFailing = "FAILING"
	// JobSuspendedStatus is the jobStatus.state of a blue/green deployment
	// whose active child was suspended in place
	// (BlueGreenDeploymentService.finalizeSuspendedDeployment), or whose
	// first deployment waits for job.state running
	// (InitializingBlueStateHandler).
	JobSuspendedStatus = "SUSPENDED"
)

// The operator's blue/green options, read from the resource's own
// spec.configuration only (BlueGreenUtils.getConfigOption;
// FlinkBlueGreenDeploymentConfigOptions: Durations, defaults 10 min, 15 s, 0).
const (
	BlueGreenAbortGracePeriod   = "kubernetes.operator.bluegreen.abort.grace-period"
	BlueGreenRescheduleInterval = "kubernetes.operator.bluegreen.reconciliation.reschedule-interval"
	BlueGreenDeletionDelay      = "kubernetes.operator.bluegreen.deployment-deletion.delay"
)

// ChildName is the FlinkDeployment the operator writes for a child type
// (BlueGreenUtils.prepareFlinkDeployment: <name>-<type in lower case>).
func ChildName(name, child string) string { return name + "-" + child }

// ActiveChild is the child whose job serves in a state: the target of an
// ACTIVE state, the source of a SAVEPOINTING or TRANSITIONING one (the old
// child runs until the new one is ready), blue while it initialises.
func ActiveChild(state string) string {
	switch {
	case strings.HasSuffix(state, "_BLUE") && !strings.HasPrefix(state, "TRANSITIONING_"):
		return Blue
	case strings.HasSuffix(state, "_GREEN") && !strings.HasPrefix(state, "TRANSITIONING_"):
		return Green
	case state == "TRANSITIONING_TO_GREEN":
		return Blue
	case state == "TRANSITIONING_TO_BLUE":
		return Green
	}
	return Blue
}

// ServingChild is ActiveChild with the children that exist: a
// TRANSITIONING_TO_x state with no other child is not a transition from it
// but the first deployment (InitializingBlueStateHandler: INITIALIZING_BLUE
// to TRANSITIONING_TO_BLUE) or an in-place patch of x
// (BlueGreenDeploymentService.patchFlinkDeployment: calculatePatchingState
// names the patched child), so x is the one serving. otherExists tells
// whether the child ActiveChild names exists.
func ServingChild(state string, otherExists func(child string) bool) string {
	c := ActiveChild(state)
	if strings.HasPrefix(state, "TRANSITIONING_TO_") && !otherExists(c) {
		return Other(c)
	}
	return c
}

// Other is the other child.
func Other(child string) string {
	if child == Blue {
		return Green
	}
	return Blue
}

// BlueGreenDiff is how the operator classifies a change of the template
// (FlinkBlueGreenDeploymentSpecDiff.compare over template.spec only).
type BlueGreenDiff string

const (
	// DiffIgnore: nothing the operator acts on.
	DiffIgnore BlueGreenDiff = "IGNORE"
	// DiffPatchChild: only fields the FlinkDeployment diff ignores changed;
	// the active child is rewritten in place.
	DiffPatchChild BlueGreenDiff = "PATCH_CHILD"
	// DiffTransition: anything else; the other child starts from a
	// savepoint of the running one, which goes once the new one is ready.
	DiffTransition BlueGreenDiff = "TRANSITION"
	// DiffSavepointRedeploy: a new savepoint redeploy nonce; the other
	// child starts from job.initialSavepointPath.
	DiffSavepointRedeploy BlueGreenDiff = "SAVEPOINT_REDEPLOY"
	// DiffSuspend, DiffResume: job.state changed; the active child is
	// patched.
	DiffSuspend BlueGreenDiff = "SUSPEND"
	DiffResume  BlueGreenDiff = "RESUME"
)

// ClassifyBlueGreen is FlinkBlueGreenDeploymentSpecDiff.compare: a
// job.state change is SUSPEND or RESUME; a savepoint redeploy nonce changed
// to a new non-null value SAVEPOINT_REDEPLOY; equal specs IGNORE; a change
// of only the fields the FlinkDeployment diff ignores (ReflectiveDiffBuilder
// IGNORE: upgradeMode, initialSavepointPath, the ignored configuration
// keys) PATCH_CHILD; anything else (UPGRADE, SCALE) TRANSITION.
func ClassifyBlueGreen(prior, planned Spec) BlueGreenDiff {
	ps, ns := "", ""
	if prior.Job != nil {
		ps = jobState(prior.Job.State)
	}
	if planned.Job != nil {
		ns = jobState(planned.Job.State)
	}
	switch {
	case ps != ns && ns == JobSuspended:
		return DiffSuspend
	case ps != ns && ps == JobSuspended:
		return DiffResume
	case prior.Job != nil && planned.Job != nil && planned.Job.SavepointRedeployNonce != nil &&
		!sameInt(prior.Job.SavepointRedeployNonce, planned.Job.SavepointRedeployNonce):
		return DiffSavepointRedeploy
	case prior.Equal(planned):
		return DiffIgnore
	case len(prior.UpgradeChanges(planned)) == 0:
		return DiffPatchChild
	}
	return DiffTransition
}

// RenderBlueGreen is the FlinkBlueGreenDeployment to apply: template is
// the FlinkDeployment spec (Spec.Render's spec), configuration the
// operator's blue/green options (nil: none).
func RenderBlueGreen(namespace, name string, template map[string]any, configuration map[string]string) *unstructured.Unstructured {
	spec := map[string]any{"template": map[string]any{"spec": template}}
	if len(configuration) > 0 {
		c := make(map[string]any, len(configuration))
		for k, v := range configuration {
			c[k] = v
		}
		spec["configuration"] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": APIVersion, "kind": BlueGreenKind,
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     spec,
	}}
}
