// Command docgen regenerates the generated parts of templates/ (see
// package docgen). Run by go generate from the repository root, before
// tfplugindocs renders docs/.
package main

import (
	"fmt"
	"os"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/docgen"
)

func main() {
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
