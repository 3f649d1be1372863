// Package docgen writes the parts of templates/ that come from the code:
// the Flink versions the provider accepts, the plan-time checks of
// flinkstate_deployment and the changes that take a savepoint before an
// upgrade. Each part lives between two HTML comments in a
// template ("<!-- generated:NAME ... -->" and "<!-- /generated:NAME -->"),
// so the hand-written text around it stays hand-written; go generate
// rewrites the part, and make docscheck (git diff on templates/ and docs/)
// fails when the committed one differs.
package docgen

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
)

// Part is one generated region of a template.
type Part struct {
	File    string // relative to the repository root
	Name    string
	Content func(root string) (string, error)
}

// Parts are every generated region.
var Parts = append([]Part{
	{File: "templates/index.md.tmpl", Name: "flink-versions", Content: FlinkVersions},
	{File: "templates/index.md.tmpl", Name: "timeouts", Content: TimeoutTable},
	{File: "templates/guides/flink-state-on-eks.md.tmpl", Name: "upgrade-changes", Content: UpgradeChanges},
}, planCheckParts()...)

// PlanChecksGuide is the template of the guide that lists every resource's
// plan-time checks, a section per resource (## <resource>), which each
// resource page links to.
const PlanChecksGuide = "templates/guides/plan-time-checks.md.tmpl"

// CheckedResources are the resources whose plans make checks, in the
// guide's order.
var CheckedResources = []string{
	"flinkstate_deployment", "flinkstate_bucket", "flinkstate_bucket_replication", "flinkstate_state_store",
	"flinkstate_iam_role", "flinkstate_pod_identity_association", "flinkstate_service_account", "flinkstate_snapshot",
	"flinkstate_blue_green_deployment",
}

// planCheckParts: the guide's section of each resource, and each resource
// page's Timeouts section.
func planCheckParts() []Part {
	var ps []Part
	for _, r := range CheckedResources {
		ps = append(ps, Part{File: PlanChecksGuide, Name: "plan-checks-" + r, Content: PlanChecksFor(r)},
			Part{File: "templates/resources/" + strings.TrimPrefix(r, "flinkstate_") + ".md.tmpl", Name: "timeouts", Content: TimeoutsFor(r)})
	}
	return ps
}

// markers matches a part's region: group 1 ends at its first line.
func markers(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)<!-- generated:` + regexp.QuoteMeta(name) + `\b[^>]*-->\n(.*?)<!-- /generated:` + regexp.QuoteMeta(name) + ` -->`)
}

// Replace returns text with the region name replaced by content; an error
// when the markers are missing.
func Replace(text, name, content string) (string, error) {
	loc := markers(name).FindStringSubmatchIndex(text)
	if loc == nil {
		return "", fmt.Errorf("no <!-- generated:%s --> ... <!-- /generated:%s --> markers", name, name)
	}
	content = strings.TrimRight(content, "\n") + "\n"
	return text[:loc[2]] + content + text[loc[3]:], nil
}

// Render returns what file should hold: its text with every part regenerated.
func Render(root, file string) (before, after string, err error) {
	b, err := os.ReadFile(root + "/" + file)
	if err != nil {
		return "", "", err
	}
	before = string(b)
	after = before
	for _, p := range Parts {
		if p.File != file {
			continue
		}
		c, err := p.Content(root)
		if err != nil {
			return "", "", fmt.Errorf("%s: %s: %w", file, p.Name, err)
		}
		if after, err = Replace(after, p.Name, c); err != nil {
			return "", "", fmt.Errorf("%s: %w", file, err)
		}
	}
	return before, after, nil
}

// Files are the templates that hold parts.
func Files() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range Parts {
		if !seen[p.File] {
			seen[p.File] = true
			out = append(out, p.File)
		}
	}
	return out
}

// UpgradeChanges says which changes take a savepoint_before_upgrade: the
// ones the operator applies as an upgrade (flinkdeploy.SpecFields).
func UpgradeChanges(string) (string, error) {
	return "The changes the operator applies as an upgrade, i.e. restarts the job for (its spec diff): " +
		flinkdeploy.UpgradeText() + ".\n", nil
}

// FlinkVersions lists the accepted flink_version values from
// flinkconf.ReleasedVersions, and says what happens to an older minor and
// to a newer patch of a known one by asking flinkconf itself.
func FlinkVersions(string) (string, error) {
	var vs []flinkconf.Version
	for minor, patches := range flinkconf.ReleasedVersions {
		for _, p := range patches {
			v, err := flinkconf.ParseVersion(fmt.Sprintf("%s.%d", minor, p))
			if err != nil {
				return "", fmt.Errorf("a released version the provider refuses: %w", err)
			}
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Major != b.Major {
			return a.Major < b.Major
		}
		if a.Minor != b.Minor {
			return a.Minor < b.Minor
		}
		return a.Patch < b.Patch
	})
	if len(vs) == 0 {
		return "", fmt.Errorf("flinkconf.ReleasedVersions is empty")
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = "`" + v.String() + "`"
	}
	newest := vs[len(vs)-1]
	newerPatch := flinkconf.Version{Major: newest.Major, Minor: newest.Minor, Patch: newest.Patch + 1}
	older := flinkconf.Version{Major: flinkconf.MinMinor.Major, Minor: flinkconf.MinMinor.Minor - 1, Patch: 0}
	if flinkconf.MinMinor.Minor == 0 {
		older = flinkconf.Version{Major: flinkconf.MinMinor.Major - 1, Minor: 20, Patch: 0}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Accepted `flink_version` values: %s (`flinkconf.ReleasedVersions`).\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "Each gives the operator's `flinkVersion` (e.g. `%s`) and the S3 plugin jar (`%s`).\n\n", newest.OperatorEnum(), newest.S3PluginJar())
	fmt.Fprintf(&b, "- A newer patch of a known minor, e.g. `%s`: %s\n", newerPatch, verdict(newerPatch))
	fmt.Fprintf(&b, "- An older minor, e.g. `%s`: %s\n", older, verdict(older))
	return b.String(), nil
}

// verdict says what the plan does with a version, in flinkconf's words.
func verdict(v flinkconf.Version) string {
	msg := flinkconf.ValidateVersion(v.String())
	if msg == "" {
		return "accepted at plan."
	}
	return "refused at plan: Flink " + v.String() + " " + strings.TrimSuffix(msg, ".") + "."
}
