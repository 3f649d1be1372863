package preflight

// Replacement words the Handover of a replacement of the deployment
// subject ("FlinkDeployment ns/name") that carries its job's state across:
// its job is stopped with a final savepoint and the new deployment started
// from it, whose create checks that savepoint itself when this pre-flight
// cannot.
func Replacement(subject string) Handover {
	return Handover{
		Subject: subject + " is replaced",
		How:     "its job would be stopped with a final savepoint and the new deployment started from it",
		Skipped: "the create checks the savepoint itself",
	}
}
