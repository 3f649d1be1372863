package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"
)

// PolicyRequest is one request for the policy engine (awsfront.PolicyRequest).
type PolicyRequest = awsfront.PolicyRequest

// EvaluatePolicy asks the policy engine whether policy allows each request.
func EvaluatePolicy(ctx context.Context, root, policy string, reqs []PolicyRequest) ([]bool, error) {
	bin, err := Tool(ctx, root, "policycheck")
	if err != nil {
		return nil, fmt.Errorf("building the policy engine: %w", err)
	}
	body, err := json.Marshal(struct {
		Policy   json.RawMessage `json:"policy"`
		Requests []PolicyRequest `json:"requests"`
	}{json.RawMessage(policy), reqs})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("policycheck: %w: %s", err, stderr.String())
	}
	var res []bool
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(reqs) {
		return nil, fmt.Errorf("policycheck output %q: %v", out, err)
	}
	return res, nil
}
