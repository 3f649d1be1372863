package kube

// Report is how the provider words one end of an operation: a warning
// (Warning is its summary, Detail its text), or an error in the provider's
// problem form ("<Verb> <object> failed": Detail is the cause, Advice what
// to do).
type Report struct {
	Warning, Verb, Detail, Advice string
}
