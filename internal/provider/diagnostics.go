package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// The provider's one error wording, after hashicorp/aws's standard problem
// message (internal/create: "creating S3 Bucket (name): cause"): the summary
// says what failed and on which object, the detail gives the cause and, when
// there is something to do about it, what to do.
//
//	addProblem(diags, "Reading", "IAM role "+name, awsErr(ctx, err), "")
//	→ summary "Reading IAM role flink-app failed", detail "<cause>"
func addProblem(diags *diag.Diagnostics, action, object, cause, todo string) {
	diags.AddError(problemSummary(action, object), problemDetail(cause, todo))
}

// addProblemWarning is addProblem for a warning: the apply went on, but the
// user must know what did not happen.
func addProblemWarning(diags *diag.Diagnostics, action, object, cause, todo string) {
	diags.AddWarning(problemSummary(action, object), problemDetail(cause, todo))
}

func problemSummary(action, object string) string {
	return strings.TrimSpace(action+" "+object) + " failed"
}

func problemDetail(cause, todo string) string {
	cause = strings.TrimSpace(cause)
	if cause != "" && !strings.HasSuffix(cause, ".") {
		cause += "."
	}
	if todo = strings.TrimSpace(todo); todo == "" {
		return cause
	}
	if cause == "" {
		return todo
	}
	return fmt.Sprintf("%s\n\n%s", cause, todo)
}
