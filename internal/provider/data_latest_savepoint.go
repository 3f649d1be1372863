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

var _ datasource.DataSourceWithConfigure = (*latestSavepointDataSource)(nil)

func newLatestSavepointDataSource() datasource.DataSource { return &latestSavepointDataSource{} }

type latestSavepointModel struct {
	Namespace       types.String `tfsdk:"namespace"`
	DeploymentName  types.String `tfsdk:"deployment_name"`
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
			"`picked_by` says which rule dated the result. It reads the cluster the deployment runs in: after the loss of that " +
			"cluster's region, there is nothing to read. To restore in another region from a replica of the state bucket, use " +
			"`flinkstate_restorable_snapshot`, which reads S3 alone and returns only a snapshot that restores from the replica.",
		Attributes: map[string]schema.Attribute{
			"namespace":       schema.StringAttribute{Required: true, Description: "Namespace of the deployment.", Validators: namespaceValidators()},
			"deployment_name": schema.StringAttribute{Required: true, Description: "Name of the FlinkDeployment.", Validators: objectNameValidators()},
			"type": schema.StringAttribute{Optional: true, Description: "`savepoint` (default), `checkpoint`, or `any` for both.",
				Validators: []validator.String{stringvalidator.OneOf("savepoint", "checkpoint", "any")}},
			"found":            schema.BoolAttribute{Computed: true, Description: "Whether a completed snapshot was found."},
			"name":             schema.StringAttribute{Computed: true, Description: "Name of the FlinkStateSnapshot."},
			"path":             schema.StringAttribute{Computed: true, Description: "status.path: what job.initial_savepoint_path takes."},
			"result_timestamp": schema.StringAttribute{Computed: true, Description: "status.resultTimestamp."},
			"taken_at":         schema.StringAttribute{Computed: true, Description: "When the snapshot was taken (RFC 3339), by the rule in picked_by."},
			"picked_by":        schema.StringAttribute{Computed: true, Description: "The rule that dated the result: taken by the operator (status.triggerTimestamp) or recorded with already_exists (_metadata's time in S3)."},
			"trigger_type": schema.StringAttribute{Computed: true, Description: "Who asked for the snapshot: the label snapshot.trigger-type, " +
				"`MANUAL` (a FlinkStateSnapshot someone created, flinkstate_snapshot's included), `UPGRADE` (the operator's savepoint before a " +
				"savepoint-mode upgrade), `PERIODIC`, or `UNKNOWN`."},
			"operator_cleanup": schema.StringAttribute{Computed: true, Description: "What the operator's savepoint history cleanup does with " +
				"this snapshot under the deployment's configuration: `none` (it never deletes MANUAL snapshots, or cleanup is off), `delete` " +
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
	what := "the latest savepoint of " + m.Namespace.ValueString() + "/" + m.DeploymentName.ValueString()
	cands, err := kube.CompletedSnapshots(ctx, c.Dynamic, m.Namespace.ValueString(), m.DeploymentName.ValueString(), typ)
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
	m.Contents = snapshotContents(nil)
	if sp != nil {
		m.Name, m.Path, m.ResultTimestamp = types.StringValue(sp.Name), types.StringValue(sp.Path), optionalString(sp.ResultTimestamp)
		m.TakenAt, m.PickedBy = types.StringValue(sp.TakenAt.UTC().Format(time.RFC3339)), types.StringValue(sp.Rule)
		if err := readCleanupFate(ctx, c, &m); err != nil {
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
// the snapshot m names (cleanupFate).
func readCleanupFate(ctx context.Context, c *kube.Client, m *latestSavepointModel) error {
	trigger, fate, after, err := cleanupFate(ctx, c, m.Namespace.ValueString(), m.DeploymentName.ValueString(), m.Name.ValueString())
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
