package flinkdeploy

import (
	"strings"
	"testing"
)

// An update keeps the nonce, takes the next one on a redeploy (and says
// so), leaves it unknown while the path is, and refuses what the operator
// would reject whatever the nonce.
func TestPlanNonce(t *testing.T) {
	at := func(p string) Desired { return job("savepoint").with(func(d *Desired) { d.RestorePath = p }) }
	n := int64(3)
	if got, unknown, fs := PlanNonce(at("s3://b/sp"), at("s3://b/sp"), &n, false); got != &n || unknown || len(fs) != 0 {
		t.Errorf("path kept: %v, %v, %+v; want the prior nonce", got, unknown, fs)
	}
	got, unknown, fs := PlanNonce(at("s3://b/sp"), at("s3://b/sp-2"), &n, false)
	if got == nil || *got != 4 || unknown || len(fs) != 1 || !strings.Contains(fs[0].Detail, "savepoint_redeploy_nonce to 4 and the operator redeploys the job from s3://b/sp-2") {
		t.Errorf("redeploy: %v, %v, %+v; want nonce 4 and its notice", got, unknown, fs)
	}
	if got, unknown, fs := PlanNonce(at("s3://b/sp"), at(""), &n, true); got != nil || !unknown || len(fs) != 0 {
		t.Errorf("path unknown: %v, %v, %+v; want an unknown nonce", got, unknown, fs)
	}
	if got, unknown, _ := PlanNonce(at(""), at(""), nil, false); got != nil || unknown {
		t.Errorf("no nonce, no path: %v, %v; want none", got, unknown)
	}
	changed := job("savepoint").with(func(d *Desired) { d.Mode = "standalone" })
	if _, _, fs := PlanNonce(job("savepoint"), changed, nil, false); len(fs) != len(RefusalFindings(job("savepoint"), changed)) || len(fs) == 0 {
		t.Errorf("mode changed: %+v; want the refusals", fs)
	}
}
