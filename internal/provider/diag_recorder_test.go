package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// terraform-plugin-testing shows a test only errors, never warnings. A
// diagRecorder is the provider as terraform runs it in an acceptance test
// (the real provider server behind the real terraform CLI), recording the
// diagnostics of every resource plan, apply and read as they cross the
// protocol, so a test can assert the warnings terraform showed the user.
type diagRecorder struct {
	mu    sync.Mutex
	diags []recordedDiag
}

type recordedDiag struct {
	rpc      string // PlanResourceChange, ApplyResourceChange, ReadResource
	typeName string
	warning  bool
	text     string // summary: detail
}

func (d recordedDiag) String() string {
	sev := "error"
	if d.warning {
		sev = "warning"
	}
	return fmt.Sprintf("%s %s %s: %s", d.rpc, d.typeName, sev, d.text)
}

// factories are ProtoV6ProviderFactories whose servers record into r.
func (r *diagRecorder) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"flinkstate": func() (tfprotov6.ProviderServer, error) {
			s, err := providerserver.NewProtocol6WithError(New("test")())()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: s, rec: r}, nil
		},
	}
}

func (r *diagRecorder) add(rpc, typeName string, ds []*tfprotov6.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range ds {
		r.diags = append(r.diags, recordedDiag{rpc: rpc, typeName: typeName,
			warning: d.Severity == tfprotov6.DiagnosticSeverityWarning, text: d.Summary + ": " + d.Detail})
	}
}

// reset forgets what was recorded (call it in a step's PreConfig).
func (r *diagRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.diags = nil
}

func (r *diagRecorder) recorded() []recordedDiag {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedDiag(nil), r.diags...)
}

// find returns the recorded diagnostics of rpc and severity whose text
// matches every part in order (errorRE).
func (r *diagRecorder) find(rpc string, warning bool, parts ...string) []recordedDiag {
	re := errorRE(parts...)
	var out []recordedDiag
	for _, d := range r.recorded() {
		if d.rpc == rpc && d.warning == warning && re.MatchString(d.text) {
			out = append(out, d)
		}
	}
	return out
}

// expectWarning is a check that rpc answered with a warning matching parts.
func (r *diagRecorder) expectWarning(rpc string, parts ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if len(r.find(rpc, true, parts...)) == 0 {
			return fmt.Errorf("no %s warning matching %q; recorded:\n%s", rpc, parts, r.dump())
		}
		return nil
	}
}

// checkWarning is expectWarning for use outside a TestCheckFunc.
func (r *diagRecorder) checkWarning(t *testing.T, rpc string, parts ...string) {
	t.Helper()
	if err := r.expectWarning(rpc, parts...)(nil); err != nil {
		t.Error(err)
	}
}

func (r *diagRecorder) dump() string {
	ds := r.recorded()
	if len(ds) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

// recordingServer is the provider server with the resource RPCs' answers
// recorded; everything else is the server's own.
type recordingServer struct {
	tfprotov6.ProviderServer
	rec *diagRecorder
}

func (s recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.rec.add("PlanResourceChange", req.TypeName, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.add("ApplyResourceChange", req.TypeName, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil {
		s.rec.add("ReadResource", req.TypeName, resp.Diagnostics)
	}
	return resp, err
}

// planWarning is a plan check that a resource plan (PlanResourceChange)
// answered with a warning matching parts: what terraform showed under the
// plan, before anything was applied.
func (r *diagRecorder) planWarning(parts ...string) plancheck.PlanCheck {
	return recordedPlanWarning{rec: r, parts: parts}
}

type recordedPlanWarning struct {
	rec   *diagRecorder
	parts []string
}

func (c recordedPlanWarning) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if err := c.rec.expectWarning("PlanResourceChange", c.parts...)(nil); err != nil {
		resp.Error = err
	}
	for _, d := range c.rec.recorded() {
		if d.rpc == "ApplyResourceChange" {
			resp.Error = fmt.Errorf("an apply answered before this plan check (%s): reset the recorder in the step's PreConfig", d)
		}
	}
}
