package kube

import (
	"testing"
	"time"
)

func TestCleanupPolicyOf(t *testing.T) {
	p, err := CleanupPolicyOf(nil)
	if err != nil || p != (CleanupPolicy{Enabled: true, MaxCount: 10, MaxAge: 24 * time.Hour, CheckpointsRetained: 1}) {
		t.Fatalf("the operator's defaults: got %+v, %v", p, err)
	}
	p, err = CleanupPolicyOf(map[string]string{CleanupEnabledKey: "false", HistoryMaxCount: "0", HistoryMaxAge: "2 h", numRetainedKey: "3"})
	if err != nil || p != (CleanupPolicy{Enabled: false, MaxCount: 1, MaxAge: 2 * time.Hour, CheckpointsRetained: 3}) {
		t.Fatalf("got %+v, %v (max.count is at least 1)", p, err)
	}
	if _, err := CleanupPolicyOf(map[string]string{HistoryMaxCount: "ten"}); err == nil {
		t.Fatal("a count that is not a number must be refused")
	}
}

// The cases of getFlinkStateSnapshotsToCleanUp: by count, by age, the
// newest complete one kept, the last one kept, MANUAL never.
func TestDueForCleanup(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	sp := func(name, trigger string, age time.Duration, done bool) SnapshotEntry {
		return SnapshotEntry{Name: name, Trigger: trigger, Savepoint: true, Completed: done, Created: now.Add(-age)}
	}
	p := CleanupPolicy{Enabled: true, MaxCount: 2, MaxAge: 24 * time.Hour, CheckpointsRetained: 1}
	for _, tc := range []struct {
		name    string
		entries []SnapshotEntry
		p       CleanupPolicy
		want    []string
	}{
		{"one snapshot is never cleaned", []SnapshotEntry{sp("a", "UPGRADE", 48*time.Hour, true)}, p, nil},
		{"beyond max.count, oldest first", []SnapshotEntry{sp("a", "UPGRADE", 3*time.Hour, true), sp("b", "PERIODIC", 2*time.Hour, true), sp("c", "UPGRADE", time.Hour, true)}, p, []string{"a"}},
		{"older than max.age", []SnapshotEntry{sp("a", "UPGRADE", 30*time.Hour, true), sp("b", "UPGRADE", time.Hour, true)}, p, []string{"a"}},
		{"the newest complete one is kept however old, an old incomplete one goes", []SnapshotEntry{sp("a", "UPGRADE", 30*time.Hour, true), sp("b", "UPGRADE", 25*time.Hour, false)}, p, []string{"b"}},
		{"the last one is kept", []SnapshotEntry{sp("a", "UPGRADE", 30*time.Hour, false), sp("b", "UPGRADE", 25*time.Hour, false)}, p, []string{"a"}},
		{"manual snapshots are neither cleaned nor counted", []SnapshotEntry{sp("m", "MANUAL", 50*time.Hour, true), sp("a", "UPGRADE", 30*time.Hour, true), sp("b", "UPGRADE", time.Hour, true)}, p, []string{"a"}},
		{"cleanup disabled", []SnapshotEntry{sp("a", "UPGRADE", 30*time.Hour, true), sp("b", "UPGRADE", time.Hour, true)}, CleanupPolicy{MaxCount: 1, MaxAge: time.Hour}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DueForCleanup(tc.entries, tc.p, now)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for _, n := range tc.want {
				if !got[n] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestCleanupFate(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	created := now.Add(-time.Hour)
	p := CleanupPolicy{Enabled: true, MaxCount: 10, MaxAge: 24 * time.Hour, CheckpointsRetained: 1}
	entries := []SnapshotEntry{
		{Name: "up", Trigger: "UPGRADE", Savepoint: true, Completed: true, Created: created},
		{Name: "up-dispose", Trigger: "UPGRADE", Savepoint: true, DisposeOnDelete: true, Completed: true, Created: created},
		{Name: "mine", Trigger: "MANUAL", Savepoint: true, DisposeOnDelete: true, Completed: true, Created: created},
	}
	for _, tc := range []struct{ name, fate string }{{"up", "delete"}, {"up-dispose", "delete_and_dispose"}, {"mine", "none"}} {
		fate, after := CleanupFate(entries, tc.name, p, now)
		if fate != tc.fate {
			t.Errorf("%s: fate %q, want %q", tc.name, fate, tc.fate)
		}
		if want := created.Add(24 * time.Hour); tc.fate != "none" && !after.Equal(want) {
			t.Errorf("%s: after %s, want %s", tc.name, after, want)
		}
	}
}
