package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
)

type latestSavepointDataSource struct{ dataSourceBase }

var (
	_ datasource.DataSourceWithConfigure        = (*latestSavepointDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*latestSavepointDataSource)(nil)
)

// savepointOwner: whose savepoints, a FlinkDeployment's or a
// FlinkBlueGreenDeployment's.
var savepointOwner = exactlyOneOf("deployment_name", "blue_green_deployment_name")

func (d *latestSavepointDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{savepointOwner.dataSource()}
}

func newLatestSavepointDataSource() datasource.DataSource { return &latestSavepointDataSource{} }

type latestSavepointModel struct {
	Namespace       types.String `tfsdk:"namespace"`
	DeploymentName  types.String `tfsdk:"deployment_name"`
	BlueGreenName   types.String `tfsdk:"blue_green_deployment_name"`
	SourceName      types.String `tfsdk:"source_deployment_name"`
	Type            types.String `tfsdk:"type"`
	Found           types.Bool   `tfsdk:"found"`
	Name            types.String `tfsdk:"name"`
	Path            types.String `tfsdk:"path"`
	ResultTimestamp types.String `tfsdk:"result_timestamp"`
	TakenAt         types.String `tfsdk:"taken_at"`
	PickedBy        types.String `tfsdk:"picked_by"`
	TriggerType     types.String `tfsdk:"trigger_type"`
	OperatorCleanup types.String `tfsdk:"operator_cleanup"`
	CleanupAfter    types.String `tfsdk:"cleanup_after"`
	Contents        types.Object `tfsdk:"contents"`
}

func (d *latestSavepointDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_latest_savepoint"
}

func (d *latestSavepointDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The savepoint of a FlinkDeployment taken last, among its COMPLETED FlinkStateSnapshots (by spec.jobReference), " +
			"from the Kubernetes API. Savepoints only by default: checkpoint-type snapshots belong to Flink, which deletes them " +
			"at any time (the operator's snapshot documentation). A snapshot the operator took is dated by status.triggerTimestamp; " +
			"one that records an existing savepoint (already_exists) by its _metadata's last modification in S3 (one request each), " +
			"because the operator dates it when it was recorded, so recording an old savepoint never makes it the latest. " +
			"`picked_by` says which rule dated the result. With `blue_green_deployment_name`, it looks at both children of a " +
			"FlinkBlueGreenDeployment (the FlinkStateSnapshots of `<name>-blue` and `<name>-green`) and at the savepoint the operator " +
			"took for the last transition, which is no FlinkStateSnapshot (`trigger_type` `BLUE_GREEN_TRANSITION`); " +
			"`source_deployment_name` says which child's job it is of. It reads the cluster the deployment runs in: after the loss of that " +
			"cluster's region, there is nothing to read. To restore in another region from a replica of the state bucket, use " +
			"`flinkstate_restorable_snapshot`, which reads S3 alone and returns only a snapshot that restores from the replica.",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{Required: true, Description: "Namespace of the deployment.", Validators: namespaceValidators()},
			"deployment_name": schema.StringAttribute{Optional: true, Description: savepointOwner.doc("Name of the FlinkDeployment."),
				Validators: objectNameValidators()},
			"blue_green_deployment_name": schema.StringAttribute{Optional: true,
				Description: savepointOwner.doc("Name of a FlinkBlueGreenDeployment (e.g. flinkstate_blue_green_deployment.x.name): the " +
					"savepoints of its job, whichever child took them: the COMPLETED FlinkStateSnapshots of `<name>-blue` and `<name>-green` " +
					"(those of a child the operator deleted after a transition included), and the transition savepoint: the savepoint of " +
					"the running child the operator starts the other one from (BlueGreenUtils.triggerSavepoint, through Flink's REST API, " +
					"so no FlinkStateSnapshot), which it records only as the new child's job.initialSavepointPath. That record lasts until " +
					"a change the operator patches into the child in place (which rewrites the child with the template's own " +
					"job.initial_savepoint_path), so only the last transition's savepoint can be found, and not after such a change; " +
					"older ones stay in the savepoint directory, where flinkstate_restorable_snapshot finds them. Once the " +
					"FlinkBlueGreenDeployment is destroyed, its children's FlinkStateSnapshots (its final savepoint among them) are " +
					"still found."),
				Validators: objectNameValidators()},
			"source_deployment_name": schema.StringAttribute{Computed: true,
				Description: "The FlinkDeployment whose job the snapshot is of: deployment_name, or with blue_green_deployment_name the " +
					"child (`<name>-blue` or `<name>-green`) that took it; for a transition savepoint, the child that was running before " +
					"the transition, which the operator deletes once the new one is ready."},
			"type": schema.StringAttribute{Optional: true, Description: "`savepoint` (default), `checkpoint`, or `any` for both.",
				Validators: []validator.String{stringvalidator.OneOf("savepoint", "checkpoint", "any")}},
			"found":            schema.BoolAttribute{Computed: true, Description: "Whether a completed snapshot was found."},
			"name":             schema.StringAttribute{Computed: true, Description: "Name of the FlinkStateSnapshot (null for a transition savepoint)."},
			"path":             schema.StringAttribute{Computed: true, Description: "status.path: what job.initial_savepoint_path takes."},
			"result_timestamp": schema.StringAttribute{Computed: true, Description: "status.resultTimestamp (null for a transition savepoint)."},
			"taken_at":         schema.StringAttribute{Computed: true, Description: "When the snapshot was taken (RFC 3339), by the rule in picked_by."},
			"picked_by": schema.StringAttribute{Computed: true, Description: "The rule that dated the result: taken by the operator " +
				"(status.triggerTimestamp), recorded with already_exists (_metadata's time in S3), or a blue/green transition savepoint " +
				"(_metadata's time in S3: the operator records no time for it)."},
			"trigger_type": schema.StringAttribute{Computed: true, Description: "Who asked for the snapshot: the label snapshot.trigger-type, " +
				"`MANUAL` (a FlinkStateSnapshot someone created, flinkstate_snapshot's included), `UPGRADE` (the operator's savepoint before a " +
				"savepoint-mode upgrade), `PERIODIC`, or `UNKNOWN`; with blue_green_deployment_name also `BLUE_GREEN_TRANSITION`: the savepoint " +
				"the blue/green controller took of the running child to start the other one from (no FlinkStateSnapshot, so `name` is null)."},
			"operator_cleanup": schema.StringAttribute{Computed: true, Description: "What the operator's savepoint history cleanup does with " +
				"this snapshot under the deployment's configuration: `none` (it never deletes MANUAL snapshots, or cleanup is off; nor a " +
				"transition savepoint, which is in no FlinkStateSnapshot and no savepoint history), `delete` " +
				"(the FlinkStateSnapshot goes, the data stays) or `delete_and_dispose` (its spec.savepoint.disposeOnDelete is true: the " +
				"savepoint's data goes too, and a deployment pointed at its path can no longer restore). For a path you keep, take a " +
				"flinkstate_snapshot of your own with dispose_on_delete = false."},
			"contents": snapshotContentsAttribute("for the snapshot found (its _metadata read from S3, one request; null when none is found)"),
			"cleanup_after": schema.StringAttribute{Computed: true, Description: "When the cleanup deletes it at the earliest (RFC 3339): now " +
				"when it is due at the operator's next observe; otherwise, for a savepoint, its creation plus " +
				"kubernetes.operator.savepoint.history.max.age (24 h by default), once a newer PERIODIC or UPGRADE savepoint has completed. " +
				"Null when operator_cleanup is `none`, or when only the count can make it due (checkpoints)."},
		},
	}
	markdownDescriptions(&resp.Schema)
}

func (d *latestSavepointDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m latestSavepointModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := d.meta.kubeOrDiag(&resp.Diagnostics)
	if c == nil {
		return
	}
	typ := m.Type.ValueString()
	switch typ {
	case "":
		typ = "savepoint"
	case "any":
		typ = ""
	}
	ns := m.Namespace.ValueString()
	what := "the latest savepoint of " + ns + "/" + m.DeploymentName.ValueString()
	var cands []kube.SavepointInfo
	var err error
	if bg := m.BlueGreenName.ValueString(); bg != "" {
		what = "the latest savepoint of FlinkBlueGreenDeployment " + ns + "/" + bg
		cands, err = kube.BlueGreenSnapshots(ctx, c.Dynamic, ns, bg, typ)
	} else {
		cands, err = kube.CompletedSnapshots(ctx, c.Dynamic, ns, m.DeploymentName.ValueString(), typ)
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Finding", what, err.Error(), "")
		return
	}
	sp, err := kube.PickNewest(cands, func(path string) (time.Time, error) {
		a := d.meta.awsOrDiag(ctx, &resp.Diagnostics)
		if a == nil {
			return time.Time{}, fmt.Errorf("no AWS client")
		}
		return checkpoint.MetadataTime(ctx, a.S3, path)
	})
	if resp.Diagnostics.HasError() {
		return
	}
	if err != nil {
		addProblem(&resp.Diagnostics, "Finding", what, err.Error(), "")
		return
	}
	m.Found = types.BoolValue(sp != nil)
	m.Name, m.Path, m.ResultTimestamp, m.TakenAt, m.PickedBy = types.StringNull(), types.StringNull(), types.StringNull(), types.StringNull(), types.StringNull()
	m.TriggerType, m.OperatorCleanup, m.CleanupAfter = types.StringNull(), types.StringNull(), types.StringNull()
	m.SourceName = types.StringNull()
	m.Contents = snapshotContents(nil)
	if sp != nil {
		m.Name, m.Path, m.ResultTimestamp = optionalString(sp.Name), types.StringValue(sp.Path), optionalString(sp.ResultTimestamp)
		m.TakenAt, m.PickedBy = types.StringValue(sp.TakenAt.UTC().Format(time.RFC3339)), types.StringValue(sp.Rule)
		m.SourceName = types.StringValue(sp.Deployment)
		if sp.Transition {
			// Not a FlinkStateSnapshot, in no savepoint history: the
			// operator's cleanup never sees it (BlueGreenUtils.triggerSavepoint).
			m.TriggerType, m.OperatorCleanup = types.StringValue(kube.TriggerBlueGreenTransition), types.StringValue(kube.CleanupNone)
		} else if err := readCleanupFate(ctx, c, &m, sp.Deployment); err != nil {
			addProblem(&resp.Diagnostics, "Reading the savepoint cleanup of", what, err.Error(), "")
			return
		}
		a := d.meta.awsOrDiag(ctx, &resp.Diagnostics)
		if a == nil {
			return
		}
		m.Contents = d.meta.readContents(ctx, a, sp.Path, "Savepoint contents not read", what+" is "+sp.Path, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readCleanupFate sets trigger_type, operator_cleanup and cleanup_after of
// the snapshot m names, of the FlinkDeployment deployment (cleanupFate).
func readCleanupFate(ctx context.Context, c *kube.Client, m *latestSavepointModel, deployment string) error {
	trigger, fate, after, err := cleanupFate(ctx, c, m.Namespace.ValueString(), deployment, m.Name.ValueString())
	if err != nil {
		return err
	}
	if trigger != "" {
		m.TriggerType = types.StringValue(trigger)
	}
	m.OperatorCleanup = types.StringValue(fate)
	if !after.IsZero() {
		m.CleanupAfter = types.StringValue(after.UTC().Format(time.RFC3339))
	}
	return nil
}

// cleanupFate is what the operator's savepoint history cleanup does with
// FlinkStateSnapshot ns/snapshot of deployment ns/name (kube.CleanupFate),
// read from all the deployment's FlinkStateSnapshots and its
// flinkConfiguration (kube.CleanupPolicyOf; the operator's defaults when
// the deployment is gone), and the snapshot's trigger type ("" when it is
// not among them).
func cleanupFate(ctx context.Context, c *kube.Client, ns, name, snapshot string) (trigger, fate string, after time.Time, err error) {
	entries, err := kube.SnapshotEntries(ctx, c.Dynamic, ns, name)
	if err != nil {
		return "", "", time.Time{}, err
	}
	conf := map[string]string{}
	dep, err := c.Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		raw, _, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "flinkConfiguration")
		conf, _ = flinkdeploy.FlattenConfiguration(raw)
	case !notfound.Is(kube.NotFound("FlinkDeployment "+ns+"/"+name, err)):
		return "", "", time.Time{}, err
	}
	policy, err := kube.CleanupPolicyOf(conf)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("the FlinkDeployment's flinkConfiguration: %w", err)
	}
	for _, e := range entries {
		if e.Name == snapshot {
			trigger = e.Trigger
		}
	}
	fate, after = kube.CleanupFate(entries, snapshot, policy, time.Now())
	return trigger, fate, after, nil
}
