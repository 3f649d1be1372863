package kube

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// A disposal due now refuses the restore; a later one warns.
func TestDisposal(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := SnapshotEntry{Name: "orders-upgrade-1", Trigger: "UPGRADE", Deployment: "orders-old"}
	cases := []struct {
		name     string
		after    time.Time
		severity flinkconf.Severity
		summary  string
		detail   string
	}{
		{"due", now, flinkconf.Error, "Restore path about to be disposed", "at its next observe of FlinkDeployment ns/orders-old: the job would find no savepoint"},
		{"past", now.Add(-time.Hour), flinkconf.Error, "Restore path about to be disposed", "Nothing was changed. Ways out:"},
		{"later", now.Add(time.Hour), flinkconf.Warning, "Restore path will be disposed", "from 2026-12-01T11:00:00Z on: the job restores from it now"},
	}
	for _, c := range cases {
		f := Disposal("ns", "orders", "s3://b/sp", e, c.after, now)
		if f.Severity != c.severity || f.Summary != c.summary || !strings.Contains(f.Detail, c.detail) ||
			!strings.Contains(f.Detail, "FlinkStateSnapshot ns/orders-upgrade-1 (trigger type UPGRADE)") ||
			!strings.Contains(f.Detail, "flink_configuration of FlinkDeployment ns/orders-old") {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
	if f := DisposalUnchecked("ns", "orders", "s3://b/sp", "forbidden"); f.Severity != flinkconf.Warning ||
		!strings.HasSuffix(f.Detail, "disposes s3://b/sp could not be read (forbidden).") {
		t.Errorf("%+v", f)
	}
}

// Only the snapshots the cleanup disposes count; the first due now ends
// the list.
func TestDisposals(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	entries := []SnapshotEntry{{Name: "kept"}, {Name: "unread"}, {Name: "later"}, {Name: "due"}, {Name: "after-due"}}
	fate := func(e SnapshotEntry) (string, time.Time, error) {
		switch e.Name {
		case "kept":
			return "keep", now, nil
		case "unread":
			return "delete_and_dispose", now, errors.New("forbidden")
		case "later":
			return "delete_and_dispose", now.Add(time.Hour), nil
		}
		return "delete_and_dispose", now, nil
	}
	fs := Disposals("ns", "orders", "s3://b/sp", entries, now, fate)
	if len(fs) != 2 || fs[0].Severity != flinkconf.Warning || !strings.Contains(fs[0].Detail, "ns/later") ||
		fs[1].Severity != flinkconf.Error || !strings.Contains(fs[1].Detail, "ns/due") {
		t.Errorf("%+v", fs)
	}
	if fs := Disposals("ns", "orders", "s3://b/sp", entries[:1], now, fate); len(fs) != 0 {
		t.Errorf("kept: %+v", fs)
	}
}
