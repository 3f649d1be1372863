package flinkdeploy

import (
	"encoding/json"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// Want is a deployment as its configuration asks for it, converted once
// from the provider's model (the adapter's expand): the inputs of the
// configuration it writes and of its pod template, and the spec fields it
// writes as they are. Derive computes, once per operation, what follows
// from it (the written, operator-added and effective configurations, the
// effective pod template); Render the object to write.
type Want struct {
	Namespace, Name string
	// NameUnknown: the namespace or name is unknown (at plan), and with it
	// what the operator adds (it names the cluster: flinkconf.OperatorAdded).
	NameUnknown bool
	// Input is what flinkconf derives the configuration from.
	Input flinkconf.Input
	// PodTemplate is pod_template as written ("": none); PodUnknown: it
	// is unknown (at plan).
	PodTemplate string
	PodUnknown  bool
	// Sensitive is sensitive_flink_configuration: its keys are shown
	// masked (flinkconf.SensitivePlaceholder), its values put back where
	// a stored configuration shows the mask (Written).
	Sensitive map[string]string
	// Spec is the spec's fields the provider writes as they are (all but
	// flinkConfiguration and podTemplate, which Derive computes); nil while
	// one of them is unknown (at plan).
	Spec *Spec
	// Desired is the deployment as the operator's rules read it, without
	// its Spec.
	Desired Desired
}

// Derived is what a Want gives (Want.Derive).
type Derived struct {
	// Config is the configuration derived (flinkconf.Derive), spelled as
	// the prior configuration spells it (flinkconf.Respell).
	Config map[string]string
	// Written is the flinkConfiguration the provider writes: Config less
	// the keys the operator adds with the same value (which a stored
	// effective configuration cannot tell apart: WrittenConfig).
	Written map[string]string
	// Added is what the operator adds (flinkconf.OperatorAdded), shown
	// but never written; Effective is what the job runs with: Added and
	// Written, sensitive values masked. Both nil while the name is unknown.
	Added, Effective map[string]string
	// PodJSON is the effective pod template (flinkconf.PodTemplate) as
	// canonical JSON ("": none, or unknown: Want.PodUnknown).
	PodJSON string
	// ConfigFindings are flinkconf.Derive's, PodFindings flinkconf.PodTemplate's.
	ConfigFindings, PodFindings []flinkconf.Finding
}

// Derive computes the configuration and the pod template w writes, spelled
// as prior (the configuration the provider last wrote, WrittenConfig) or,
// without one, as live (the live object's spec.flinkConfiguration, nil:
// none): an adopted object's deprecated keys and equivalent values are no
// change, and the apply writes exactly what the plan showed.
func (w Want) Derive(prior map[string]string, live any) Derived {
	cfg, fs := flinkconf.Derive(w.Input)
	d := Derived{ConfigFindings: fs}
	switch {
	case len(prior) > 0:
		cfg = flinkconf.Respell(cfg, prior)
	case live != nil:
		flat, _ := FlattenConfiguration(live)
		cfg = flinkconf.Respell(cfg, flat)
	}
	d.Config, d.Written = cfg, cfg
	if !w.NameUnknown {
		d.Effective, d.Added = w.Shown(cfg)
		d.Written = maps.Clone(cfg)
		for k, v := range d.Added {
			if cfg[k] == v {
				delete(d.Written, k)
			}
		}
	}
	if !w.PodUnknown {
		pod, pfs := flinkconf.PodTemplate(w.PodTemplate, w.Input)
		d.PodFindings = pfs
		if pod != nil {
			d.PodJSON = CanonicalJSON(pod)
		}
	}
	return d
}

// Shown is the effective configuration of the written one, and what the
// operator adds to it: the configuration the job runs with, as shown
// (sensitive values masked).
func (w Want) Shown(written map[string]string) (effective, added map[string]string) {
	added = flinkconf.OperatorAdded(w.Input, w.Namespace, w.Name)
	effective = make(map[string]string, len(written)+len(added))
	maps.Copy(effective, added)
	maps.Copy(effective, written)
	for k := range w.Sensitive {
		if _, ok := effective[k]; ok {
			effective[k] = flinkconf.SensitivePlaceholder
		}
	}
	return effective, added
}

// Written is the configuration the provider wrote, recovered from a stored
// effective configuration (WrittenConfig with what w's operator adds).
func (w Want) Written(effective map[string]string) map[string]string {
	return WrittenConfig(effective, w.Sensitive, flinkconf.OperatorAdded(w.Input, w.Namespace, w.Name))
}

// Renamed is a stored effective configuration of w shown for the cluster
// named to instead: the keys the operator adds (flinkconf.OperatorAdded,
// which name the cluster) turned from w's values to to's. A blue/green
// deployment's children differ in nothing else.
func (w Want) Renamed(effective map[string]string, to string) map[string]string {
	was, is := flinkconf.OperatorAdded(w.Input, w.Namespace, w.Name), flinkconf.OperatorAdded(w.Input, w.Namespace, to)
	out := maps.Clone(effective)
	for k, v := range was {
		if out[k] == v {
			out[k] = is[k]
		}
	}
	return out
}

// WrittenConfig recovers the flinkConfiguration the provider writes from a
// stored effective configuration: masked values (flinkconf.SensitivePlaceholder)
// back from sensitive, and without what the operator adds (added, nil: not
// known), which the provider never writes.
func WrittenConfig(effective, sensitive, added map[string]string) map[string]string {
	cfg := maps.Clone(effective)
	if cfg == nil {
		cfg = map[string]string{}
	}
	for k, v := range sensitive {
		if cfg[k] == flinkconf.SensitivePlaceholder {
			cfg[k] = v
		}
	}
	for k, v := range added {
		if cfg[k] == v {
			delete(cfg, k)
		}
	}
	return cfg
}

// SpecOf is the spec w writes with d's configuration and pod template;
// false while part of it is unknown (Want.Spec nil).
func (w Want) SpecOf(d Derived) (Spec, bool) {
	if w.Spec == nil {
		return Spec{}, false
	}
	s := *w.Spec
	s.FlinkConfiguration = d.Written
	if d.PodJSON != "" {
		// As JSON reads it (numbers as float64), as a stored
		// effective_pod_template gives it.
		if err := json.Unmarshal([]byte(d.PodJSON), &s.PodTemplate); err != nil {
			return s, false
		}
	}
	if s.Job != nil {
		j := *s.Job
		s.Job = &j
	}
	return s, true
}

// DesiredOf is w as the operator's rules read it, with the spec it writes
// (nil while part of it is unknown).
func (w Want) DesiredOf(d Derived) Desired {
	out := w.Desired
	out.Spec = nil
	if s, ok := w.SpecOf(d); ok {
		out.Spec = &s
	}
	return out
}

// Render is the object to write: w's spec with d's configuration in the
// live object's shape (live: its spec.flinkConfiguration, nil: none;
// ShapeConfiguration), and carried, the final savepoint of the deployment
// a create replaces, as the path a job without its own starts from (the
// first deployment restores from initialSavepointPath:
// ApplicationReconciler.deploy, release-1.15.0). False while part of the
// spec is unknown.
func (w Want) Render(d Derived, live any, carried string) (*unstructured.Unstructured, bool) {
	s, ok := w.SpecOf(d)
	if !ok {
		return nil, false
	}
	s.LiveConfiguration = live
	if carried != "" && s.Job != nil && s.Job.InitialSavepointPath == "" {
		s.Job.InitialSavepointPath = carried
	}
	return s.Render(w.Namespace, w.Name), true
}
