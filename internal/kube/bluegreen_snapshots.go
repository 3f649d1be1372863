package kube

import (
	"context"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// Where the state of a FlinkBlueGreenDeployment's job is, read from
// Kubernetes (Flink Kubernetes Operator release-1.15.0):
//
//   - Its children are the FlinkDeployments <name>-blue and <name>-green
//     (BlueGreenUtils.prepareFlinkDeployment), each with the template's
//     flinkConfiguration: both write checkpoints and savepoints to the same
//     directories, but each child's job has its own job id (the operator
//     generates one for every deployment that is not a last-state restore:
//     ApplicationReconciler.setJobIdIfNecessary), so the checkpoints of
//     the job that serves are those under the active child's
//     status.jobStatus.jobId.
//   - The savepoint a transition starts the new child from is taken through
//     Flink's REST API (BlueGreenUtils.triggerSavepoint, into the running
//     child's execution.checkpointing.savepoint-dir) while that child keeps
//     running: no FlinkStateSnapshot is written for it and no savepoint
//     history entry. The FlinkBlueGreenDeployment's status only holds its
//     trigger id while the transition runs (savepointTriggerId, cleared by
//     finalizeBlueGreenDeployment and abortDeployment). Its location is
//     recorded in one place: the new child's spec.job.initialSavepointPath
//     (configureInitialSavepoint → prepareFlinkDeployment, "file:"
//     removed), which the child keeps until the operator rewrites it.
//   - A change the operator patches into the only child rewrites it with
//     the template's own job.initialSavepointPath (patchFlinkDeployment with
//     isFirstDeployment = one child: prepareFlinkDeployment ignores the
//     carried-over savepoint), so from then on the transition savepoint is
//     recorded nowhere in Kubernetes; its files stay in the savepoint dir,
//     where flinkstate_restorable_snapshot finds them.

// TriggerBlueGreenTransition is the trigger type the provider reports for a
// transition savepoint: not one of the operator's SnapshotTriggerType
// labels, since no FlinkStateSnapshot carries it. CleanupNone is
// CleanupFate's "none": the operator's savepoint history cleanup never
// disposes of a transition savepoint, which is in no FlinkStateSnapshot and
// no history entry.
const (
	TriggerBlueGreenTransition = "BLUE_GREEN_TRANSITION"
	CleanupNone                = "none"
)

// TransitionSavepoint is the savepoint child (a FlinkDeployment of the
// FlinkBlueGreenDeployment bg) was started from by a blue/green transition,
// "" when it was not: its spec.job.initialSavepointPath when that differs
// from the template's (a first deployment and a savepoint redeploy use the
// template's path: prepareFlinkDeployment) and names a savepoint directory
// (Flink names one savepoint-<job id's first 6 hex>-<12 random hex>:
// AbstractFsCheckpointStorageAccess.initializeLocationForSavepoint; the
// operator passes the savepoint dir explicitly, so a transition savepoint
// always has that name, whereas a path carried over from a child's status
// during a transition may be a checkpoint: carryOverSavepoint).
func TransitionSavepoint(bg, child *unstructured.Unstructured) string {
	used, _, _ := unstructured.NestedString(child.Object, "spec", "job", "initialSavepointPath")
	asked, _, _ := unstructured.NestedString(bg.Object, "spec", "template", "spec", "job", "initialSavepointPath")
	if used == "" || used == asked {
		return ""
	}
	if !strings.HasPrefix(path.Base(strings.TrimSuffix(strings.TrimSuffix(used, "/_metadata"), "/")), "savepoint-") {
		return ""
	}
	return used
}

// The children's types as they appear in the children's names
// (BlueGreenDeploymentType, lower case: prepareFlinkDeployment).
var blueGreenChildren = []string{"blue", "green"}

// otherChild is the child a transition into child came from.
func otherChild(child string) string {
	if child == "blue" {
		return "green"
	}
	return "blue"
}

// ownedChild reads the FlinkDeployment <name>-<child> if the
// FlinkBlueGreenDeployment bg owns it (an owner reference naming its UID,
// as BlueGreenKubernetesService.getDependentObjectMeta writes it); nil when
// there is none or another object has the name.
func ownedChild(ctx context.Context, dyn dynamic.Interface, bg *unstructured.Unstructured, child string) (*unstructured.Unstructured, error) {
	obj, err := GetFlinkDeployment(ctx, dyn, bg.GetNamespace(), bg.GetName()+"-"+child)
	if notfound.Is(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == bg.GetUID() {
			return obj, nil
		}
	}
	return nil, nil
}

// BlueGreenSnapshots lists the completed snapshots of the
// FlinkBlueGreenDeployment namespace/name's job: the COMPLETED
// FlinkStateSnapshots of either child (by spec.jobReference, whether the
// child still exists or not: the operator sets no owner reference on them,
// FlinkStateSnapshotUtils.createFlinkStateSnapshot) of type typ ("savepoint",
// "checkpoint", "" for both), and, unless typ is "checkpoint", the
// transition savepoint each existing child was started from
// (TransitionSavepoint), whose Deployment is the other child, the one it
// was taken of. When the FlinkBlueGreenDeployment is gone (destroyed, its
// children with it), the children's FlinkStateSnapshots are what is left,
// a final savepoint among them.
func BlueGreenSnapshots(ctx context.Context, dyn dynamic.Interface, namespace, name, typ string) ([]SavepointInfo, error) {
	bg, err := GetBlueGreen(ctx, dyn, namespace, name)
	if err != nil && !notfound.Is(err) {
		return nil, err
	}
	var out []SavepointInfo
	for _, child := range blueGreenChildren {
		found, err := CompletedSnapshots(ctx, dyn, namespace, name+"-"+child, typ)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
		if typ == "checkpoint" || bg == nil {
			continue
		}
		obj, err := ownedChild(ctx, dyn, bg, child)
		if err != nil {
			return nil, fmt.Errorf("reading the child %s-%s: %w", name, child, err)
		}
		if obj == nil {
			continue
		}
		if p := TransitionSavepoint(bg, obj); p != "" {
			out = append(out, SavepointInfo{Path: p, Type: "savepoint", Transition: true, Deployment: name + "-" + otherChild(child)})
		}
	}
	return out, nil
}

// ChildJobID is status.jobStatus.jobId of the FlinkBlueGreenDeployment
// bg's child ("blue" or "green"; flinkdeploy.ActiveChild names the active
// one), "" while it has none or when bg owns no such child.
func ChildJobID(ctx context.Context, dyn dynamic.Interface, bg *unstructured.Unstructured, child string) (string, error) {
	obj, err := ownedChild(ctx, dyn, bg, child)
	if err != nil || obj == nil {
		return "", err
	}
	return ReadDeploymentStatus(obj).JobID, nil
}
