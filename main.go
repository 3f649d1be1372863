// Command terraform-provider-flinkstate is the flinkstate Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/provider"
)

// version is set at build time: -ldflags "-X main.version=1.2.3" (goreleaser does).
var version = "dev"

// Documentation: tfplugindocs, pinned in tools/docs, renders docs/ from templates/, examples/ and the schema.
//go:generate sh -c "cd tools/docs && GOWORK=off go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-name flinkstate --provider-dir ../.."

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "start the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/flinkstate/flinkstate",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
