package kube

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The operator's savepoint history cleanup (flink-kubernetes-operator
// release-1.15.0, SnapshotObserver.cleanupSavepointHistory and
// getFlinkStateSnapshotsToCleanUp), read at every observe of a
// FlinkDeployment: with kubernetes.operator.savepoint.cleanup.enabled
// (default true) it deletes the PERIODIC and UPGRADE FlinkStateSnapshots of
// the deployment beyond the newest max.count (default 10, at least 1) or
// older than max.age (default 24 h) — never the newest COMPLETED one of
// each kind, nor the last one of the list. A deleted savepoint snapshot's
// data goes with it when its spec.savepoint.disposeOnDelete is true
// (FlinkStateSnapshotController.cleanup); the operator sets that on the
// snapshots it creates from kubernetes.operator.savepoint.dispose-on-delete
// (default false, FlinkStateSnapshotUtils.createUpgradeSnapshotResource and
// createPeriodicSavepoint). Checkpoint snapshots are kept up to
// execution.checkpointing.num-retained (default 1), with no age limit.
// These options are dynamic: the deployment's flinkConfiguration overrides
// the operator's defaults (its ConfigMap, which the provider does not read).
const (
	CleanupEnabledKey = "kubernetes.operator.savepoint.cleanup.enabled"
	HistoryMaxCount   = "kubernetes.operator.savepoint.history.max.count"
	HistoryMaxAge     = "kubernetes.operator.savepoint.history.max.age"
	DisposeOnDelete   = "kubernetes.operator.savepoint.dispose-on-delete"
	numRetainedKey    = "execution.checkpointing.num-retained"
	// LabelTriggerType is CrdConstants.LABEL_SNAPSHOT_TRIGGER_TYPE.
	LabelTriggerType = "snapshot.trigger-type"
)

// CleanupPolicy is the cleanup configuration in force for a deployment.
type CleanupPolicy struct {
	Enabled             bool
	MaxCount            int
	MaxAge              time.Duration
	CheckpointsRetained int
}

// CleanupPolicyOf reads the policy from a deployment's flinkConfiguration,
// with the operator's defaults for what it does not set.
func CleanupPolicyOf(conf map[string]string) (CleanupPolicy, error) {
	p := CleanupPolicy{Enabled: true, MaxCount: 10, MaxAge: 24 * time.Hour, CheckpointsRetained: 1}
	if v, ok := conf[CleanupEnabledKey]; ok {
		p.Enabled = !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	for key, dst := range map[string]*int{HistoryMaxCount: &p.MaxCount, numRetainedKey: &p.CheckpointsRetained} {
		if v, ok := conf[key]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return p, fmt.Errorf("%s = %q is not a number", key, v)
			}
			*dst = n
		}
	}
	// getMaxCountForSnapshotType: Math.max(1, ...).
	p.MaxCount, p.CheckpointsRetained = max(1, p.MaxCount), max(1, p.CheckpointsRetained)
	if v, ok := conf[HistoryMaxAge]; ok {
		d, err := flinkconf.ParseDuration(v)
		if err != nil {
			return p, fmt.Errorf("%s = %q: %w", HistoryMaxAge, v, err)
		}
		p.MaxAge = d
	}
	return p, nil
}

// SnapshotEntry is one FlinkStateSnapshot of a deployment, as the cleanup
// sees it.
type SnapshotEntry struct {
	Name string
	// Trigger is the snapshot.trigger-type label (MANUAL, PERIODIC,
	// UPGRADE; UNKNOWN when absent, as getSnapshotTriggerType reads it).
	Trigger         string
	Savepoint       bool
	Completed       bool
	Deleting        bool
	DisposeOnDelete bool
	Created         time.Time
	// Deployment is spec.jobReference.name; Path status.path.
	Deployment, Path string
}

// Cleaned reports whether the operator cleans up snapshots of this trigger
// type (CLEAN_UP_SNAPSHOT_TRIGGER_TYPES).
func (e SnapshotEntry) Cleaned() bool { return e.Trigger == "PERIODIC" || e.Trigger == "UPGRADE" }

// DueForCleanup returns the names of the snapshots the operator deletes at
// its next observe under p at now: getFlinkStateSnapshotsToCleanUp, for
// savepoints and checkpoints each.
func DueForCleanup(entries []SnapshotEntry, p CleanupPolicy, now time.Time) map[string]bool {
	due := map[string]bool{}
	if !p.Enabled {
		return due
	}
	for _, savepoint := range []bool{true, false} {
		var list []SnapshotEntry
		for _, e := range entries {
			if !e.Deleting && e.Cleaned() && e.Savepoint == savepoint {
				list = append(list, e)
			}
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].Created.Before(list[j].Created) })
		if len(list) < 2 {
			continue
		}
		lastComplete := -1
		for i, e := range list {
			if e.Completed {
				lastComplete = i // sorted by time: the last one is the newest
			}
		}
		maxCount, oldest := p.CheckpointsRetained, time.Time{}
		if savepoint {
			maxCount, oldest = p.MaxCount, now.Add(-p.MaxAge)
		}
		n := 0
		for i, e := range list {
			if i == lastComplete {
				continue
			}
			if n == len(list)-1 { // keep the last one, even if not complete
				break
			}
			if len(list)-n > maxCount || e.Created.Before(oldest) {
				due[e.Name] = true
				n++
			}
		}
	}
	return due
}

// SnapshotEntries lists the FlinkStateSnapshots of deployment ns/name
// (spec.jobReference), as the cleanup reads them.
func SnapshotEntries(ctx context.Context, dyn dynamic.Interface, ns, deployment string) ([]SnapshotEntry, error) {
	var out []SnapshotEntry
	err := eachDeploymentSnapshot(ctx, dyn, ns, deployment, func(obj *unstructured.Unstructured) { out = append(out, SnapshotEntryOf(obj)) })
	return out, err
}

// SnapshotEntryOf reads one FlinkStateSnapshot. disposeOnDelete defaults to
// true, as the CRD's FlinkStateSnapshotSpec.SavepointSpec does.
func SnapshotEntryOf(obj *unstructured.Unstructured) SnapshotEntry {
	e := SnapshotEntry{Name: obj.GetName(), Trigger: obj.GetLabels()[LabelTriggerType], Created: obj.GetCreationTimestamp().Time,
		Deleting: obj.GetDeletionTimestamp() != nil, Completed: ReadSnapshotStatus(obj).State == SnapshotCompleted}
	if e.Trigger == "" {
		e.Trigger = "UNKNOWN"
	}
	e.Deployment, _, _ = unstructured.NestedString(obj.Object, "spec", "jobReference", "name")
	e.Path = ReadSnapshotStatus(obj).Path
	if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "savepoint"); ok {
		e.Savepoint, e.DisposeOnDelete = true, true
		if d, ok, _ := unstructured.NestedBool(obj.Object, "spec", "savepoint", "disposeOnDelete"); ok {
			e.DisposeOnDelete = d
		}
	}
	return e
}

// CleanupFate says what the operator's cleanup does with snapshot name:
// "none" (a trigger type it does not clean, or cleanup off), "delete" (the
// snapshot object goes, the data stays) or "delete_and_dispose" (the data
// goes too); after is when at the earliest: now when it is due at the next
// observe, created + max.age for a savepoint (once it is no longer the
// newest complete one), zero when only the count can make it due.
func CleanupFate(entries []SnapshotEntry, name string, p CleanupPolicy, now time.Time) (fate string, after time.Time) {
	for _, e := range entries {
		if e.Name != name {
			continue
		}
		if !p.Enabled || !e.Cleaned() {
			return "none", time.Time{}
		}
		fate = "delete"
		if e.Savepoint && e.DisposeOnDelete {
			fate = "delete_and_dispose"
		}
		switch {
		case DueForCleanup(entries, p, now)[name]:
			return fate, now
		case e.Savepoint:
			return fate, e.Created.Add(p.MaxAge)
		}
		return fate, time.Time{}
	}
	return "none", time.Time{}
}

// SnapshotsAtPath lists the FlinkStateSnapshots in ns whose snapshot is at
// path (status.path; a trailing slash aside), whichever deployment they
// are of: the ones whose cleanup decides the fate of that path's data.
func SnapshotsAtPath(ctx context.Context, dyn dynamic.Interface, ns, path string) ([]SnapshotEntry, error) {
	want := strings.TrimSuffix(path, "/")
	var out []SnapshotEntry
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := dyn.Resource(FlinkStateSnapshotGVR).Namespace(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing FlinkStateSnapshots in %s: %w", ns, err)
		}
		for i := range list.Items {
			if e := SnapshotEntryOf(&list.Items[i]); e.Path != "" && strings.TrimSuffix(e.Path, "/") == want {
				out = append(out, e)
			}
		}
		if list.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = list.GetContinue()
	}
}
