package flinkdeploy

// SameSpec tells whether d and o write the same object: their rendered
// specs (Spec, with the provider defaults an imported object lacked left
// out) are equal (status, timeouts and wait_for aside). Anything unknown
// (no spec) is a change.
func (d Desired) SameSpec(o Desired) bool {
	return d.Spec != nil && o.Spec != nil && d.Spec.Equal(*o.Spec)
}
