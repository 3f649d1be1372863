package flinkdeploy

import (
	"fmt"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// The plan's words on a spec's identity and its JobManagers: what
// identity does to the S3 credentials class, and the spec checks both
// resources make besides flinkconf's.

// s3aDefaultChain says what the pods use without a credentials class: the
// S3 plugin's Hadoop S3A (3.3.4 in Flink's flink-s3-fs-hadoop) then reads
// its default list (core-default.xml fs.s3a.aws.credentials.provider,
// S3AUtils.STANDARD_AWS_PROVIDERS): TemporaryAWSCredentialsProvider,
// SimpleAWSCredentialsProvider, EnvironmentVariableCredentialsProvider and
// IAMInstanceCredentialsProvider, which wraps the SDK's
// EC2ContainerCredentialsProviderWrapper (container credentials, else the
// instance role). WebIdentityTokenCredentialsProvider is not in it.
const s3aDefaultChain = "Hadoop S3A's default chain (static keys in the configuration, AWS_* environment variables, container " +
	"credentials such as EKS Pod Identity's, then the node's instance role; not IRSA's web identity token)"

var identityAttr = []string{"identity"}

// IdentityNotice is the plan's warning (none: nil) on what identity
// does to the credentials class: want is the planned identity, had the
// prior one (create: a new deployment). Every flinkConfiguration key is
// part of the spec the operator diffs (flink-kubernetes-operator
// release-1.15.0, ReflectiveDiffBuilder over FlinkDeploymentSpec), so on
// an existing deployment setting, changing or removing identity is an
// upgrade: a restart. A new deployment without it gets no credentials
// class, which is allowed and said.
func IdentityNotice(had, want string, create bool) []flinkconf.Finding {
	class := map[string]string{flinkconf.IdentityIRSA: flinkconf.IRSACredentialsProvider, flinkconf.IdentityPodIdentity: flinkconf.PodIdentityCredentialsProvider}
	if create {
		if want != "" {
			return nil
		}
		return one(warning(identityAttr, "No S3 credentials class",
			"identity is unset, so the provider writes no fs.s3a.aws.credentials.provider: the job gets AWS credentials from a "+
				"class configured outside this FlinkDeployment, or from "+s3aDefaultChain+". Set identity = \"irsa\" or "+
				"\"pod_identity\" to have the provider write the class; setting it later restarts the job."))
	}
	restart := "a spec change the operator applies as an upgrade (a restart with the job's upgrade mode)"
	switch {
	case had == want:
		return nil
	case had == "":
		return one(warning(identityAttr, "Setting identity restarts the job",
			fmt.Sprintf("identity = %q writes fs.s3a.aws.credentials.provider = %s into the FlinkDeployment, which has no "+
				"credentials class now: %s. Leave identity unset to keep the job's credentials as they are.", want, class[want], restart)))
	case want == "":
		return one(warning(identityAttr, "Removing identity restarts the job",
			fmt.Sprintf("identity was %q: removing it removes fs.s3a.aws.credentials.provider (%s) from the FlinkDeployment, %s. "+
				"The job then gets credentials from a class configured outside it, or from %s.", had, class[had], restart, s3aDefaultChain)))
	}
	return one(warning(identityAttr, "Changing identity restarts the job",
		fmt.Sprintf("identity %q -> %q changes fs.s3a.aws.credentials.provider from %s to %s, %s.", had, want, class[had], class[want], restart)))
}

// UnusedIRSARole is the warning on a deployment without identity whose
// ServiceAccount sa the configuration gives an IRSA role. The IRSA webhook
// only injects AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE; without a
// credentials class S3A's default chain (s3aDefaultChain) never reads
// them, so the job runs with the node's role unless a class is configured
// elsewhere.
func UnusedIRSARole(sa string) flinkconf.Finding {
	return warning(identityAttr, "IRSA role not used",
		fmt.Sprintf("The ServiceAccount %s gets an IRSA role (irsa_role_arn), but identity is unset, so the provider writes no "+
			"credentials class and the S3 plugin uses %s: the job would run with the node's role, not the IRSA one, unless a "+
			"class is configured outside this FlinkDeployment. Set identity = \"irsa\".", sa, s3aDefaultChain))
}

// StandbyWithoutHA is the refusal of more than one JobManager replica
// without high availability: standby JobManagers take over through leader
// election, which only an HA service provides (Flink docs, "JobManager
// High Availability").
func StandbyWithoutHA(replicas int64, ha bool) []flinkconf.Finding {
	if replicas <= 1 || ha {
		return nil
	}
	return one(flinkconf.Finding{Severity: flinkconf.Error, Path: []string{"job_manager", "replicas"}, Summary: "Standby JobManagers need high availability",
		Detail: "more than one JobManager replica needs high_availability (leader election)."})
}

// NoJobToCheckpoint is the refusal of wait_for = "checkpoint" on a
// deployment without a job block (a session cluster).
func NoJobToCheckpoint(waitFor string, hasJob bool) []flinkconf.Finding {
	if waitFor != WaitCheckpoint || hasJob {
		return nil
	}
	return one(flinkconf.Finding{Severity: flinkconf.Error, Path: []string{"wait_for"}, Summary: "Nothing to checkpoint",
		Detail: "wait_for = \"checkpoint\" waits for a checkpoint of the deployment's job, and this deployment has no job block (a session cluster): " +
			"set wait_for = \"deployed\" (or \"running\")."})
}

// SavepointFormatRefusal is the refusal (none: nil) of a
// savepoint_before_upgrade.format_type the backend cannot take
// (flinkconf.SavepointFormatFor: ForSt takes NATIVE only).
func SavepointFormatRefusal(backend, format string) []flinkconf.Finding {
	if _, ok := flinkconf.SavepointFormatFor(backend, format); ok {
		return nil
	}
	return one(flinkconf.Finding{Severity: flinkconf.Error, Path: []string{"savepoint_before_upgrade", "format_type"}, Summary: "Savepoint format ForSt cannot take",
		Detail: "state.backend is \"forst\": " + flinkconf.ForStFormatAdvice + " Set format_type = \"NATIVE\", or leave it unset (the " +
			"provider then asks ForSt jobs for NATIVE savepoints)."})
}
