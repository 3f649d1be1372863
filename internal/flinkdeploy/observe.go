package flinkdeploy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// Recorded is what the state held of a deployment before a read of its
// live object (the zero value for an import, whose state holds only the
// object's namespace and name).
type Recorded struct {
	// FlinkVersion is the full Flink version last written (Parse's hint).
	FlinkVersion string
	// JobManager, TaskManager and Job: the configuration has the block. A
	// block it leaves out is not read (unless imported), so it never shows
	// as a diff.
	JobManager, TaskManager, Job bool
	// Replicas: job_manager.replicas is set. The operator may default
	// replicas: they are read only when configured.
	Replicas bool
	// Effective is effective_flink_configuration as recorded; Sensitive
	// is sensitive_flink_configuration.
	Effective, Sensitive map[string]string
}

// Observed is a live FlinkDeployment as the provider reads it (ReadLive):
// the fields it writes, the configuration it shows as written, and, after
// an import, the inputs the object stands for. Status, defaults and fields
// of other managers are never read, so they never show as a diff.
type Observed struct {
	Namespace, Name string
	// Spec is the object's spec (Parse) with the full Flink version. Its
	// JobManager, TaskManager and Job are nil when the block is not read:
	// the object has none, or the configuration leaves it out (Recorded);
	// the state then keeps what it had. FlinkConfiguration is the whole
	// live configuration.
	Spec Spec
	// EffectivePod is effective_pod_template: the live pod template as
	// canonical JSON ("" for none).
	EffectivePod string
	// Written is the configuration shown as written
	// (effective_flink_configuration without what the operator adds):
	// after an import the whole live configuration; else of the keys the
	// state recorded those the object holds, a value Flink reads the same
	// as the recorded one kept as recorded (flinkconf.Equivalent).
	Written map[string]string
	// Sensitive is sensitive_flink_configuration with the values as the
	// object has them, when one differs (nil: unchanged). A secret
	// changed outside Terraform shows as a change of the sensitive value.
	Sensitive map[string]string
	// Import is what an imported object stands for (nil: not imported, or
	// the import failed).
	Import *Imported
	// Problems are what the reading found, in order: warnings, and after
	// an error nothing more (Failed).
	Problems []Problem
}

// Imported is what an imported object's spec stands for: the provider's
// inputs, rebuilt from its flinkConfiguration (ParseConfiguration) and its
// pod template.
type Imported struct {
	Settings
	// Plain and Secret are Settings.Extra split: Secret the keys whose
	// values Flink treats as secrets (flinkconf.IsSensitiveKey:
	// GlobalConfiguration.isSensitive), for sensitive_flink_configuration;
	// nil when there are none.
	Plain, Secret map[string]string
	// ClaimMode is job.claim_mode ("": unset), TaskSlots
	// task_manager.task_slots (nil: unset).
	ClaimMode string
	TaskSlots *int64
	// S3Plugin is s3_plugin (ImportS3Plugin).
	S3Plugin string
	// PodTemplate is pod_template (nil: none): the object's pod template
	// without what the provider adds itself, or the whole template.
	PodTemplate *string
	// Input is the inputs these give (flinkconf.Input), as the provider's
	// model gives them once it holds them: the pod template and the
	// carry-over check are decided against it.
	Input flinkconf.Input
}

// Problem is something ReadLive found: an error, which fails the import of
// the object, or a warning about one attribute.
type Problem struct {
	Error bool
	// Attr is the (root) attribute a warning is about.
	Attr string
	// Summary is a warning's summary.
	Summary string
	// Detail is a warning's detail, or an error's cause; Advice is what
	// to do about an error.
	Detail, Advice string
}

// What names the object in messages ("FlinkDeployment ns/name").
func (o Observed) What() string { return Kind + " " + o.Namespace + "/" + o.Name }

// Failed tells whether the reading found an error.
func (o Observed) Failed() bool {
	return slices.ContainsFunc(o.Problems, func(p Problem) bool { return p.Error })
}

func (o *Observed) fail(cause, advice string) {
	o.Problems = append(o.Problems, Problem{Error: true, Detail: cause, Advice: advice})
}

func (o *Observed) warn(attr, summary, detail string) {
	o.Problems = append(o.Problems, Problem{Attr: attr, Summary: summary, Detail: detail})
}

// ReadLive reads a live FlinkDeployment: the fields the provider writes,
// and of flinkConfiguration only the keys it wrote (or, after an import,
// all of them, turned back into the inputs they stand for). was is what
// the state held; unwritten are the provider defaults an imported object
// lacked (AbsentDefaults).
func ReadLive(obj *unstructured.Unstructured, was Recorded, imported bool, unwritten []string) Observed {
	s := Parse(obj, was.FlinkVersion)
	o := Observed{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if imported && len(s.UnreadableConfig) > 0 {
		o.fail(fmt.Sprintf("spec.flinkConfiguration holds values a flat Flink configuration cannot hold for %s (null, or a list of maps): the "+
			"provider writes flinkConfiguration as key: string pairs and would drop them", strings.Join(s.UnreadableConfig, ", ")),
			"Write each as the string Flink parses (a list as \"a;b\"), e.g. with kubectl edit, then import again.")
		return o
	}
	if imported {
		v, ok := o.importFlinkVersion(obj, s.Image)
		if !ok {
			return o
		}
		s.FlinkVersion = v
	}
	if s.JobManager != nil && !was.JobManager && !imported {
		s.JobManager = nil
	}
	// The operator may default replicas: read them only when configured.
	if jm := s.JobManager; jm != nil && jm.Replicas != nil && was.JobManager && !was.Replicas {
		s.JobManager = &JobManager{Memory: jm.Memory, CPU: jm.CPU}
	}
	if s.TaskManager != nil && !was.TaskManager && !imported {
		s.TaskManager = nil
	}
	if s.Job != nil && !was.Job && !imported {
		s.Job = nil
	}
	if s.PodTemplate != nil {
		o.EffectivePod = CanonicalJSON(s.PodTemplate)
	}
	o.Spec = s
	if !imported {
		o.Written, o.Sensitive = readConfiguration(s.FlinkConfiguration, was)
		return o
	}
	o.Written = s.FlinkConfiguration
	imp, ok := o.importConfiguration(s.FlinkConfiguration)
	if !ok {
		return o
	}
	imp.S3Plugin = ImportS3Plugin(obj, s.FlinkVersion)
	if imp.S3Plugin == flinkconf.S3PluginImage {
		o.warn("s3_plugin", "The object does not enable the S3 plugin",
			o.What()+" has no "+flinkconf.PluginsEnv+" naming the S3 plugin on "+flinkconf.MainContainer+": its image brings "+
				"the plugin. s3_plugin was imported as \"image\", and while it stays so the provider writes no variable, so "+
				"adopting the job changes nothing. Removing it (or s3_plugin = \"provider\") adds the variable, a pod template "+
				"change the operator applies as an upgrade (a restart with the job's upgrade mode); the plan says so.")
	}
	in, inOK := imp.input(s, unwritten)
	imp.Input = in
	// The whole pod template: the provider writes spec.podTemplate as
	// one value, and the API server replaces its lists whole (the CRD
	// declares no list keys), so a part left out would be deleted.
	imp.PodTemplate = importedPodTemplate(s.PodTemplate, in, inOK)
	if inOK && !o.checkCarriedOver(s.FlinkConfiguration, in) {
		return o
	}
	o.Import = &imp
	return o
}

// readConfiguration reads a managed object's flinkConfiguration (live)
// back: the sensitive values as the object has them (nil when none
// differs), and of the keys the state recorded (effective_flink_configuration)
// those the object holds, which it returns.
func readConfiguration(live map[string]string, was Recorded) (effective, sensitive map[string]string) {
	effective = map[string]string{}
	sens := maps.Clone(was.Sensitive)
	changed := false
	for k, want := range sens {
		// A secret changed outside Terraform shows as a change of the
		// sensitive value (the provider masks it either way).
		if v, _, ok := flinkconf.Lookup(live, k); ok && v != want {
			sens[k], changed = v, true
		}
	}
	if changed {
		sensitive = sens
	}
	for k, rec := range was.Effective {
		// Under the key or a deprecated one; a value Flink reads the
		// same as the recorded one is no drift (flinkconf.Equivalent).
		if v, _, ok := flinkconf.Lookup(live, k); ok {
			if flinkconf.Equivalent(k, v, rec) {
				v = rec
			}
			effective[k] = v
		}
	}
	return effective, sensitive
}

// importFlinkVersion is flink_version of an imported object
// (ImportVersion), with a warning when its patch is assumed; false (an
// error) for a version the provider does not support.
func (o *Observed) importFlinkVersion(obj *unstructured.Unstructured, image string) (string, bool) {
	v, guessed, err := ImportVersion(obj)
	if err != nil {
		o.fail(err.Error(), "Upgrade the job to a supported Flink version before importing it.")
		return "", false
	}
	if guessed {
		enum, _, _ := unstructured.NestedString(obj.Object, "spec", "flinkVersion")
		o.warn("flink_version", "Flink patch version assumed",
			fmt.Sprintf("%s says flinkVersion %s and image %q, neither of which names the Flink patch version; flink_version "+
				"was imported as %s, the newest release of that minor the provider knows. The patch names the S3 plugin jar the "+
				"provider enables (flink-s3-fs-hadoop-<version>.jar, in the image's /opt/flink/opt): set flink_version to the "+
				"image's version before the first apply.", o.What(), enum, image, v))
	}
	return v, true
}

// importConfiguration is identity, high_availability, task slots, the
// claim mode, the state block and the extra keys of an imported object's
// configuration (for its job's upgrade mode); false (an error) when the
// object holds settings the provider cannot manage.
func (o *Observed) importConfiguration(cfg map[string]string) (Imported, bool) {
	upgradeMode := ""
	if o.Spec.Job != nil {
		upgradeMode = o.Spec.Job.UpgradeMode
	}
	imp := Imported{Settings: ParseConfiguration(cfg, upgradeMode)}
	if len(imp.Unrepresentable) > 0 {
		o.fail("spec.flinkConfiguration: "+strings.Join(imp.Unrepresentable, "; "),
			"Change these settings on the object (or keep managing it with the tool that wrote it); nothing was imported.")
		return imp, false
	}
	if imp.Identity == "" {
		o.warn("identity", "No S3 credentials class on the object",
			o.What()+" sets no fs.s3a.aws.credentials.provider: its pods get AWS credentials another way (a class configured "+
				"outside the object, or Hadoop S3A's default chain: environment variables, container credentials such as EKS Pod "+
				"Identity's, the node's instance role). identity was imported unset, and while it stays unset the provider "+
				"writes no credentials class, so adopting the job changes nothing. Setting identity (\"irsa\" or "+
				"\"pod_identity\") later writes the class, a spec change the operator applies as an upgrade (a restart with "+
				"the job's upgrade mode); the plan says so.")
	}
	if o.Spec.Job != nil {
		imp.ClaimMode = imp.Values[flinkconf.AttrClaimMode]
	}
	// Secrets (GlobalConfiguration.isSensitive) go to the sensitive map.
	for k, v := range imp.Extra {
		if flinkconf.IsSensitiveKey(k) {
			if imp.Secret == nil {
				imp.Secret = map[string]string{}
			}
			imp.Secret[k] = v
		} else {
			if imp.Plain == nil {
				imp.Plain = map[string]string{}
			}
			imp.Plain[k] = v
		}
	}
	if len(imp.Secret) > 0 {
		keys := slices.Sorted(maps.Keys(imp.Secret))
		o.warn("sensitive_flink_configuration", "Secrets imported as sensitive",
			o.What()+" holds values Flink treats as secrets ("+strings.Join(keys, ", ")+"): they were imported into "+
				"sensitive_flink_configuration, which plans never show. Generated configuration writes it as null: set it "+
				"(e.g. from a variable marked sensitive) before applying, or the apply removes these keys.")
	}
	if n, err := strconv.ParseInt(imp.Values[flinkconf.AttrTaskSlots], 10, 64); err == nil && o.Spec.TaskManager != nil {
		imp.TaskSlots = &n
	}
	return imp, true
}

// input is the flinkconf.Input of the imported spec s, as the provider's
// model gives it once it holds the imported attributes (state store
// directories first, explicit directories over them, rocksdb unless the
// backend is set or unwritten); ok is false when the store ID does not
// parse.
func (imp Imported) input(s Spec, unwritten []string) (flinkconf.Input, bool) {
	in := flinkconf.Input{
		FlinkVersion:     s.FlinkVersion,
		Identity:         imp.Identity,
		S3Plugin:         imp.S3Plugin,
		Image:            s.Image,
		HighAvailability: imp.HighAvailability,
		Values:           map[string]string{},
		Extra:            map[string]string{},
		State:            flinkconf.State{Backend: flinkconf.BackendRocksDB},
	}
	maps.Copy(in.Extra, imp.Extra)
	ok := true
	if imp.StoreID != "" {
		if sto, err := store.Parse(imp.StoreID); err == nil {
			in.State.CheckpointDir, in.State.SavepointDir, in.State.HADir = sto.Dirs()
			in.State.StoreURI = sto.URI()
		} else {
			ok = false
		}
	}
	st := imp.State
	for _, d := range []struct {
		to *string
		v  string
	}{
		{&in.State.CheckpointDir, st.CheckpointDir}, {&in.State.SavepointDir, st.SavepointDir}, {&in.State.HADir, st.HADir},
		{&in.State.Backend, st.Backend},
	} {
		if d.v != "" {
			*d.to = d.v
		}
	}
	in.State.ExternalizedRetention, in.State.LocalDir = st.ExternalizedRetention, st.LocalDir
	for _, set := range flinkconf.SettingsIn("state") {
		if v := imp.Values[set.Attr]; v != "" {
			in.Values[set.Attr] = v
		}
	}
	if len(unwritten) > 0 {
		in.Unwritten = map[string]bool{}
		for _, k := range unwritten {
			in.Unwritten[k] = true
		}
		if in.Unwritten[flinkconf.AbsentBackend] && st.Backend == "" {
			in.State.Backend = "" // Flink's default, as the object had it
		}
	}
	if j := s.Job; j != nil {
		in.HasJob, in.UpgradeMode, in.JarURI, in.RestorePath = true, j.UpgradeMode, j.JarURI, j.InitialSavepointPath
		if p, ok := j.Fields["parallelism"].(int64); ok {
			in.Parallelism = &p
		}
		if imp.ClaimMode != "" {
			in.Values[flinkconf.AttrClaimMode] = imp.ClaimMode
		}
	}
	if tm := s.TaskManager; tm != nil {
		if imp.TaskSlots != nil {
			in.Values[flinkconf.AttrTaskSlots] = strconv.FormatInt(*imp.TaskSlots, 10)
		}
		in.TaskManagerMemory = tm.Memory
	}
	if jm := s.JobManager; jm != nil {
		in.JobManagerMemory = jm.Memory
	}
	return in, ok
}

// importedPodTemplate is pod_template for an imported object: its pod
// template without what the provider adds itself (flinkconf.StripAdditions),
// when adding it back gives the same template; else the whole template.
func importedPodTemplate(live map[string]any, in flinkconf.Input, inOK bool) *string {
	if live == nil {
		return nil
	}
	whole := CanonicalJSON(live)
	if !inOK {
		return &whole
	}
	stripped := flinkconf.StripAdditions(live, in)
	user := ""
	if stripped != nil {
		user = CanonicalJSON(stripped)
	}
	if merged, fs := flinkconf.PodTemplate(user, in); len(fs) == 0 && merged != nil && CanonicalJSON(merged) == whole {
		if user == "" {
			return nil
		}
		return &user
	}
	return &whole
}

// checkCarriedOver is the import's round trip: every managed key of the
// object (under any name Flink reads) must come back from the imported
// attributes as the object has it (flinkconf.Derive, spelled as the object
// spells it: flinkconf.Respell). A key that would be removed or changed
// fails the import, naming it, instead of being dropped by the first apply.
func (o *Observed) checkCarriedOver(live map[string]string, in flinkconf.Input) bool {
	derived, _ := flinkconf.Derive(in)
	again := flinkconf.Respell(derived, live)
	var lost []string
	for _, k := range slices.Sorted(maps.Keys(live)) {
		if attr, _ := flinkconf.ManagedAttr(k); attr == "" || again[k] == live[k] {
			continue
		}
		if w, ok := again[flinkconf.CanonicalKey(k)]; ok {
			lost = append(lost, fmt.Sprintf("%s = %q would become %s = %q", k, live[k], flinkconf.CanonicalKey(k), w))
		} else {
			lost = append(lost, fmt.Sprintf("%s = %q would be removed", k, live[k]))
		}
	}
	if len(lost) == 0 {
		return true
	}
	o.fail("spec.flinkConfiguration holds settings the provider manages but cannot carry over as "+
		"they are: "+strings.Join(lost, "; "),
		"Write them on the object as the provider does (the attribute each key belongs to is in the flinkstate_deployment docs), "+
			"or remove the ones Flink does not need; nothing was imported.")
	return false
}
