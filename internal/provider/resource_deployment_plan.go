package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// deploymentChecks runs flinkconf's checks on a whole deployment at
// validate time (errors only: warnings come once, from ModifyPlan).
type deploymentChecks struct{}

func (deploymentChecks) Description(context.Context) string {
	return "the combination of attributes can run (flinkconf's checks)"
}

func (v deploymentChecks) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (deploymentChecks) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m deploymentModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	in, ok := specChecks(ctx, &m.deploymentSpecModel, &resp.Diagnostics)
	if m.WaitFor.ValueString() == flinkdeploy.WaitCheckpoint && m.Job == nil {
		resp.Diagnostics.AddAttributeError(path.Root("wait_for"), "Nothing to checkpoint",
			"wait_for = \"checkpoint\" waits for a checkpoint of the deployment's job, and this deployment has no job block (a session cluster): "+
				"set wait_for = \"deployed\" (or \"running\").")
	}
	if !ok {
		return
	}
	if m.SavepointFirst != nil && !m.SavepointFirst.FormatType.IsUnknown() {
		if _, ok := flinkconf.SavepointFormatFor(in.State.Backend, m.SavepointFirst.FormatType.ValueString()); !ok {
			resp.Diagnostics.AddAttributeError(path.Root("savepoint_before_upgrade").AtName("format_type"), "Savepoint format ForSt cannot take",
				"state.backend is \"forst\": "+flinkconf.ForStFormatAdvice+" Set format_type = \"NATIVE\", or leave it unset (the "+
					"provider then asks ForSt jobs for NATIVE savepoints).")
		}
	}
}

// specChecks are the validate-time checks of a FlinkDeployment spec,
// flinkstate_deployment's and a blue/green template's (deploymentChecks,
// blueGreenChecks): checkSensitiveKeys and flinkconf's findings on the
// configuration and the pod template (errors only: warnings come once,
// from ModifyPlan). ok is false while an input is unknown.
func specChecks(ctx context.Context, m *deploymentSpecModel, diags *diag.Diagnostics) (flinkconf.Input, bool) {
	checkSensitiveKeys(m, diags)
	var d diag.Diagnostics
	in, ok := m.input(ctx, nil, &d)
	if !ok || d.HasError() || m.PodTemplate.IsUnknown() {
		return in, false
	}
	_, fs := flinkconf.Derive(in)
	_, pfs := flinkconf.PodTemplate(m.PodTemplate.ValueString(), in)
	addFindings(diags, errorsOnly(append(fs, pfs...)))
	return in, true
}

// planSpecChecks are the plan-time checks of a FlinkDeployment spec that
// both resources make besides flinkconf's (planIdentity, the pod
// template's): state is the prior spec, nil for a new object.
func planSpecChecks(plan, state *deploymentModel, in flinkconf.Input, diags *diag.Diagnostics) {
	if plan.JobManager != nil && plan.JobManager.Replicas.ValueInt64() > 1 && !in.HAEnabled() {
		// Standby JobManagers take over through leader election, which
		// only an HA service provides (Flink docs, "JobManager High
		// Availability").
		diags.AddAttributeError(path.Root("job_manager").AtName("replicas"), "Standby JobManagers need high availability",
			"more than one JobManager replica needs high_availability (leader election).")
	}
	if state != nil && state.keepsState() && preflight.CrossesToFlink2(state.FlinkVersion.ValueString(), plan.FlinkVersion.ValueString()) {
		diags.AddAttributeWarning(path.Root("flink_version"), "Flink 1.x state restored by Flink 2",
			fmt.Sprintf("flink_version moves from %s to %s, and the job restores its state across it. %s", state.FlinkVersion.ValueString(),
				plan.FlinkVersion.ValueString(), preflight.Flink2StateAdvice))
	}
}

// checkSensitiveKeys: a secret in flink_configuration is shown in plans
// (a warning); a key in both maps is an error.
func checkSensitiveKeys(m *deploymentSpecModel, diags *diag.Diagnostics) {
	sens := m.SensitiveConfig.Elements()
	for k := range m.FlinkConfiguration.Elements() {
		if _, both := sens[k]; both {
			diags.AddAttributeError(path.Root("flink_configuration").AtMapKey(k), "Key set twice",
				fmt.Sprintf("%q is in both flink_configuration and sensitive_flink_configuration: keep it in one (a secret in "+
					"sensitive_flink_configuration).", k))
		} else if flinkconf.IsSensitiveKey(k) {
			diags.AddAttributeWarning(path.Root("flink_configuration").AtMapKey(k), "Secret shown in plans",
				fmt.Sprintf("Flink treats %q as a secret (GlobalConfiguration.isSensitive), but flink_configuration shows it in "+
					"plans and in effective_flink_configuration: move it to sensitive_flink_configuration.", k))
		}
	}
}

// planDeployment records a deployment for the checks of later resources
// and runs its own cross-resource checks.
func (r *deploymentResource) planDeployment(plan deploymentModel, in flinkconf.Input, diags *diag.Diagnostics) {
	r.planCredentials(&plan.deploymentSpecModel, "flinkstate_deployment "+plan.Name.ValueString(), diags)
	if !known(plan.Namespace, plan.Name) {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	d := plannedDeployment{savepointDir: in.State.SavepointDir, checkpointDir: in.State.CheckpointDir, storeURI: in.State.StoreURI,
		backend: in.State.Backend}
	if known(plan.ServiceAccount) {
		d.serviceAccount = plan.Namespace.ValueString() + "/" + plan.ServiceAccount.ValueString()
	}
	p.deployments[plan.Namespace.ValueString()+"/"+plan.Name.ValueString()] = d
}

// planCredentials relates a spec's identity to the ServiceAccounts this
// run planned (both resources'; what names the resource, e.g.
// "flinkstate_deployment orders"): Pod Identity on an IRSA account
// (podIdentityUser), an IRSA role no credentials class uses.
func (r *resourceBase) planCredentials(plan *deploymentSpecModel, what string, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() == flinkconf.IdentityPodIdentity {
		r.podIdentityUser(plan.Namespace, plan.ServiceAccount, "identity = \"pod_identity\" on "+what, path.Root("identity"), diags)
	}
	if !known(plan.Namespace, plan.ServiceAccount) || !plan.Identity.IsNull() {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	if sa := plan.Namespace.ValueString() + "/" + plan.ServiceAccount.ValueString(); p.irsa[sa] {
		unusedIRSARole(sa, diags)
	}
}

// checkIdentityAtApply is rule 6 at apply, for a ServiceAccount this
// configuration does not plan: before the FlinkDeployment is written, a
// pod_identity deployment's ServiceAccount must not carry the IRSA
// annotation. A missing account is left to the operator's own error.
func checkIdentityAtApply(ctx context.Context, c *kube.Client, plan deploymentModel, diags *diag.Diagnostics) {
	if plan.Identity.ValueString() != flinkconf.IdentityPodIdentity {
		return
	}
	ns, sa := plan.Namespace.ValueString(), plan.ServiceAccount.ValueString()
	live, err := kube.GetServiceAccount(ctx, c.Dynamic, ns, sa)
	if err != nil {
		if !notfound.Is(err) {
			addProblem(diags, "Reading", "ServiceAccount "+ns+"/"+sa, readableAPIError(err), "Nothing was written.")
		}
		return
	}
	if _, ok := live.GetAnnotations()[kube.IRSAAnnotation]; ok {
		diags.AddAttributeError(path.Root("identity"), "IRSA and Pod Identity on the same ServiceAccount",
			fmt.Sprintf(irsaConflictDetail, ns+"/"+sa, "identity = \"pod_identity\"")+" Nothing was written.")
	}
}

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

// planIdentity says at plan what identity does to the credentials class.
// Every flinkConfiguration key is part of the spec the operator diffs
// (flink-kubernetes-operator release-1.15.0, ReflectiveDiffBuilder over
// FlinkDeploymentSpec), so on an existing deployment setting, changing or
// removing identity is an upgrade: a restart. A new deployment without it
// gets no credentials class, which is allowed and said.
func planIdentity(plan deploymentModel, state *deploymentModel, diags *diag.Diagnostics) {
	if plan.Identity.IsUnknown() {
		return
	}
	want := plan.Identity.ValueString()
	class := map[string]string{flinkconf.IdentityIRSA: flinkconf.IRSACredentialsProvider, flinkconf.IdentityPodIdentity: flinkconf.PodIdentityCredentialsProvider}
	if state == nil {
		if want == "" {
			diags.AddAttributeWarning(path.Root("identity"), "No S3 credentials class",
				"identity is unset, so the provider writes no fs.s3a.aws.credentials.provider: the job gets AWS credentials from a "+
					"class configured outside this FlinkDeployment, or from "+s3aDefaultChain+". Set identity = \"irsa\" or "+
					"\"pod_identity\" to have the provider write the class; setting it later restarts the job.")
		}
		return
	}
	had := state.Identity.ValueString()
	if state.Identity.IsUnknown() || had == want {
		return
	}
	restart := "a spec change the operator applies as an upgrade (a restart with the job's upgrade mode)"
	switch {
	case had == "":
		diags.AddAttributeWarning(path.Root("identity"), "Setting identity restarts the job",
			fmt.Sprintf("identity = %q writes fs.s3a.aws.credentials.provider = %s into the FlinkDeployment, which has no "+
				"credentials class now: %s. Leave identity unset to keep the job's credentials as they are.", want, class[want], restart))
	case want == "":
		diags.AddAttributeWarning(path.Root("identity"), "Removing identity restarts the job",
			fmt.Sprintf("identity was %q: removing it removes fs.s3a.aws.credentials.provider (%s) from the FlinkDeployment, %s. "+
				"The job then gets credentials from a class configured outside it, or from %s.", had, class[had], restart, s3aDefaultChain))
	default:
		diags.AddAttributeWarning(path.Root("identity"), "Changing identity restarts the job",
			fmt.Sprintf("identity %q -> %q changes fs.s3a.aws.credentials.provider from %s to %s, %s.", had, want, class[had], class[want], restart))
	}
}

// unusedIRSARole: a deployment without identity whose ServiceAccount this
// configuration gives an IRSA role. The IRSA webhook only injects
// AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE; without a credentials class
// S3A's default chain (s3aDefaultChain) never reads them, so the job runs
// with the node's role unless a class is configured elsewhere.
func unusedIRSARole(sa string, diags *diag.Diagnostics) {
	diags.AddAttributeWarning(path.Root("identity"), "IRSA role not used",
		fmt.Sprintf("The ServiceAccount %s gets an IRSA role (irsa_role_arn), but identity is unset, so the provider writes no "+
			"credentials class and the S3 plugin uses %s: the job would run with the node's role, not the IRSA one, unless a "+
			"class is configured outside this FlinkDeployment. Set identity = \"irsa\".", sa, s3aDefaultChain))
}
