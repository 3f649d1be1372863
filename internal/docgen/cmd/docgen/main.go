// Command docgen regenerates the generated parts of templates/ (see
// package docgen). Run by go generate from the repository root, before
// tfplugindocs renders docs/; with -docs, after it, it lists the required
// blocks of the rendered pages as required (docgen.RequiredBlocks).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/docgen"
)

func main() {
	docs := flag.Bool("docs", false, "rewrite the rendered docs/ instead of templates/")
	flag.Parse()
	if *docs {
		wrote, err := docgen.FixDocs(".")
		if err != nil {
			fmt.Fprintln(os.Stderr, "docgen:", err)
			os.Exit(1)
		}
		for _, f := range wrote {
			fmt.Println("docgen: wrote", f)
		}
		return
	}
	for _, f := range docgen.Files() {
		before, after, err := docgen.Render(".", f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "docgen:", err)
			os.Exit(1)
		}
		if before == after {
			continue
		}
		if err := os.WriteFile(f, []byte(after), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "docgen:", err)
			os.Exit(1)
		}
		fmt.Println("docgen: wrote", f)
	}
}
