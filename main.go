// Command terraform-provider-flinkstate is the flinkstate Terraform provider.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/provider"
)

// version is set at build time: -ldflags "-X main.version=1.2.3" (goreleaser does).
var version = "dev"

// source is the provider's source address in required_providers.
const source = "flinkstate/flinkstate"

// Documentation: tfplugindocs, pinned in tools/docs, renders docs/ from templates/, examples/ and the schema.
//go:generate sh -c "cd tools/docs && GOWORK=off go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-name flinkstate --provider-dir ../.."

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "start the provider with support for debuggers like delve")
	flag.Parse()

	// The full address (with the default registry host) that source
	// resolves to; debug reattach matches on it.
	addr, err := tfaddr.ParseProviderSource(source)
	if err != nil {
		log.Fatal(err)
	}
	if !debug {
		quietSDKLogs(os.LookupEnv, os.Setenv)
	}
	err = providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: addr.String(),
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// sdkLogVars are the plugin SDK's log level variables. Unset, the SDK logs
// every request at TRACE, as JSON on stderr, for terraform to filter.
var sdkLogVars = []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"}

// quietSDKLogs turns the SDK's loggers off when terraform shows no provider
// logs (neither TF_LOG nor TF_LOG_PROVIDER is set), unless a level was set
// explicitly. terraform would discard those lines anyway; writing and
// parsing them was a third of the provider's CPU time in a plan
// (tools/bench/plan.sh).
func quietSDKLogs(lookup func(string) (string, bool), set func(string, string) error) {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER"} {
		if s, ok := lookup(v); ok && s != "" {
			return
		}
	}
	for _, v := range sdkLogVars {
		if _, ok := lookup(v); !ok {
			_ = set(v, "off")
		}
	}
}
