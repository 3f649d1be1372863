package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// savepoint_before_upgrade for a job that is not running: what goes ahead
// and what is refused, worded.
func TestSavepointBeforeUpgrade_notRunning(t *testing.T) {
	cases := []struct {
		name     string
		u        SavepointBeforeUpgrade
		job      string
		recorded string
		severity flinkconf.Severity
		summary  string
		inDetail string
	}{
		{"redeploy", SavepointBeforeUpgrade{Redeploys: true, RestorePath: "s3://b/sp", UpgradeMode: "savepoint"}, "FAILED", "",
			flinkconf.Warning, "No savepoint before this redeploy", "its job is FAILED (lifecycle (none), JobManager READY), so no savepoint can be taken first; the job is redeployed from job.initial_savepoint_path s3://b/sp."},
		{"stateless", SavepointBeforeUpgrade{UpgradeMode: "stateless"}, "FAILED", "", flinkconf.Warning, "No savepoint before this upgrade",
			"The change goes ahead: the new spec starts from empty state"},
		{"terminal with a recorded savepoint", SavepointBeforeUpgrade{UpgradeMode: "savepoint"}, "FAILED", "s3://b/sp/savepoint-1",
			flinkconf.Warning, "No savepoint before this upgrade", "s3://b/sp/savepoint-1"},
		{"terminal, nothing recorded", SavepointBeforeUpgrade{UpgradeMode: "savepoint"}, "FINISHED", "", flinkconf.Error,
			"No savepoint can be taken before this upgrade", "Ways out: set job.initial_savepoint_path to a complete savepoint or checkpoint of this job"},
		{"terminal after last-state", SavepointBeforeUpgrade{UpgradeMode: "last-state"}, "FAILED", LastStateDummyPath, flinkconf.Error,
			"No savepoint can be taken before this upgrade", "set job.initial_savepoint_path to a complete savepoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{ConfigMapGVR: "ConfigMapList", DeploymentGVR: "DeploymentList"})
			c.u.Namespace, c.u.Name = "ns", "orders"
			fs := c.u.NotRunningUpgrade(context.Background(), dyn, notRunningDeployment(c.job, "READY", c.recorded))
			if len(fs) != 1 {
				t.Fatalf("%+v", fs)
			}
			f := fs[0]
			if f.Severity != c.severity || f.Summary != c.summary || f.Path[0] != "savepoint_before_upgrade" ||
				!strings.HasPrefix(f.Detail, "FlinkDeployment ns/orders") || !strings.Contains(f.Detail, c.inDetail) {
				t.Errorf("%+v", f)
			}
		})
	}
}

// A deployment that cannot be read stops the upgrade, its error worded by
// the caller.
func TestSavepointBeforeUpgrade_unreadable(t *testing.T) {
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{FlinkDeploymentGVR: "FlinkDeploymentList"})
	u := SavepointBeforeUpgrade{Namespace: "ns", Name: "orders", APIError: func(err error) string {
		if errors.Is(err, context.Canceled) {
			return "canceled"
		}
		return "worded"
	}}
	p, fs := u.Run(context.Background(), dyn)
	if p != "" || len(fs) != 1 || fs[0].Severity != flinkconf.Error || fs[0].Summary != "Savepoint before upgrade failed" ||
		fs[0].Detail != "FlinkDeployment ns/orders was not changed: reading it: worded" {
		t.Errorf("%q, %+v", p, fs)
	}
}
