package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// What a snapshot's _metadata says about the job it restores (issue 44):
// the facts the restore pre-flight reads, for a user's precondition.
var (
	snapshotOperatorType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"id": types.StringType, "uid": types.StringType, "name": types.StringType,
		"parallelism": types.Int64Type, "max_parallelism": types.Int64Type, "keyed_state": types.BoolType,
	}}
	snapshotContentsType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"metadata_version": types.Int64Type, "format": types.StringType, "keyed_state_kind": types.StringType,
		"operators": types.ListType{ElemType: snapshotOperatorType},
	}}
)

// contentsField is one attribute of contents (or of one of its
// operators): both the data sources' and flinkstate_snapshot's schemas are
// built from these, so they say the same.
type contentsField struct {
	name, kind, description string // kind: "string", "int" or "bool"
}

const contentsDescription = "What the snapshot's `_metadata` records (Flink's own format, read by the provider), %s: what Flink " +
	"checks when a job restores it. A restore needs a parallelism of at most each operator's `max_parallelism`, the same " +
	"`pipeline.max-parallelism` when one is set, and the same state backend unless the snapshot is a CANONICAL savepoint."

var (
	contentsFields = []contentsField{
		{"metadata_version", "int", "The `_metadata` format version (Flink 2.1 and 2.2 write 6; Flink 1.20 reads up to 4, 2.0 up to 5: MetadataSerializers)."},
		{"format", "string", "`checkpoint`, `CANONICAL savepoint` or `NATIVE savepoint` (its CheckpointProperties); null when a version 2 or 3 file does not record it."},
		{"keyed_state_kind", "string", "The kind of keyed state, from its handle classes: `incremental` (RocksDB's or ForSt's own files), `full` " +
			"(a hashmap checkpoint, or RocksDB's without incremental checkpoints), `canonical` (a CANONICAL savepoint), " +
			"`changelog`, `mixed`, or `none`."},
	}
	operatorsDescription = "The operators with their state, in file order."
	operatorFields       = []contentsField{
		{"id", "string", "The OperatorID (hexadecimal), as Flink's messages print it."},
		{"uid", "string", "The operator's `uid()`; null when it has none (its ID is generated from the job graph, and changes with it)."},
		{"name", "string", "The operator's name; null when not recorded."},
		{"parallelism", "int", "The parallelism it ran with."},
		{"max_parallelism", "int", "Its max parallelism: the number of key groups of its keyed state, which a restore cannot raise."},
		{"keyed_state", "bool", "Whether it holds keyed state."},
	}
)

// snapshotContentsAttribute is the data sources' schema of contents; read
// says when it is set.
func snapshotContentsAttribute(read string) schema.SingleNestedAttribute {
	attrs := func(fs []contentsField) map[string]schema.Attribute {
		out := map[string]schema.Attribute{}
		for _, f := range fs {
			switch f.kind {
			case "int":
				out[f.name] = schema.Int64Attribute{Computed: true, Description: f.description}
			case "bool":
				out[f.name] = schema.BoolAttribute{Computed: true, Description: f.description}
			default:
				out[f.name] = schema.StringAttribute{Computed: true, Description: f.description}
			}
		}
		return out
	}
	top := attrs(contentsFields)
	top["operators"] = schema.ListNestedAttribute{Computed: true, Description: operatorsDescription,
		NestedObject: schema.NestedAttributeObject{Attributes: attrs(operatorFields)}}
	return schema.SingleNestedAttribute{Computed: true, Description: fmt.Sprintf(contentsDescription, read), Attributes: top}
}

// snapshotContentsResourceAttribute is the same for flinkstate_snapshot.
func snapshotContentsResourceAttribute(read string) rschema.SingleNestedAttribute {
	attrs := func(fs []contentsField) map[string]rschema.Attribute {
		out := map[string]rschema.Attribute{}
		for _, f := range fs {
			switch f.kind {
			case "int":
				out[f.name] = rschema.Int64Attribute{Computed: true, Description: f.description}
			case "bool":
				out[f.name] = rschema.BoolAttribute{Computed: true, Description: f.description}
			default:
				out[f.name] = rschema.StringAttribute{Computed: true, Description: f.description}
			}
		}
		return out
	}
	top := attrs(contentsFields)
	top["operators"] = rschema.ListNestedAttribute{Computed: true, Description: operatorsDescription,
		NestedObject: rschema.NestedAttributeObject{Attributes: attrs(operatorFields)}}
	return rschema.SingleNestedAttribute{Computed: true, Description: fmt.Sprintf(contentsDescription, read), Attributes: top,
		PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()}}
}

func nullIfEmpty(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// snapshotContents is contents for a read _metadata; null for nil.
func snapshotContents(m *checkpoint.Metadata) types.Object {
	if m == nil {
		return types.ObjectNull(snapshotContentsType.AttrTypes)
	}
	ops := make([]attr.Value, 0, len(m.Operators))
	for _, op := range m.Operators {
		ops = append(ops, types.ObjectValueMust(snapshotOperatorType.AttrTypes, map[string]attr.Value{
			"id": types.StringValue(op.ID), "uid": nullIfEmpty(op.UID), "name": nullIfEmpty(op.Name),
			"parallelism": types.Int64Value(int64(op.Parallelism)), "max_parallelism": types.Int64Value(int64(op.MaxParallelism)),
			"keyed_state": types.BoolValue(op.HasKeyedState()),
		}))
	}
	return types.ObjectValueMust(snapshotContentsType.AttrTypes, map[string]attr.Value{
		"metadata_version": types.Int64Value(int64(m.Version)),
		"format":           nullIfEmpty(preflight.Format(m)),
		"keyed_state_kind": types.StringValue(preflight.KeyedStateKind(m)),
		"operators":        types.ListValueMust(snapshotOperatorType, ops),
	})
}

// readContents is contents for the snapshot at path, its _metadata read
// with a's S3 client (one request, within awsReadBound). A read that fails
// is null with a warning (summary; subject names the snapshot and its
// path): the snapshot is still what the operator recorded, only what it
// holds is unknown, and a restore from it would fail the same way.
func (m *meta) readContents(ctx context.Context, a *awsclient.Clients, path, summary, subject string, diags *diag.Diagnostics) types.Object {
	actx, cancel := m.boundAWS(ctx, awsReadBound)
	defer cancel()
	md, err := checkpoint.ReadMetadataAt(actx, a.S3, path)
	if err != nil {
		diags.AddWarning(summary, fmt.Sprintf("%s, whose _metadata could not be read (%s): contents is null. A job restoring from it "+
			"would need that file.", subject, awsErr(actx, err)))
		return snapshotContents(nil)
	}
	return snapshotContents(md)
}
