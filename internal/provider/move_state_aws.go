package provider

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// `moved` from hashicorp/aws: aws_s3_bucket, aws_iam_role and
// aws_eks_pod_identity_association become flinkstate resources as an
// import of the same bucket, role or association (see move_state.go): the
// converters take the import ID from the source state and set what
// ImportState sets; the refresh after the move reads the rest.

// fromAWSProvider: hashicorp/aws' address as Terraform sends it (any
// registry host), or "aws", what OpenTofu v1.10 sends (move_state.go).
func fromAWSProvider(req resource.MoveStateRequest) bool {
	return strings.HasSuffix(req.SourceProviderAddress, "/hashicorp/aws") || req.SourceProviderAddress == "aws"
}

// awsState reads the top-level attributes of a hashicorp/aws state. Every
// version of these resources stores them as JSON (Terraform >= 0.12); a
// state in the flatmap form of Terraform 0.11 has no JSON and is refused.
func awsState(req resource.MoveStateRequest) (map[string]json.RawMessage, error) {
	if req.SourceRawState == nil || len(req.SourceRawState.JSON) == 0 {
		return nil, fmt.Errorf("its state is not stored as JSON (a state last written by Terraform 0.11?)")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req.SourceRawState.JSON, &m); err != nil {
		return nil, fmt.Errorf("its state is not a JSON object: %w", err)
	}
	return m, nil
}

func jsonString(m map[string]json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}

func jsonStrings(m map[string]json.RawMessage, key string) []string {
	var out []string
	_ = json.Unmarshal(m[key], &out)
	sort.Strings(out)
	return out
}

func removedBlock(types ...string) string {
	var b strings.Builder
	for _, t := range types {
		fmt.Fprintf(&b, "removed { from = %s.<name>  lifecycle { destroy = false } }; ", t)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// refuseAWSPart refuses a hashicorp/aws resource that is one part of what
// the target manages: it is not moved, it is removed from state.
func refuseAWSPart(req resource.MoveStateRequest, resp *resource.MoveStateResponse, target string) {
	moveProblem(&resp.Diagnostics, req, target,
		fmt.Sprintf("%s is one setting of what %s manages as a whole, not a resource of its own, and a moved block moves one "+
			"resource into one resource", req.SourceTypeName, target),
		fmt.Sprintf("Move (or import) the main resource into %s and take this one out of state without changing anything: %s.",
			target, removedBlock(req.SourceTypeName)))
}
