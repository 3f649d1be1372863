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

// privateMoved marks, in private state, a resource moved here by a moved
// block and not read since. Set by every StateMover (moveInto), cleared
// after the next read (ReadResource below).
const privateMoved = "moved"

// PlanResourceChange refuses to plan a moved resource that was not read
// since the move (terraform plan -refresh=false): its state then holds
// only the object's namespace and name, and a plan made from it would
// write the configuration over the object without what the import's read
// records (the defaults it lacks, the fields to take over), which may
// restart a job, or replace a snapshot.
func (s moveServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req != nil {
		if m, ok := decodePrivate(req.PriorPrivate); ok && len(m[privateMoved]) > 0 {
			return &tfprotov6.PlanResourceChangeResponse{Diagnostics: []*tfprotov6.Diagnostic{{
				Severity: tfprotov6.DiagnosticSeverityError,
				Summary:  "Planning " + req.TypeName + " failed",
				Detail: "This resource was moved into " + req.TypeName + " by a moved block and has not been read since: its state " +
					"names the object and nothing else yet.\n\nPlan again with refresh (without -refresh=false): the refresh reads the " +
					"object as an import does, and the plan then shows what the first apply changes.",
			}}}, nil
		}
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

// ReadResource clears privateMoved once the moved resource was read.
func (s moveServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	if m, ok := decodePrivate(resp.Private); ok && m[privateMoved] != nil {
		delete(m, privateMoved)
		resp.Private = nil
		if len(m) > 0 {
			if resp.Private, err = json.Marshal(m); err != nil {
				return nil, err
			}
		}
	}
	return resp, nil
}

// decodePrivate reads private state as the framework writes it: a JSON
// object of JSON values (terraform-plugin-framework internal/privatestate).
func decodePrivate(b []byte) (map[string]json.RawMessage, bool) {
	if len(b) == 0 {
		return nil, false
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(b, &m) == nil
}

func (s moveServer) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	if req != nil && len(req.SourcePrivate) > 0 && json.Unmarshal(req.SourcePrivate, new(map[string]any)) != nil {
		r := *req
		r.SourcePrivate = nil
		req = &r
	}
	return s.ProviderServer.MoveResourceState(ctx, req)
}
