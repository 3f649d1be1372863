package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// `moved` blocks across providers (Terraform >= 1.8, OpenTofu >= 1.10):
// hashicorp/kubernetes' kubernetes_manifest (a FlinkDeployment, a
// FlinkStateSnapshot, a ServiceAccount) and kubernetes_service_account_v1
// become flinkstate resources without touching the objects.
//
// A move is an import: the converters take only the object's namespace and
// name from the source state and set what ImportState sets (for
// flinkstate_deployment and flinkstate_service_account the private mark
// privateImported), so the refresh that follows every move (Terraform reads
// each resource before planning) runs the import path of Read on the live
// object. They also set privateMoved, which refuses a plan made without
// that refresh (move_server.go). The moved state is therefore exactly what an import of the same
// object gives, and the first plan is what an import's first plan is: empty
// for an object the provider can represent. An object it cannot represent
// fails that refresh with the import's message, and the plan (and the move
// with it) does not happen.
//
// Terraform calls MoveResourceState on a provider it has not configured
// (terraform v1.11.4 internal/refactoring/cross_provider_move.go:
// prepareCrossTypeMove gets the provider from its factory and asks only for
// its schema), so nothing here can read the cluster. It passes the source
// instance's stored attributes unchanged (SourceStateJSON: src.AttrsJSON,
// and SourceSchemaVersion: src.SchemaVersion, never upgraded) and keeps the
// returned private data with the moved instance (applyCrossTypeMove:
// Private: resp.TargetPrivate), which the refresh hands back to Read
// (internal/terraform/node_resource_abstract_instance.go: ReadResourceRequest
// Private: state.Private). The framework passes it as MoveStateRequest.
// SourceRawState.JSON and stores MoveStateResponse.TargetPrivate
// (terraform-plugin-framework v1.19.0 internal/fwserver/server_moveresourcestate.go).

// kubernetesProvider is hashicorp/kubernetes' source address without its
// host: Terraform sends the full address of the source resource's provider
// (cross_provider_move.go: move.sourceProviderAddr.Provider.String()), with
// its registry's host. OpenTofu v1.10.10 sends only the provider name the
// source type implies (internal/tofu/upgrade_resource_state.go
// moveResourceStateTransform: SourceProviderAddress is
// prevAddr.Resource.Resource.ImpliedProvider(), "kubernetes" for
// kubernetes_manifest), so that is accepted too.
const kubernetesProvider = "/hashicorp/kubernetes"

func fromKubernetesProvider(req resource.MoveStateRequest) bool {
	return strings.HasSuffix(req.SourceProviderAddress, kubernetesProvider) || req.SourceProviderAddress == "kubernetes"
}

// Source resource types of hashicorp/kubernetes.
const (
	srcManifest          = "kubernetes_manifest"
	srcServiceAccount    = "kubernetes_service_account_v1"
	srcServiceAccountOld = "kubernetes_service_account" // deprecated alias, same schema
	srcRoleBinding       = "kubernetes_role_binding_v1"
	srcRoleBindingOld    = "kubernetes_role_binding"
)

// manifestSchemaVersion is kubernetes_manifest's schema version: 1 in every
// release since the resource came to hashicorp/kubernetes (v2.4.0,
// manifest/provider/provider.go GetProviderResourceSchema, "Version: 1",
// unchanged from commit 84a64286e to v3.x).
const manifestSchemaVersion = 1

// manifestRef is what a move takes from a kubernetes_manifest state.
type manifestRef struct {
	APIVersion, Kind, Namespace, Name string
	// Object is the object as last read (the "object" attribute), nil if
	// the state has none.
	Object map[string]any
}

func (m manifestRef) group() string {
	g, _, _ := strings.Cut(m.APIVersion, "/")
	if !strings.Contains(m.APIVersion, "/") {
		return "" // the core group: "v1"
	}
	return g
}

// parseManifestState reads a kubernetes_manifest state as Terraform stores
// it. Its attributes (hashicorp/kubernetes manifest/provider/provider.go):
// manifest (DynamicPseudoType, required: the configuration), object
// (DynamicPseudoType, computed: the object as the API server returned it,
// less status, uid, resourceVersion, generation, creationTimestamp and
// managedFields, RemoveServerSideFields in manifest/provider/resource.go),
// wait_for, computed_fields, and the timeouts, field_manager and wait
// blocks (lists). A DynamicPseudoType attribute is stored with its type,
// as {"value": <value>, "type": <cty type JSON>} (go-cty v1.16.0
// cty/json/marshal.go marshalDynamic, called by terraform v1.11.4
// internal/states/instance_object.go Encode through ctyjson.Marshal with the
// schema's implied type); a null one as null. After an import manifest is
// an empty object and only object names the resource
// (manifest/provider/import.go: newState["manifest"] is an object of no
// attributes), and Read reads the object named by object
// (manifest/provider/read.go), so object comes first.
func parseManifestState(raw []byte) (manifestRef, error) {
	var st struct {
		Manifest *dynamicJSON `json:"manifest"`
		Object   *dynamicJSON `json:"object"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return manifestRef{}, fmt.Errorf("the state is not a kubernetes_manifest state: %w", err)
	}
	var ref manifestRef
	for _, v := range []*dynamicJSON{st.Object, st.Manifest} {
		obj, ok := v.object()
		if !ok {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if name == "" {
			continue
		}
		ref.Name = name
		ref.Namespace, _ = md["namespace"].(string)
		ref.APIVersion, _ = obj["apiVersion"].(string)
		ref.Kind, _ = obj["kind"].(string)
		if v == st.Object {
			ref.Object = obj
		}
		return ref, nil
	}
	return manifestRef{}, fmt.Errorf("neither its object nor its manifest names the object (metadata.name)")
}

// dynamicJSON is a DynamicPseudoType value as stored in state.
type dynamicJSON struct {
	Value json.RawMessage `json:"value"`
	Type  json.RawMessage `json:"type"`
}

func (d *dynamicJSON) object() (map[string]any, bool) {
	if d == nil || len(d.Value) == 0 {
		return nil, false
	}
	var obj map[string]any
	if err := json.Unmarshal(d.Value, &obj); err != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

// moveInto is the state and private data of a move, as ImportState would
// write them for namespace/name: the attributes import sets, and the import
// mark that makes the next Read run the import path.
func moveInto(ctx context.Context, resp *resource.MoveStateResponse, ns, name string, extra map[string]any) {
	resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("id"), ns+"/"+name)...)
	resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("namespace"), ns)...)
	resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root("name"), name)...)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root(k), extra[k])...)
	}
	resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateImported, []byte(`true`))...)
	// Not read yet: a plan without refresh is refused (moveServer).
	resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateMoved, []byte(`true`))...)
}

// moveProblem is a move that cannot be made: the error names the source
// and what to do instead.
func moveProblem(diags *diag.Diagnostics, req resource.MoveStateRequest, target, cause, todo string) {
	addProblem(diags, "Moving", req.SourceTypeName+" to "+target, cause, todo)
}

// manifestTarget is where a kubernetes_manifest of that kind moves to.
func manifestTarget(ref manifestRef) string {
	switch {
	case ref.group() == "flink.apache.org" && ref.Kind == "FlinkDeployment":
		return "flinkstate_deployment"
	case ref.group() == "flink.apache.org" && ref.Kind == "FlinkStateSnapshot":
		return "flinkstate_snapshot"
	case ref.group() == "" && ref.Kind == "ServiceAccount":
		return "flinkstate_service_account"
	}
	return ""
}

// moveManifest converts a kubernetes_manifest of the kind target takes;
// ok is false when the request is not for this target (another source).
func moveManifest(req resource.MoveStateRequest, resp *resource.MoveStateResponse, target string) (manifestRef, bool) {
	if !fromKubernetesProvider(req) || req.SourceTypeName != srcManifest {
		return manifestRef{}, false
	}
	importHint := fmt.Sprintf("Import the object instead (an import block with to = %s.<name> and id = \"<namespace>/<name>\") "+
		"and remove the kubernetes_manifest from state with a removed block (lifecycle { destroy = false }).", target)
	if req.SourceSchemaVersion != manifestSchemaVersion {
		moveProblem(&resp.Diagnostics, req, target,
			fmt.Sprintf("its state has schema version %d; the provider converts kubernetes_manifest's version %d, the only one "+
				"hashicorp/kubernetes has written", req.SourceSchemaVersion, manifestSchemaVersion), importHint)
		return manifestRef{}, true
	}
	if req.SourceRawState == nil {
		moveProblem(&resp.Diagnostics, req, target, "Terraform sent no source state", importHint)
		return manifestRef{}, true
	}
	ref, err := parseManifestState(req.SourceRawState.JSON)
	if err != nil {
		moveProblem(&resp.Diagnostics, req, target, err.Error(), importHint)
		return manifestRef{}, true
	}
	what := fmt.Sprintf("%s %s", ref.APIVersion, ref.Kind)
	switch t := manifestTarget(ref); {
	case t == "" && ref.group() == "rbac.authorization.k8s.io" && ref.Kind == "RoleBinding":
		moveProblem(&resp.Diagnostics, req, target, roleBindingCause(ref.Namespace+"/"+ref.Name), roleBindingTodo)
		return ref, true
	case t == "":
		moveProblem(&resp.Diagnostics, req, target,
			fmt.Sprintf("the manifest is a %s, which no flinkstate resource manages (a FlinkDeployment moves to flinkstate_deployment, "+
				"a FlinkStateSnapshot to flinkstate_snapshot, a ServiceAccount to flinkstate_service_account)", what),
			"Keep it as a kubernetes_manifest: remove the moved block.")
		return ref, true
	case t != target:
		moveProblem(&resp.Diagnostics, req, target, fmt.Sprintf("the manifest is a %s, which moves to %s", what, t),
			fmt.Sprintf("Change the moved block's to = %s.<name>.", t))
		return ref, true
	}
	if ref.Namespace == "" {
		moveProblem(&resp.Diagnostics, req, target, fmt.Sprintf("the state of the %s %s has no metadata.namespace", what, ref.Name), importHint)
		return ref, true
	}
	return ref, true
}

// roleBindingTodo says what to do with a RoleBinding that a move cannot
// take: flinkstate_service_account manages the binding of its own name.
const roleBindingTodo = "A `moved` block moves one resource into one resource, and the RoleBinding is part of " +
	"flinkstate_service_account (its role_binding block), not a resource of its own. Move the ServiceAccount " +
	"(moved { from = kubernetes_service_account_v1.<x>  to = flinkstate_service_account.<x> }), add role_binding { role_name = \"<role>\" " +
	"kind = \"Role\" or \"ClusterRole\" } to it, and take the RoleBinding out of the kubernetes provider's state without deleting it: " +
	"removed { from = kubernetes_role_binding_v1.<x>  lifecycle { destroy = false } } (Terraform >= 1.7; or terraform state rm). " +
	"The refresh after the move reads the binding named like the ServiceAccount into role_binding. A binding of another " +
	"name, or with subjects other than the ServiceAccount, stays with kubernetes_role_binding_v1."

func roleBindingCause(id string) string {
	return fmt.Sprintf("the RoleBinding %s cannot be moved on its own", id)
}
