package flinkdeploy

import (
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// job is a Desired with a running job of upgrade mode mode.
func job(mode string) Desired {
	return Desired{HasJob: true, UpgradeMode: mode, Mode: "native", FlinkVersion: "2.2.1", FinalSavepoint: true, WaitFor: "deployed"}
}

func (d Desired) with(fs ...func(*Desired)) Desired {
	for _, f := range fs {
		f(&d)
	}
	return d
}

func TestRunState(t *testing.T) {
	for name, c := range map[string]struct {
		d    Desired
		want string
	}{
		"session cluster":   {Desired{}, JobRunning},
		"job state unset":   {job("savepoint"), JobRunning},
		"job suspended":     {job("savepoint").with(func(d *Desired) { d.JobState = JobSuspended }), JobSuspended},
		"job running":       {job("savepoint").with(func(d *Desired) { d.JobState = JobRunning }), JobRunning},
		"state without job": {Desired{JobState: JobSuspended}, JobRunning},
	} {
		if got := c.d.RunState(); got != c.want {
			t.Errorf("%s: RunState() = %q, want %q", name, got, c.want)
		}
	}
}

func TestKeepsState(t *testing.T) {
	for name, c := range map[string]struct {
		d    Desired
		want bool
	}{
		"savepoint":                       {job("savepoint"), true},
		"last-state":                      {job("last-state"), true},
		"stateless":                       {job("stateless"), false},
		"mode unset":                      {job(""), false},
		"final_savepoint off":             {job("savepoint").with(func(d *Desired) { d.FinalSavepoint = false }), false},
		"session cluster":                 {Desired{UpgradeMode: "savepoint", FinalSavepoint: true}, false},
		"last-state, final_savepoint off": {job("last-state").with(func(d *Desired) { d.FinalSavepoint = false }), false},
	} {
		if got := c.d.KeepsState(); got != c.want {
			t.Errorf("%s: KeepsState() = %v, want %v", name, got, c.want)
		}
	}
}

func TestFinalDrain(t *testing.T) {
	drain := func(d *Desired) { d.DrainOnDestroy = true }
	for name, c := range map[string]struct {
		d         Desired
		replacing bool
		want      bool
	}{
		"destroy, drain_on_destroy":       {job("savepoint").with(drain), false, true},
		"replacement, drain_on_destroy":   {job("savepoint").with(drain), true, false},
		"destroy, drain_on_destroy unset": {job("savepoint"), false, false},
		"replacement, unset":              {job("last-state"), true, false},
	} {
		if got := c.d.FinalDrain(c.replacing); got != c.want {
			t.Errorf("%s: FinalDrain(%v) = %v, want %v", name, c.replacing, got, c.want)
		}
	}
}

func TestWaitTarget(t *testing.T) {
	suspended := func(d *Desired) { d.JobState = JobSuspended }
	for name, c := range map[string]struct {
		d    Desired
		want string
	}{
		"deployed":              {job("savepoint"), "deployed"},
		"running":               {job("savepoint").with(func(d *Desired) { d.WaitFor = "running" }), "running"},
		"suspended job":         {job("savepoint").with(suspended), WaitSuspended},
		"suspended, running":    {job("savepoint").with(suspended).with(func(d *Desired) { d.WaitFor = "running" }), WaitSuspended},
		"suspended, none":       {job("savepoint").with(suspended).with(func(d *Desired) { d.WaitFor = "none" }), "none"},
		"session cluster":       {Desired{WaitFor: "running", JobState: JobSuspended}, "running"},
		"checkpoint":            {job("savepoint").with(func(d *Desired) { d.WaitFor = WaitCheckpoint }), "running"},
		"suspended, checkpoint": {job("savepoint").with(suspended).with(func(d *Desired) { d.WaitFor = WaitCheckpoint }), WaitSuspended},
	} {
		if got := c.d.WaitTarget(); got != c.want {
			t.Errorf("%s: WaitTarget() = %q, want %q", name, got, c.want)
		}
	}
}

// Only a running job is waited on for a checkpoint: a suspended one takes
// none, and a session cluster has no job of its own.
func TestWaitsForCheckpoint(t *testing.T) {
	checkpoint := func(d *Desired) { d.WaitFor = WaitCheckpoint }
	for name, c := range map[string]struct {
		d    Desired
		want bool
	}{
		"running job":     {job("last-state").with(checkpoint), true},
		"suspended job":   {job("last-state").with(checkpoint).with(func(d *Desired) { d.JobState = JobSuspended }), false},
		"session cluster": {Desired{WaitFor: WaitCheckpoint}, false},
		"running":         {job("last-state").with(func(d *Desired) { d.WaitFor = "running" }), false},
	} {
		if got := c.d.WaitsForCheckpoint(); got != c.want {
			t.Errorf("%s: WaitsForCheckpoint() = %v, want %v", name, got, c.want)
		}
	}
	// The wait a suspended target selects is kube's (kube.WaitDeployment).
	if WaitSuspended != kube.WaitSuspended {
		t.Errorf("WaitSuspended = %q, kube.WaitSuspended = %q", WaitSuspended, kube.WaitSuspended)
	}
}

func TestRedeploys(t *testing.T) {
	at := func(p string) Desired { return job("savepoint").with(func(d *Desired) { d.RestorePath = p }) }
	for name, c := range map[string]struct {
		prior, planned Desired
		want           bool
	}{
		"path set":      {at(""), at("s3://b/sp-1"), true},
		"path changed":  {at("s3://b/sp-1"), at("s3://b/sp-2"), true},
		"path kept":     {at("s3://b/sp-1"), at("s3://b/sp-1"), false},
		"path removed":  {at("s3://b/sp-1"), at(""), false},
		"no path":       {at(""), at(""), false},
		"session prior": {Desired{}, at("s3://b/sp-1"), true},
	} {
		if got := Redeploys(c.prior, c.planned); got != c.want {
			t.Errorf("%s: Redeploys() = %v, want %v", name, got, c.want)
		}
	}
}

func TestNextNonce(t *testing.T) {
	if got := NextNonce(nil); got != 1 {
		t.Errorf("NextNonce(nil) = %d, want 1", got)
	}
	if got := NextNonce(ptr(int64(4))); got != 5 {
		t.Errorf("NextNonce(4) = %d, want 5", got)
	}
}

func TestRestores(t *testing.T) {
	spec := fullSpec()
	other := fullSpec()
	other.Image = "flink:2.2.1-java21" // a change the operator applies as an upgrade
	withSpec := func(d Desired, s Spec) Desired { d.Spec = &s; return d }
	suspended := func(d *Desired) { d.JobState = JobSuspended }
	path := func(p string) func(*Desired) { return func(d *Desired) { d.RestorePath = p } }
	for name, c := range map[string]struct {
		prior, planned Desired
		want           bool
		from           string
	}{
		"redeploy from a new path": {withSpec(job("stateless"), spec), withSpec(job("stateless").with(path("s3://b/sp-2")), spec), true, "s3://b/sp-2"},
		"savepoint upgrade":        {withSpec(job("savepoint"), spec), withSpec(job("savepoint"), other), true, ""},
		"last-state upgrade":       {withSpec(job("last-state"), spec), withSpec(job("last-state"), other), true, ""},
		"stateless upgrade":        {withSpec(job("stateless"), spec), withSpec(job("stateless"), other), false, ""},
		"no job change":            {withSpec(job("savepoint"), spec), withSpec(job("savepoint"), spec), false, ""},
		"spec unknown":             {withSpec(job("savepoint"), spec), job("savepoint"), false, ""},
		"resume":                   {job("savepoint").with(suspended), job("savepoint"), true, ""},
		"suspend":                  {withSpec(job("savepoint"), spec), withSpec(job("savepoint").with(suspended), other), false, ""},
		"suspended, new path":      {job("savepoint"), job("savepoint").with(suspended).with(path("s3://b/sp-2")), false, ""},
		"stateless resume":         {job("stateless").with(suspended), job("stateless"), false, ""},
		"session cluster":          {Desired{}, Desired{}, false, ""},
	} {
		got, from := Restores(c.prior, c.planned)
		if got != c.want || from != c.from {
			t.Errorf("%s: Restores() = %v, %q, want %v, %q", name, got, from, c.want, c.from)
		}
	}
}

func TestRefusals(t *testing.T) {
	suspendedLastState := job("last-state").with(func(d *Desired) { d.JobState = JobSuspended })
	version := func(v string) func(*Desired) { return func(d *Desired) { d.FlinkVersion = v } }
	for name, c := range map[string]struct {
		prior, planned Desired
		want           []string // the attributes refused, in order
	}{
		"no change":                        {job("savepoint"), job("savepoint"), nil},
		"mode switch":                      {job("savepoint"), job("savepoint").with(func(d *Desired) { d.Mode = "standalone" }), []string{"mode"}},
		"mode unknown":                     {job("savepoint"), job("savepoint").with(func(d *Desired) { d.Mode, d.ModeUnknown = "", true }), nil},
		"mode written on unset":            {job("savepoint").with(func(d *Desired) { d.Mode = "" }), job("savepoint"), nil},
		"mode removed":                     {job("savepoint"), job("savepoint").with(func(d *Desired) { d.Mode = "" }), []string{"mode"}},
		"job added":                        {Desired{Mode: "native"}, job("savepoint"), []string{"job"}},
		"job removed":                      {job("savepoint"), Desired{Mode: "native"}, []string{"job"}},
		"both":                             {job("savepoint"), Desired{Mode: "standalone"}, []string{"mode", "job"}},
		"version after last-state suspend": {suspendedLastState, suspendedLastState.with(version("2.1.1")), []string{"flink_version"}},
		"patch after last-state suspend":   {suspendedLastState, suspendedLastState.with(version("2.2.0")), nil},
		"version unknown":                  {suspendedLastState, suspendedLastState.with(version("")), nil},
		"version with a stateless resume":  {suspendedLastState, job("stateless").with(version("2.1.1")), nil},
		"version after savepoint suspend":  {job("savepoint").with(func(d *Desired) { d.JobState = JobSuspended }), job("savepoint").with(version("2.1.1")), nil},
		"version of a running job":         {job("last-state"), job("last-state").with(version("2.1.1")), nil},
	} {
		var got []string
		for _, r := range Refusals(c.prior, c.planned) {
			if r.Summary == "" || r.Detail == "" {
				t.Errorf("%s: refusal of %s says nothing", name, r.Attr)
			}
			got = append(got, r.Attr)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: Refusals() = %v, want %v", name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: Refusals() = %v, want %v", name, got, c.want)
			}
		}
	}
}

func TestUpgradeNotice(t *testing.T) {
	suspended := func(d *Desired) { d.JobState = JobSuspended }
	first := func(d *Desired) { d.SavepointFirst = true }
	changes := []string{"image"}
	for name, c := range map[string]struct {
		prior, planned Desired
		changes        []string
		summary, says  string // says: a phrase the detail holds
	}{
		"no upgrade":          {job("savepoint"), job("savepoint"), nil, "", ""},
		"savepoint upgrade":   {job("savepoint"), job("savepoint"), changes, "The operator will restart the job", "stops it with a savepoint"},
		"last-state upgrade":  {job("last-state"), job("last-state"), changes, "The operator will restart the job", "latest checkpoint"},
		"stateless upgrade":   {job("stateless"), job("stateless"), changes, "The operator will restart the job", "EMPTY state"},
		"mode unset":          {job(""), job(""), changes, "The operator will restart the job", "EMPTY state"},
		"stateless, sp first": {job("stateless"), job("stateless").with(first), changes, "The operator will restart the job", "the restart does not use"},
		"stays suspended":     {job("savepoint").with(suspended), job("savepoint").with(suspended), changes, "Applied when the job resumes", "(image)"},
		"suspend, savepoint":  {job("savepoint"), job("savepoint").with(suspended), changes, "The job will be suspended", "takes a savepoint"},
		"suspend, last-state": {job("last-state"), job("last-state").with(suspended), changes, "The job will be suspended", "HA metadata is kept"},
		"suspend, stateless":  {job("stateless"), job("stateless").with(suspended), changes, "The job will be suspended", "nothing is kept"},
		"resume":              {job("savepoint").with(suspended), job("savepoint"), changes, "The operator will restart the job", "image"},
		// What the operator restores from, where it is not the obvious
		// (AbstractJobReconciler.getJobUpgrade).
		"last-state, new minor": {job("last-state").with(version("2.1.1")), job("last-state").with(version("2.2.1")), changes,
			"The operator will restart the job", "stops it with a savepoint instead of resuming from its latest checkpoint"},
		"last-state, new patch": {job("last-state").with(version("2.2.0")), job("last-state").with(version("2.2.1")), changes,
			"The operator will restart the job", "it resumes from its latest checkpoint (from the HA metadata"},
		"last-state, max age": {job("last-state"), job("last-state").with(conf(maxCheckpointAgeKey, "10 min")), changes,
			"The operator will restart the job", "unless that checkpoint is older than " + maxCheckpointAgeKey + " = 10 min"},
		"savepoint, fallback": {job("savepoint"), job("savepoint"), changes, "The operator will restart the job",
			"if the job is not running then, the operator falls back to its latest checkpoint"},
	} {
		summary, detail := UpgradeNotice(c.prior, c.planned, c.changes)
		if summary != c.summary || !strings.Contains(detail, c.says) {
			t.Errorf("%s: UpgradeNotice() = %q, %q; want %q saying %q", name, summary, detail, c.summary, c.says)
		}
	}
}

func TestNotRunningStart(t *testing.T) {
	path := func(d *Desired) { d.RestorePath = "s3://b/sp-2" }
	for name, c := range map[string]struct {
		planned  Desired
		recorded string
		says     []string
		not      string
	}{
		"redeploy":           {job("savepoint").with(path), "", []string{"job.initial_savepoint_path s3://b/sp-2"}, "HA metadata"},
		"stateless":          {job("stateless"), "", []string{"empty state (a stateless upgrade"}, "HA metadata"},
		"mode unset":         {job(""), "", []string{"empty state (a stateless upgrade"}, "HA metadata"},
		"savepoint recorded": {job("savepoint"), "s3://b/sp-1", []string{"HA metadata", "the savepoint the operator recorded, s3://b/sp-1"}, "which loses nothing"},
		"nothing recorded":   {job("last-state"), "", []string{"HA metadata", "which loses nothing", "the apply is refused"}, "recorded,"},
		"last-state dummy":   {job("last-state"), LastStateDummyPath, []string{"HA metadata"}, "recorded,"},
	} {
		got := NotRunningStart(job("savepoint"), c.planned, c.recorded)
		for _, s := range c.says {
			if !strings.Contains(got, s) {
				t.Errorf("%s: %q does not say %q", name, got, s)
			}
		}
		if strings.Contains(got, c.not) {
			t.Errorf("%s: %q says %q", name, got, c.not)
		}
	}
	if LastStateDummyPath != kube.LastStateDummyPath {
		t.Errorf("LastStateDummyPath = %q, kube's %q", LastStateDummyPath, kube.LastStateDummyPath)
	}
}

func TestTakesUpgradeSavepoint(t *testing.T) {
	spec, other := fullSpec(), fullSpec()
	other.Image = "flink:2.2.1-java21"
	first := func(d *Desired) { d.SavepointFirst = true }
	withSpec := func(d Desired, s Spec) Desired { d.Spec = &s; return d }
	for name, c := range map[string]struct {
		prior, planned Desired
		want           bool
	}{
		"upgrade":              {withSpec(job("savepoint"), spec), withSpec(job("savepoint").with(first), other), true},
		"no job change":        {withSpec(job("savepoint"), spec), withSpec(job("savepoint").with(first), spec), false},
		"spec unknown":         {withSpec(job("savepoint"), spec), job("savepoint").with(first), true},
		"not asked for":        {withSpec(job("savepoint"), spec), withSpec(job("savepoint"), other), false},
		"suspended job":        {withSpec(job("savepoint").with(func(d *Desired) { d.JobState = JobSuspended }), spec), withSpec(job("savepoint").with(first), other), false},
		"stateless, asked for": {withSpec(job("stateless"), spec), withSpec(job("stateless").with(first), other), true},
	} {
		if got := TakesUpgradeSavepoint(c.prior, c.planned); got != c.want {
			t.Errorf("%s: TakesUpgradeSavepoint() = %v, want %v", name, got, c.want)
		}
	}
}

func TestReplacementRestores(t *testing.T) {
	pinned := func(p string) func(*Desired) { return func(d *Desired) { d.RestorePath = p } }
	noFinal := func(d *Desired) { d.FinalSavepoint = false }
	for name, c := range map[string]struct {
		prior, planned Desired
		oldHasState    bool
		from           string
		ambiguous      bool
	}{
		"no path: the handover":                    {job("savepoint"), job("savepoint"), true, FromHandover, false},
		"no path, old job not running":             {job("savepoint"), job("savepoint"), false, FromNothing, false},
		"no path, final_savepoint off":             {job("savepoint").with(noFinal), job("savepoint"), true, FromNothing, false},
		"path kept from before: ambiguous":         {job("last-state").with(pinned("s3://b/sp-1")), job("last-state").with(pinned("s3://b/sp-1")), true, FromPinned, true},
		"path kept, old job has no state":          {job("savepoint").with(pinned("s3://b/sp-1")), job("savepoint").with(pinned("s3://b/sp-1")), false, FromPinned, false},
		"path kept, final_savepoint off":           {job("savepoint").with(pinned("s3://b/sp-1"), noFinal), job("savepoint").with(pinned("s3://b/sp-1")), true, FromPinned, false},
		"path changed by this plan: user's choice": {job("savepoint").with(pinned("s3://b/sp-1")), job("savepoint").with(pinned("s3://b/sp-2")), true, FromPinned, false},
		"path set by this plan: user's choice":     {job("savepoint"), job("savepoint").with(pinned("s3://b/sp-2")), true, FromPinned, false},
		"stateless old job, path kept":             {job("stateless").with(pinned("s3://b/sp-1")), job("stateless").with(pinned("s3://b/sp-1")), true, FromPinned, false},
	} {
		from, ambiguous := ReplacementRestores(c.prior, c.planned, c.oldHasState)
		if from != c.from || ambiguous != c.ambiguous {
			t.Errorf("%s: ReplacementRestores = %s, %v; want %s, %v", name, from, ambiguous, c.from, c.ambiguous)
		}
	}
}

func version(v string) func(*Desired) { return func(d *Desired) { d.FlinkVersion = v } }

func conf(k, v string) func(*Desired) {
	return func(d *Desired) { d.Spec = &Spec{FlinkConfiguration: map[string]string{k: v}} }
}

// Without the fallback the savepoint upgrade of a job that is not running
// waits: the notice does not promise the latest checkpoint.
func TestUpgradeNotice_fallbackOff(t *testing.T) {
	_, detail := UpgradeNotice(job("savepoint"), job("savepoint").with(conf(lastStateFallbackKey, "false")), []string{"image"})
	if strings.Contains(detail, "falls back") {
		t.Fatalf("%q", detail)
	}
}
