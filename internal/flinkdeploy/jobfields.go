package flinkdeploy

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// JobKind is the type of a JobField's value in Job.Fields.
type JobKind int

// The kinds of JobFields, with the Go type Job.Fields holds.
const (
	JobString JobKind = iota // string; "" is unset
	JobInt                   // int64
	JobBool                  // bool
	// JobStrings is a []string; an empty list is not written: the operator
	// reads none as empty (JobSpec.args defaults to new String[0],
	// flink-kubernetes-operator-api release-1.15.0 JobSpec.java).
	JobStrings
)

// JobField is a field of spec.job the provider passes through as it is:
// one attribute of the job block, its value written to spec.job and read
// back on import, with nothing derived from it here. Adding one is an
// entry in JobFields and a field of the provider's job model; the schema
// attribute, Render, Parse, the import and SpecFields come from the entry.
// Fields with logic of their own (jarURI, upgradeMode, state,
// initialSavepointPath, savepointRedeployNonce) are Job's named fields.
type JobField struct {
	Attr string // the attribute in the job block, e.g. parallelism
	Key  string // the spec.job field, e.g. parallelism
	Kind JobKind
	// Restarts: the operator's spec diff classifies a change UPGRADE (a
	// job restart), as for SpecField.
	Restarts    bool
	Description string
	NotBlank    bool  // JobString: a blank value is refused
	MinInt      int64 // JobInt: the smallest value accepted
}

// JobFields are the pass-through fields of spec.job (flink-kubernetes-operator-api
// release-1.15.0 JobSpec.java: the field names, and each field's @SpecDiff;
// unannotated fields are UPGRADE).
var JobFields = []JobField{
	{Attr: "entry_class", Key: "entryClass", Kind: JobString, Restarts: true, Description: "Main class.", NotBlank: true},
	{Attr: "args", Key: "args", Kind: JobStrings, Restarts: true, Description: "Program arguments."},
	// JobSpec.parallelism is an int that defaults to 0, which
	// DefaultValidator.validateJobSpec refuses ("Job parallelism must be
	// larger than 0"). @SpecDiff(SCALE) only in standalone mode, and a
	// standalone scale without the reactive scheduler falls back to an
	// upgrade (AbstractFlinkResourceReconciler.reconcile,
	// StandaloneFlinkService.scale): an upgrade here.
	{Attr: "parallelism", Key: "parallelism", Kind: JobInt, Restarts: true, MinInt: 1,
		Description: "Parallelism of the job. Must be set (at least 1): the operator refuses a job without it (DefaultValidator: \"Job parallelism must be larger than 0\")."},
	// @SpecDiff(IGNORE).
	{Attr: "allow_non_restored_state", Key: "allowNonRestoredState", Kind: JobBool, Restarts: false,
		Description: "Allow state the new job cannot map to be skipped on restore."},
}

// JobFieldByAttr is the entry of attr.
func JobFieldByAttr(attr string) (JobField, bool) {
	for _, f := range JobFields {
		if f.Attr == attr {
			return f, true
		}
	}
	return JobField{}, false
}

// SetField puts v, of f's JobKind Go type, into j.Fields when it is set
// (not nil, "" nor an empty list).
func (j *Job) SetField(f JobField, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	case nil:
		return
	}
	if j.Fields == nil {
		j.Fields = map[string]any{}
	}
	j.Fields[f.Key] = v
}

// render writes the field's value of j into o, the spec.job object.
func (f JobField) render(j Job, o map[string]any) {
	switch v := j.Fields[f.Key].(type) {
	case string:
		setString(o, f.Key, v)
	case int64, bool:
		o[f.Key] = v
	case []string:
		if len(v) > 0 {
			l := make([]any, len(v))
			for i, a := range v {
				l[i] = a
			}
			o[f.Key] = l
		}
	}
}

// parse reads the field from a live object into j.
func (f JobField) parse(obj *unstructured.Unstructured, j *Job) {
	path := []string{"spec", "job", f.Key}
	switch f.Kind {
	case JobString:
		v, _, _ := unstructured.NestedString(obj.Object, path...)
		j.SetField(f, v)
	case JobInt:
		if n, ok := number(obj, "job", f.Key); ok {
			j.SetField(f, int64(n))
		}
	case JobBool:
		if b, ok, _ := unstructured.NestedBool(obj.Object, path...); ok {
			j.SetField(f, b)
		}
	case JobStrings:
		l, _, _ := unstructured.NestedStringSlice(obj.Object, path...)
		j.SetField(f, l)
	}
}

// changed compares the field of two jobs.
func (f JobField) changed(a, b Job) bool {
	x, y := a.Fields[f.Key], b.Fields[f.Key]
	if l, ok := x.([]string); ok {
		m, _ := y.([]string)
		return strings.Join(l, "\x00") != strings.Join(m, "\x00") || len(l) != len(m)
	}
	if m, ok := y.([]string); ok {
		return len(m) > 0
	}
	return x != y
}

// specField is the field's SpecFields entry.
func (f JobField) specField() SpecField {
	return SpecField{"job." + f.Attr, "job." + f.Key, f.Restarts, jobChanged(f.changed)}
}
