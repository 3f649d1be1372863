package flinkdeploy

import "github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"

// PlanNonce is the savepointRedeployNonce the plan of an update from prior
// (whose nonce is priorNonce, nil for none) to planned records, and what
// the plan says about it: the spec changes the operator refuses on an
// existing deployment (RefusalFindings, refused at plan); on a redeploy
// (Redeploys) the next nonce (NextNonce) and RedeployNotice. While the
// planned restore path is unknown (pathUnknown), so is the nonce
// (unknown); otherwise it stays prior's.
func PlanNonce(prior, planned Desired, priorNonce *int64, pathUnknown bool) (nonce *int64, unknown bool, fs []flinkconf.Finding) {
	fs = RefusalFindings(prior, planned)
	switch {
	case pathUnknown:
		return nil, true, fs
	case Redeploys(prior, planned):
		next := NextNonce(priorNonce)
		return &next, false, append(fs, RedeployNotice(next, planned.RestorePath))
	}
	return priorNonce, false, fs
}
