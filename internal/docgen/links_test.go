package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed docs/, README.md, CONTRIBUTING.md, TESTBED.md and
// CHANGELOG.md have no link the Registry or GitHub cannot follow.
func TestLinks(t *testing.T) {
	problems, err := CheckLinks("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// A tree with one good and one bad link of each kind: every bad one is
// reported, no good one.
func TestLinksFindsBadOnes(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/index.md", "# Provider\n\n[ok]("+RegistryDocs+"/guides/a#step-one) [bad-rel](guides/a) [bad-reg]("+RegistryDocs+"/guides/missing)\n")
	write("docs/guides/a.md", "# A\n\n## Step one\n\n[ok](../resources/r#nestedblock--x) [ok](#a) [bad-md](b.md) [bad-page](../resources/missing) [bad-anchor](../resources/r#nope)\n\n```\n[not a link](x.md)\n```\n<!-- [a slot](x.md) -->\n")
	write("docs/resources/r.md", "# r\n\n<a id=\"nestedblock--x\"></a>\n")
	write("README.md", "[ok](docs/guides/a.md#step-one) [ok](docs) [bad-file](NOPE.md) [bad-anchor](docs/guides/a.md#two) [bad-reg]("+RegistryDocs+"/resources/zz)\n")
	problems, err := CheckLinks(root)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		"docs/index.md: guides/a: relative link on the provider page",
		"docs/index.md: " + RegistryDocs + "/guides/missing: no such page: docs/guides/missing.md",
		"docs/guides/a.md: b.md: relative link ending in .md",
		"docs/guides/a.md: ../resources/missing: no such page",
		"docs/guides/a.md: ../resources/r#nope: docs/resources/r.md has no anchor #nope",
		"README.md: NOPE.md: no such page",
		"README.md: docs/guides/a.md#two: docs/guides/a.md has no anchor #two",
		"README.md: " + RegistryDocs + "/resources/zz: no such page",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("not reported: %s", want)
		}
	}
	if len(problems) != 8 {
		t.Errorf("got %d problems, want 8:\n%s", len(problems), got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"flinkstate_deployment":             "flinkstate_deployment",
		"Step 5: Upgrade, with a savepoint": "step-5-upgrade-with-a-savepoint",
		"What `wait_for` waits for":         "what-wait_for-waits-for",
	} {
		if got := Slug(strings.NewReplacer("`", "").Replace(in)); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// A block whose description says it is required is listed under Required.
func TestRequiredBlocks(t *testing.T) {
	in := "# x\n\n## Schema\n\n### Required\n\n- `name` (String) N.\n- `zone` (String) Z.\n\n### Optional\n\n- `a` (Block, Optional) A.\n- `state` (Block, Optional) S" +
		RequiredBlockMarker + ". More. (see [below](#nestedblock--state))\n\n<a id=\"nestedblock--state\"></a>\n### Nested Schema for `state`\n\nOptional:\n\n- `b` (Block, Optional) B" + RequiredBlockMarker + ".\n"
	want := "# x\n\n## Schema\n\n### Required\n\n- `name` (String) N.\n- `state` (Block, Required) S. More. (see [below](#nestedblock--state))\n- `zone` (String) Z.\n\n### Optional\n\n- `a` (Block, Optional) A.\n\n<a id=\"nestedblock--state\"></a>\n### Nested Schema for `state`\n\nOptional:\n\n- `b` (Block, Optional) B" + RequiredBlockMarker + ".\n"
	if got := RequiredBlocks(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	noRequired := "## Schema\n\n### Optional\n\n- `s` (Block, Optional) S" + RequiredBlockMarker + ".\n- `t` (String) T.\n"
	if got, want := RequiredBlocks(noRequired), "## Schema\n\n### Required\n\n- `s` (Block, Required) S.\n\n### Optional\n\n- `t` (String) T.\n"; got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// The provider page links every resource and data source page.
func TestIndexListsEveryPage(t *testing.T) {
	index, err := os.ReadFile("../../docs/index.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"resources", "data-sources"} {
		pages, err := filepath.Glob(filepath.Join("../../docs", kind, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		if len(pages) == 0 {
			t.Fatalf("no pages under docs/%s", kind)
		}
		for _, p := range pages {
			link := "(" + RegistryDocs + "/" + kind + "/" + strings.TrimSuffix(filepath.Base(p), ".md") + ")"
			if !strings.Contains(string(index), link) {
				t.Errorf("docs/index.md does not link %s%s", kind, link)
			}
		}
	}
}
