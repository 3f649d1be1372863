package flinkdeploy

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
)

// AbsentDefaults lists the provider defaults (flinkconf.Absent*) a live
// object does not have. For an imported object they stay unwritten while
// their attribute is unset (flinkconf.Input.Unwritten): the object was
// running with Flink's and the operator's defaults there, and writing the
// provider's would change its spec, i.e. restart the job.
func AbsentDefaults(obj *unstructured.Unstructured) []string {
	var out []string
	if _, ok, _ := unstructured.NestedString(obj.Object, "spec", "mode"); !ok {
		out = append(out, flinkconf.AbsentMode)
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "flinkConfiguration")
	cfg, _ := FlattenConfiguration(raw)
	for _, key := range []string{flinkconf.AbsentBackend, flinkconf.AbsentRetention, flinkconf.AbsentStorage} {
		if _, _, ok := flinkconf.Lookup(cfg, key); !ok {
			out = append(out, key)
		}
	}
	_, _, rocks := flinkconf.Lookup(cfg, "state.backend.rocksdb.localdir")
	_, _, forst := flinkconf.Lookup(cfg, "state.backend.forst.local-dir")
	if !rocks && !forst {
		out = append(out, flinkconf.AbsentLocalDir)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "podTemplate", "spec", "securityContext", "fsGroup"); !ok {
		out = append(out, flinkconf.AbsentFSGroup)
	}
	sort.Strings(out)
	return out
}

var imageTagRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(?:$|[-_])`)

// ImportVersion finds the full Flink version of an object written by
// someone else, whose flinkVersion is only the operator's enum (v2_2): the
// S3 plugin jar its pod template enables (flink-s3-fs-hadoop-2.2.1.jar),
// else the tag of an official flink image (flink:2.2.1-java17). Without
// either it is the newest release of that minor the provider knows, and
// guessed says so (the caller warns: the patch names the S3 plugin jar the
// provider writes).
func ImportVersion(obj *unstructured.Unstructured) (version string, guessed bool, err error) {
	enum, _, _ := unstructured.NestedString(obj.Object, "spec", "flinkVersion")
	agrees := func(v string) bool { // with the object's flinkVersion
		pv, err := flinkconf.ParseVersion(v)
		return err == nil && pv.OperatorEnum() == enum
	}
	if v := fullVersion(enum, "", obj); v != enum {
		return v, false, nil // the S3 plugin jar's version
	}
	image, _, _ := unstructured.NestedString(obj.Object, "spec", "image")
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") && !strings.Contains(image, "@") &&
		path.Base(image[:colon]) == "flink" {
		if m := imageTagRE.FindStringSubmatch(image[colon+1:]); m != nil {
			if v := m[1] + "." + m[2] + "." + m[3]; agrees(v) {
				return v, false, nil
			}
		}
	}
	minor := strings.ReplaceAll(strings.TrimPrefix(enum, "v"), "_", ".")
	newest, ok := flinkconf.NewestPatch(minor)
	if !ok {
		return "", false, fmt.Errorf("spec.flinkVersion is %q: the provider manages Flink %d.%d and later (released: %s)", enum,
			flinkconf.MinMinor.Major, flinkconf.MinMinor.Minor, flinkconf.ReleasedList())
	}
	return fmt.Sprintf("%s.%d", minor, newest), true, nil
}

// ImportS3Plugin is s3_plugin for an imported object of Flink version:
// "" (the provider's default, which adds ENABLE_BUILT_IN_PLUGINS) when
// the main container's variable already names that version's S3 plugin
// jar, so writing the default changes nothing; else flinkconf.S3PluginImage.
// An object running on S3 without it gets the plugin from its image (or
// another container start-up), and adding the variable would change its pod
// template: a spec change the operator applies as an upgrade, i.e. a
// restart (flink-kubernetes-operator release-1.15.0, ReflectiveDiffBuilder
// over FlinkDeploymentSpec).
func ImportS3Plugin(obj *unstructured.Unstructured, version string) string {
	v, err := flinkconf.ParseVersion(version)
	if err != nil {
		return ""
	}
	for _, val := range pluginsEnvValues(obj, true) {
		if flinkconf.ContainsPlugin(val, v.S3PluginJar()) {
			return ""
		}
	}
	return flinkconf.S3PluginImage
}
