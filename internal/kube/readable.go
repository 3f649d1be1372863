package kube

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

// ReadableError keeps the API server's message (CRD validation errors name
// the field) and drops Go error wrapping.
func ReadableError(err error) string {
	// A finder's "does not exist" (GetFlinkDeployment) reads as the API
	// server's answer it wraps.
	if nf, ok := err.(*notfound.Error); ok {
		err = nf.Err
	}
	if se, ok := err.(apierrors.APIStatus); ok {
		st := se.Status()
		msg := st.Message
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Field != "" && !strings.Contains(msg, c.Field) {
					msg += "; " + c.Field + ": " + c.Message
				}
			}
		}
		return msg
	}
	return err.Error()
}

// OrNone is s, or "(none)" when s is empty: a status field not set.
func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
