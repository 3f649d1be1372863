package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// stateBlockModel is the `state` block, shared by flinkstate_deployment and
// the flinkstate_flink_configuration data source.
type stateBlockModel struct {
	StoreID               types.String `tfsdk:"store_id"`
	CheckpointDir         types.String `tfsdk:"checkpoint_dir"`
	SavepointDir          types.String `tfsdk:"savepoint_dir"`
	HADir                 types.String `tfsdk:"ha_dir"`
	Backend               types.String `tfsdk:"backend"`
	Incremental           types.Bool   `tfsdk:"incremental"`
	CheckpointInterval    types.String `tfsdk:"checkpoint_interval"`
	MinPause              types.String `tfsdk:"min_pause"`
	Timeout               types.String `tfsdk:"timeout"`
	Mode                  types.String `tfsdk:"mode"`
	NumRetained           types.Int64  `tfsdk:"num_retained"`
	ExternalizedRetention types.String `tfsdk:"externalized_retention"`
	LocalDir              types.String `tfsdk:"local_dir"`
}

// stateAttrDescriptions documents the state block once for both schemas.
var stateAttrDescriptions = map[string]string{
	"store_id":               "A flinkstate_state_store ID (bucket/prefix): sets checkpoint_dir, savepoint_dir and ha_dir to its checkpoints/, savepoints/ and ha/ directories.",
	"checkpoint_dir":         "execution.checkpointing.dir (s3://...). Overrides the store's.",
	"savepoint_dir":          "execution.checkpointing.savepoint-dir (s3://...). Overrides the store's.",
	"ha_dir":                 "high-availability.storageDir (s3://...). Overrides the store's.",
	"backend":                "state.backend.type: `rocksdb` (default), `hashmap` or `forst` (experimental in Flink 2.2).",
	"incremental":            "execution.checkpointing.incremental. Incremental checkpoints share files: restoring needs every file a checkpoint references.",
	"checkpoint_interval":    "execution.checkpointing.interval, e.g. `60s`. Application code may override it.",
	"min_pause":              "execution.checkpointing.min-pause, e.g. `30s`.",
	"timeout":                "execution.checkpointing.timeout, e.g. `10 min`.",
	"mode":                   "execution.checkpointing.mode: `EXACTLY_ONCE` or `AT_LEAST_ONCE`.",
	"num_retained":           "execution.checkpointing.num-retained: completed checkpoints kept.",
	"externalized_retention": "execution.checkpointing.externalized-checkpoint-retention: `RETAIN_ON_CANCELLATION`, `DELETE_ON_CANCELLATION` or `NO_EXTERNALIZED_CHECKPOINTS`. Default with upgrade_mode `last-state` or `savepoint`: `RETAIN_ON_CANCELLATION` (they resume from retained state; Flink's own default deletes checkpoints on cancellation).",
	"local_dir":              "Local working directory of RocksDB/ForSt, an emptyDir in the pod (default /opt/flink/state). Not a backup: durable state is only what the checkpoint directory holds.",
}

// stateUnknown tells whether any state input is still unknown at plan time.
func (s *stateBlockModel) unknown() bool {
	if s == nil {
		return false
	}
	return anyUnknown(s.StoreID, s.CheckpointDir, s.SavepointDir, s.HADir, s.Backend, s.Incremental, s.CheckpointInterval,
		s.MinPause, s.Timeout, s.Mode, s.NumRetained, s.ExternalizedRetention, s.LocalDir)
}

// flinkState turns the block into flinkconf.State (store directories first,
// explicit directories over them).
func (s *stateBlockModel) flinkState(diags *diag.Diagnostics, at path.Path) flinkconf.State {
	st := flinkconf.State{Backend: "rocksdb"}
	if s == nil {
		return st
	}
	if id := s.StoreID.ValueString(); id != "" {
		store, err := store.Parse(id)
		if err != nil {
			diags.AddAttributeError(at.AtName("store_id"), "Invalid state store ID", err.Error())
		} else {
			st.CheckpointDir, st.SavepointDir, st.HADir = store.Dirs()
			st.StoreURI = store.URI()
		}
	}
	if v := s.CheckpointDir.ValueString(); v != "" {
		st.CheckpointDir = v
	}
	if v := s.SavepointDir.ValueString(); v != "" {
		st.SavepointDir = v
	}
	if v := s.HADir.ValueString(); v != "" {
		st.HADir = v
	}
	if v := s.Backend.ValueString(); v != "" {
		st.Backend = v
	}
	if !s.Incremental.IsNull() {
		v := s.Incremental.ValueBool()
		st.Incremental = &v
	}
	if !s.NumRetained.IsNull() {
		v := s.NumRetained.ValueInt64()
		st.NumRetained = &v
	}
	st.CheckpointInterval = s.CheckpointInterval.ValueString()
	st.MinPause = s.MinPause.ValueString()
	st.Timeout = s.Timeout.ValueString()
	st.Mode = s.Mode.ValueString()
	st.ExternalizedRetention = s.ExternalizedRetention.ValueString()
	st.LocalDir = s.LocalDir.ValueString()
	return st
}
