// Command terraform-provider-flinkstate is the flinkstate Terraform provider.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/provider"
)

// version is set at build time: -ldflags "-X main.version=1.2.3" (goreleaser does).
var version = "dev"

// source is the provider's source address in required_providers.
const source = "flinkstate/flinkstate"

// Documentation: first the parts of templates/ that come from the code (internal/docgen), then
// tfplugindocs, pinned in tools/docs, renders docs/ from templates/, examples/ and the schema,
// then docgen -docs lists required blocks as required (the framework has none: docgen.RequiredBlocks).
//go:generate go run ./internal/docgen/cmd/docgen
//go:generate sh -c "cd tools/docs && GOWORK=off go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-name flinkstate --provider-dir ../.."
//go:generate go run ./internal/docgen/cmd/docgen -docs

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
	if debug {
		if err := serveDebug(addr); err != nil {
			log.Fatal(err)
		}
		return
	}
	quietSDKLogs(os.LookupEnv, os.Setenv)
	stopProfile := startProfile()
	defer stopProfile()
	// What providerserver.Serve does, with the provider's own server
	// (provider.NewProtocol6: moves from other providers' resources).
	if err := tf6server.Serve(addr.String(), provider.NewProtocol6(version)); err != nil {
		stopProfile()
		log.Fatal(err)
	}
}

// openTofuRegistryHost is the host OpenTofu resolves a source without a host
// to (its counterpart of tfaddr.DefaultProviderRegistryHost).
var openTofuRegistryHost = strings.Join([]string{"registry", "opentofu", "org"}, ".")

// debugAddresses are the full addresses source resolves to in terraform and
// in OpenTofu: TF_REATTACH_PROVIDERS is matched on them, so one key per CLI
// makes the printed value usable by both.
func debugAddresses(addr tfaddr.Provider) []string {
	tofu := addr
	tofu.Hostname = svchost.Hostname(openTofuRegistryHost)
	return []string{addr.String(), tofu.String()}
}

// serveDebug serves the provider for a debugger and prints a
// TF_REATTACH_PROVIDERS value keyed by both addresses (providerserver's own
// debug mode prints only the terraform one).
func serveDebug(addr tfaddr.Provider) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	configCh := make(chan *plugin.ReattachConfig)
	closeCh := make(chan struct{})
	errCh := make(chan error, 1)
	go func() {
		errCh <- tf6server.Serve(addr.String(), provider.NewProtocol6(version),
			tf6server.WithDebug(ctx, configCh, closeCh))
	}()
	select {
	case rc := <-configCh:
		s, err := reattachJSON(rc, debugAddresses(addr))
		if err != nil {
			return err
		}
		fmt.Printf("Provider started. For terraform or OpenTofu, set:\n\n\tTF_REATTACH_PROVIDERS='%s'\n\n", s)
	case err := <-errCh:
		return err
	}
	<-closeCh
	return nil
}

// reattachJSON is the TF_REATTACH_PROVIDERS value (the shape
// terraform-plugin-go's tf6server prints) with one entry per address.
func reattachJSON(rc *plugin.ReattachConfig, addrs []string) (string, error) {
	type reattachAddr struct{ Network, String string }
	type reattach struct {
		Protocol        string
		ProtocolVersion int
		Pid             int
		Test            bool
		Addr            reattachAddr
	}
	out := map[string]reattach{}
	for _, a := range addrs {
		out[a] = reattach{
			Protocol:        string(rc.Protocol),
			ProtocolVersion: rc.ProtocolVersion,
			Pid:             rc.Pid,
			Test:            rc.Test,
			Addr:            reattachAddr{Network: rc.Addr.Network(), String: rc.Addr.String()},
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
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
