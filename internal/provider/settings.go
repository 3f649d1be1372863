package provider

import (
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// The attributes of flinkconf.Settings are built from the table: schema,
// description, validators and the conversion to flinkconf.Input.Values.
// The state block is a types.Object, so a setting added to the table
// needs no model field: its attribute comes from the table, and so does
// its value (settingValue, settingAttrValue).

// settingValidators are the validators of a table setting's attribute.
func settingStringValidators(s flinkconf.Setting) []validator.String {
	switch {
	case s.Kind == flinkconf.KindEnum:
		return []validator.String{stringvalidator.OneOf(s.Values...)}
	case s.Check != nil:
		return []validator.String{check("Invalid "+s.Label, s.CheckRule, s.Check)}
	case s.Kind == flinkconf.KindDuration:
		return []validator.String{durationCheck}
	}
	return nil
}

func settingInt64Validators(s flinkconf.Setting) []validator.Int64 {
	return []validator.Int64{int64validator.AtLeast(s.MinInt)}
}

// settingAttribute is a table setting's attribute in a resource schema.
func settingAttribute(s flinkconf.Setting) schema.Attribute {
	switch s.Kind {
	case flinkconf.KindInt:
		return schema.Int64Attribute{Optional: true, Description: s.Description, Validators: settingInt64Validators(s)}
	case flinkconf.KindBool:
		return schema.BoolAttribute{Optional: true, Description: s.Description}
	}
	return schema.StringAttribute{Optional: true, Description: s.Description, Validators: settingStringValidators(s)}
}

// settingDataAttribute is the same attribute in a data source schema.
func settingDataAttribute(s flinkconf.Setting) dschema.Attribute {
	switch s.Kind {
	case flinkconf.KindInt:
		return dschema.Int64Attribute{Optional: true, Description: s.Description, Validators: settingInt64Validators(s)}
	case flinkconf.KindBool:
		return dschema.BoolAttribute{Optional: true, Description: s.Description}
	}
	return dschema.StringAttribute{Optional: true, Description: s.Description, Validators: settingStringValidators(s)}
}

// settingType is the attribute's type.
func settingType(s flinkconf.Setting) attr.Type {
	switch s.Kind {
	case flinkconf.KindInt:
		return types.Int64Type
	case flinkconf.KindBool:
		return types.BoolType
	}
	return types.StringType
}

// settingValue is an attribute's value as flinkconf.Input.Values holds it
// ("" when null).
func settingValue(v attr.Value) string {
	switch x := v.(type) {
	case types.String:
		return x.ValueString()
	case types.Int64:
		if !x.IsNull() && !x.IsUnknown() {
			return strconv.FormatInt(x.ValueInt64(), 10)
		}
	case types.Bool:
		if !x.IsNull() && !x.IsUnknown() {
			return strconv.FormatBool(x.ValueBool())
		}
	}
	return ""
}

// settingAttrValue is the attribute value of a setting's value as parsed
// (flinkdeploy.Settings.Values): null when unset.
func settingAttrValue(s flinkconf.Setting, v string, set bool) attr.Value {
	switch s.Kind {
	case flinkconf.KindInt:
		if n, err := strconv.ParseInt(v, 10, 64); set && err == nil {
			return types.Int64Value(n)
		}
		return types.Int64Null()
	case flinkconf.KindBool:
		if b, err := strconv.ParseBool(v); set && err == nil {
			return types.BoolValue(b)
		}
		return types.BoolNull()
	}
	return optionalString(v)
}

// The state block's attributes that flinkconf derives from more than
// their own value (the table's are flinkconf.SettingsIn("state")).
var stateAttrDescriptions = map[string]string{
	"store_id":               "A flinkstate_state_store ID (bucket/prefix): sets checkpoint_dir, savepoint_dir and ha_dir to its checkpoints/, savepoints/ and ha/ directories.",
	"checkpoint_dir":         "execution.checkpointing.dir (s3://...). Overrides the store's.",
	"savepoint_dir":          "execution.checkpointing.savepoint-dir (s3://...). Overrides the store's.",
	"ha_dir":                 "high-availability.storageDir (s3://...). Overrides the store's.",
	"backend":                "state.backend.type: `rocksdb` (default), `hashmap` or `forst` (experimental in Flink 2.2).",
	"externalized_retention": "execution.checkpointing.externalized-checkpoint-retention: `RETAIN_ON_CANCELLATION`, `DELETE_ON_CANCELLATION` or `NO_EXTERNALIZED_CHECKPOINTS`. Default with upgrade_mode `last-state` or `savepoint`: `RETAIN_ON_CANCELLATION` (they resume from retained state; Flink's own default deletes checkpoints on cancellation).",
	"local_dir":              "Local working directory of RocksDB/ForSt, an emptyDir in the pod (default /opt/flink/state). Not a backup: durable state is only what the checkpoint directory holds.",
}

// stateSpecialValidators are the validators of those attributes.
var stateSpecialValidators = map[string][]validator.String{
	"store_id":               {storeIDCheck},
	"checkpoint_dir":         {s3DirCheck},
	"savepoint_dir":          {s3DirCheck},
	"ha_dir":                 {s3DirCheck},
	"backend":                {stringvalidator.OneOf(flinkconf.Backends...)},
	"externalized_retention": {stringvalidator.OneOf(flinkconf.Retentions...)},
	"local_dir":              {localDirCheck},
}

// stateBlockAttributes is the state block of flinkstate_deployment; dirs
// documents which directories it needs.
func stateBlockAttributes(dirs rootRule) map[string]schema.Attribute {
	out := map[string]schema.Attribute{}
	for name, desc := range stateAttrDescriptions {
		if name == "store_id" || name == "checkpoint_dir" {
			desc = dirs.doc(desc)
		}
		out[name] = schema.StringAttribute{Optional: true, Description: desc, Validators: stateSpecialValidators[name]}
	}
	for _, s := range flinkconf.SettingsIn("state") {
		out[s.Name()] = settingAttribute(s)
	}
	return out
}

// stateDataAttributes is the state block of the data source.
func stateDataAttributes() map[string]dschema.Attribute {
	out := map[string]dschema.Attribute{}
	for name, desc := range stateAttrDescriptions {
		out[name] = dschema.StringAttribute{Optional: true, Description: desc, Validators: stateSpecialValidators[name]}
	}
	for _, s := range flinkconf.SettingsIn("state") {
		out[s.Name()] = settingDataAttribute(s)
	}
	return out
}

// stateAttrTypes are the state block's attribute types.
var stateAttrTypes = func() map[string]attr.Type {
	out := map[string]attr.Type{}
	for name := range stateAttrDescriptions {
		out[name] = types.StringType
	}
	for _, s := range flinkconf.SettingsIn("state") {
		out[s.Name()] = settingType(s)
	}
	return out
}()

// stateBlock reads the state block (a types.Object; null when absent).
type stateBlock struct{ attrs map[string]attr.Value }

func newStateBlock(o types.Object) stateBlock {
	if o.IsNull() || o.IsUnknown() {
		return stateBlock{}
	}
	return stateBlock{attrs: o.Attributes()}
}

func (s stateBlock) str(name string) types.String {
	if v, ok := s.attrs[name].(types.String); ok {
		return v
	}
	return types.StringNull()
}

// stateUnknown tells whether any state input is still unknown at plan time.
func stateUnknown(o types.Object) bool {
	if o.IsUnknown() {
		return true
	}
	for _, v := range newStateBlock(o).attrs {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}

// flinkState turns the block into flinkconf.State (store directories first,
// explicit directories over them) and puts its table settings into values.
func flinkState(o types.Object, values map[string]string, diags *diag.Diagnostics, at path.Path) flinkconf.State {
	st := flinkconf.State{Backend: flinkconf.BackendRocksDB}
	s := newStateBlock(o)
	if s.attrs == nil {
		return st
	}
	if id := s.str("store_id").ValueString(); id != "" {
		store, err := store.Parse(id)
		if err != nil {
			diags.AddAttributeError(at.AtName("store_id"), "Invalid state store ID", err.Error())
		} else {
			st.CheckpointDir, st.SavepointDir, st.HADir = store.Dirs()
			st.StoreURI = store.URI()
		}
	}
	if v := s.str("checkpoint_dir").ValueString(); v != "" {
		st.CheckpointDir = v
	}
	if v := s.str("savepoint_dir").ValueString(); v != "" {
		st.SavepointDir = v
	}
	if v := s.str("ha_dir").ValueString(); v != "" {
		st.HADir = v
	}
	if v := s.str("backend").ValueString(); v != "" {
		st.Backend = v
	}
	st.ExternalizedRetention = s.str("externalized_retention").ValueString()
	st.LocalDir = s.str("local_dir").ValueString()
	for _, set := range flinkconf.SettingsIn("state") {
		if v := settingValue(s.attrs[set.Name()]); v != "" {
			values[set.Attr] = v
		}
	}
	return st
}

// stateObject is the state block of an imported object's settings.
func stateObject(storeID string, st flinkconf.State, values map[string]string, diags *diag.Diagnostics) types.Object {
	attrs := map[string]attr.Value{
		"store_id":               optionalString(storeID),
		"checkpoint_dir":         optionalString(st.CheckpointDir),
		"savepoint_dir":          optionalString(st.SavepointDir),
		"ha_dir":                 optionalString(st.HADir),
		"backend":                optionalString(st.Backend),
		"externalized_retention": optionalString(st.ExternalizedRetention),
		"local_dir":              optionalString(st.LocalDir),
	}
	for _, set := range flinkconf.SettingsIn("state") {
		v, ok := values[set.Attr]
		attrs[set.Name()] = settingAttrValue(set, v, ok)
	}
	o, d := types.ObjectValue(stateAttrTypes, attrs)
	diags.Append(d...)
	return o
}

// setting is the table's setting of attr (one the provider's schema has).
func setting(attr string) flinkconf.Setting {
	s, ok := flinkconf.SettingByAttr(attr)
	if !ok {
		panic("no flinkconf setting " + attr)
	}
	return s
}

// setValue puts a table setting's attribute value into values (unset
// when null).
func setValue(values map[string]string, attr string, v attr.Value) {
	if s := settingValue(v); s != "" {
		values[attr] = s
	}
}
