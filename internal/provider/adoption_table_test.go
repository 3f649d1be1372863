package provider

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccAdoptionTable is a measurement, not a check (the checks are
// TestAccDeployment_adoptOperatorExamples and TestAccSnapshot_adoptOperatorExamples):
// with FLINKSTATE_ADOPTION_TABLE=1 it imports every operator example with
// -generate-config-out and prints, per example, whether the import, the
// generated configuration and the first plan succeed. Run it on two
// revisions to compare them.
func TestAccAdoptionTable(t *testing.T) {
	skipUnlessAcc(t)
	if os.Getenv("FLINKSTATE_ADOPTION_TABLE") == "" {
		t.Skip("a measurement: set FLINKSTATE_ADOPTION_TABLE=1")
	}
	ns := testNamespace(t)
	startOperator(t, ns)
	runExampleDeployment(t, ns)
	var rows []string
	for _, kind := range []string{"FlinkDeployment", "FlinkStateSnapshot"} {
		examples := operatorExamples(t, kind)
		names := slices.Sorted(maps.Keys(examples))
		for i, n := range names {
			obj := examples[n]
			name := strings.Trim(strings.ReplaceAll(strings.ReplaceAll(n, "_", "-"), ".", "-"), "-")
			if len(name) > 40 {
				name = strings.TrimRight(name[:40], "-")
			}
			addr, label := "flinkstate_deployment.adopted", kind+" "+n
			if kind == "FlinkStateSnapshot" {
				addr = "flinkstate_snapshot.adopted"
				name = adaptSnapshotExample(obj, ns, n)
				applySnapshotExample(t, obj, i%2 == 0)
			} else {
				if _, ok := obj.Object["spec"]; !ok {
					rows = append(rows, fmt.Sprintf("| %s | no spec: the operator's health-check canary, not a job |", label))
					continue
				}
				adaptExample(t, obj, ns, name)
				kubectlApply(t, obj, i%2 == 0)
			}
			rec := &recordingT{T: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				resource.Test(rec, resource.TestCase{
					ProtoV6ProviderFactories: testProviderFactories,
					Steps: []resource.TestStep{{
						Config: "# adopting " + n + "\n", ResourceName: addr, ImportState: true,
						ImportStateKind: resource.ImportBlockWithID, ImportStateId: ns + "/" + name, GenerateConfig: true,
					}},
				})
			}()
			<-done
			rows = append(rows, fmt.Sprintf("| %s | %s |", label, rec.outcome()))
		}
	}
	t.Logf("\n| example | import · generated configuration · first plan |\n|---|---|\n%s", strings.Join(rows, "\n"))
}

// recordingT runs a resource.Test without failing the real test: it
// records the first failure and ends the test's goroutine.
type recordingT struct {
	*testing.T
	mu   sync.Mutex
	msgs []string
}

func (r *recordingT) record(s string) {
	r.mu.Lock()
	r.msgs = append(r.msgs, s)
	r.mu.Unlock()
}
func (r *recordingT) Error(a ...any)            { r.record(fmt.Sprint(a...)) }
func (r *recordingT) Errorf(f string, a ...any) { r.record(fmt.Sprintf(f, a...)) }
func (r *recordingT) Fatal(a ...any)            { r.record(fmt.Sprint(a...)); runtime.Goexit() }
func (r *recordingT) Fatalf(f string, a ...any) { r.record(fmt.Sprintf(f, a...)); runtime.Goexit() }
func (r *recordingT) Fail()                     { r.record("failed") }
func (r *recordingT) FailNow()                  { r.record("failed"); runtime.Goexit() }
func (r *recordingT) Failed() bool              { r.mu.Lock(); defer r.mu.Unlock(); return len(r.msgs) > 0 }
func (r *recordingT) Parallel()                 {}
func (r *recordingT) Skip(a ...any)             { r.record("skipped: " + fmt.Sprint(a...)); runtime.Goexit() }
func (r *recordingT) Skipf(f string, a ...any) {
	r.record("skipped: " + fmt.Sprintf(f, a...))
	runtime.Goexit()
}
func (r *recordingT) SkipNow() { r.record("skipped"); runtime.Goexit() }

// outcome summarizes the first failure in one table cell.
func (r *recordingT) outcome() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msgs) == 0 {
		return "imported · valid · no change"
	}
	m := r.msgs[0]
	switch {
	case strings.Contains(m, "expected a no-op import operation"):
		action := "update"
		if strings.Contains(m, "create") || strings.Contains(m, "delete") {
			action = "replace"
		}
		return "imported · valid · **" + action + "**: " + firstChanges(m)
	case strings.Contains(m, "Importing") && strings.Contains(m, "failed"):
		return "**refused**: " + firstLine(m, "Importing")
	case strings.Contains(m, "generating plan with import config"):
		return "imported · **invalid**: " + firstLine(m, "Error: ")
	}
	return "**error**: " + firstLine(m, "")
}

func firstLine(s, after string) string {
	if i := strings.Index(s, after); i >= 0 {
		s = s[i:]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func firstChanges(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if (strings.HasPrefix(l, "~ ") || strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "- ")) && !strings.Contains(l, "known after apply") &&
			!strings.HasPrefix(l, "~ resource") && !strings.HasPrefix(l, "~ update") {
			out = append(out, strings.Fields(l)[1])
		}
		if len(out) == 4 {
			break
		}
	}
	return strings.Join(out, ", ")
}
