package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// NewProtocol6 is the provider's protocol server, as main serves it: the
// framework's server (providerserver.NewProtocol6), except that a move's
// source private data the framework cannot decode is dropped (moveServer).
func NewProtocol6(version string) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer {
		return moveServer{providerserver.NewProtocol6(New(version)())()}
	}
}

// NewProtocol6WithError is NewProtocol6 for terraform-plugin-testing's
// ProtoV6ProviderFactories.
func NewProtocol6WithError(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) { return NewProtocol6(version)(), nil }
}

// moveServer passes every call to the framework's server. A MoveResourceState
// request carries the source resource's private data, written by another
// provider in its own format, and the framework decodes it as its own JSON
// object before any StateMover runs (terraform-plugin-framework v1.19.0
// internal/fromproto6/moveresourcestate.go: privatestate.NewData), failing
// the move with "Error Decoding Private State" when it is not JSON. That is
// the case of every kubernetes_manifest imported with hashicorp/kubernetes
// and not applied since: its private data is a msgpack object
// {"IsImported": true} (manifest/provider/import.go; PlanResourceChange keeps
// it while IsImported, manifest/provider/plan.go). No converter here reads
// the source's private data, so such data is dropped instead.
type moveServer struct{ tfprotov6.ProviderServer }

func (s moveServer) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	if req != nil && len(req.SourcePrivate) > 0 && json.Unmarshal(req.SourcePrivate, new(map[string]any)) != nil {
		r := *req
		r.SourcePrivate = nil
		req = &r
	}
	return s.ProviderServer.MoveResourceState(ctx, req)
}
