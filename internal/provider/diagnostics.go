package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
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

func errorsOnly(fs []flinkconf.Finding) []flinkconf.Finding {
	var out []flinkconf.Finding
	for _, f := range fs {
		if f.Severity == flinkconf.Error {
			out = append(out, f)
		}
	}
	return out
}

// addFindings reports flinkconf findings as diagnostics on their attributes.
func addFindings(diags *diag.Diagnostics, fs []flinkconf.Finding) {
	for _, f := range fs {
		p := path.Empty()
		for i, seg := range f.Path {
			if i > 0 && f.Path[0] == "flink_configuration" {
				p = p.AtMapKey(strings.Join(f.Path[i:], "."))
				break
			}
			p = p.AtName(seg)
		}
		if f.Severity == flinkconf.Error {
			diags.AddAttributeError(p, f.Summary, f.Detail)
		} else {
			diags.AddAttributeWarning(p, f.Summary, f.Detail)
		}
	}
}

// countObjects says "1 object", "12 objects" or "more than 10000 objects".
func countObjects(n int, more bool) string {
	switch {
	case more:
		return fmt.Sprintf("more than %d objects", n)
	case n == 1:
		return "1 object"
	default:
		return fmt.Sprintf("%d objects", n)
	}
}

// readableAPIError keeps the API server's message (kube.ReadableError).
func readableAPIError(err error) string { return kube.ReadableError(err) }
