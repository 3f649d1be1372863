package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var importBlockRE = regexp.MustCompile(`(?s)import\s*\{\s*to\s*=\s*([a-z_]+\.[a-z_]+)\s*id\s*=\s*"([^"]+)"\s*\}`)

// Every resource documents import both ways, and the import {} block
// (examples/resources/<type>/import-by-string-id.tf, rendered by
// tfplugindocs) imports the same address by the same ID as the
// terraform import command of import.sh, which the _import acceptance
// tests use (exampleImportID): the block shows an ID format that works.
func TestDocs_importBlocksMatchImportCommands(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "examples", "resources", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no example resources: %v", err)
	}
	for _, d := range dirs {
		typ := filepath.Base(d)
		t.Run(typ, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(d, "import-by-string-id.tf"))
			if err != nil {
				t.Fatalf("%s has no import {} example: %v", typ, err)
			}
			m := importBlockRE.FindStringSubmatch(string(b))
			if m == nil {
				t.Fatalf("examples/resources/%s/import-by-string-id.tf has no import { to = ..., id = \"...\" } block:\n%s", typ, b)
			}
			var cmd []string
			for _, line := range strings.Split(example(t, "resources/"+typ+"/import.sh"), "\n") {
				if f := strings.Fields(line); len(f) == 4 && f[0] == "terraform" && f[1] == "import" {
					cmd = f
				}
			}
			if cmd == nil {
				t.Fatalf("examples/resources/%s/import.sh has no terraform import line", typ)
			}
			if m[1] != cmd[2] || m[2] != cmd[3] {
				t.Errorf("import {} imports %s by %q, import.sh %s by %q", m[1], m[2], cmd[2], cmd[3])
			}
			// The same ID the _import tests start from.
			if id := exampleImportID(t, typ); id != m[2] {
				t.Errorf("import {} ID %q, exampleImportID %q", m[2], id)
			}
		})
	}
}

// Every rendered resource page shows both forms.
func TestDocs_importBothWaysRendered(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "resources", "*.md"))
	if len(pages) == 0 {
		t.Fatal("no resource pages in docs/")
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		typ := "flinkstate_" + strings.TrimSuffix(filepath.Base(p), ".md")
		for _, want := range []string{"import {\n  to = " + typ + ".", "terraform import " + typ + "."} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s does not show %q: run make docs", p, want)
			}
		}
	}
}

// Every resource and data source page has a subcategory, so the Registry
// groups them (State storage, Identity, Flink) instead of one flat list.
func TestDocs_subcategories(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*", "*.md"))
	if len(pages) < 12 {
		t.Fatalf("only %d pages in docs/", len(pages))
	}
	re := regexp.MustCompile(`(?m)^subcategory: "([^"]*)"$`)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(b)
		if m == nil || len(m[1]) == 0 {
			t.Errorf("%s has no subcategory: give its template one", p)
		}
	}
}
