package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

func TestAddProblem_wording(t *testing.T) {
	var diags diag.Diagnostics
	addProblem(&diags, "Reading", "IAM role flink-app", "iam:GetRole: AccessDenied", "Grant iam:GetRole to the caller.")
	if len(diags) != 1 || diags[0].Severity() != diag.SeverityError {
		t.Fatalf("want one error, got %v", diags)
	}
	if got, want := diags[0].Summary(), "Reading IAM role flink-app failed"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if got, want := diags[0].Detail(), "iam:GetRole: AccessDenied.\n\nGrant iam:GetRole to the caller."; got != want {
		t.Errorf("detail = %q, want %q", got, want)
	}
}

func TestAddProblem_noAdvice(t *testing.T) {
	var diags diag.Diagnostics
	addProblemWarning(&diags, "Waiting for", "FlinkDeployment ns/app", "job FAILED", "")
	if len(diags) != 1 || diags[0].Severity() != diag.SeverityWarning {
		t.Fatalf("want one warning, got %v", diags)
	}
	if got, want := diags[0].Detail(), "job FAILED."; got != want {
		t.Errorf("detail = %q, want %q", got, want)
	}
}
