package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// The fixtures in testdata/move are instances of hashicorp/kubernetes
// resources as a Terraform state file (format version 4) stores them under
// resources[].instances[] (schema_version, attributes, private): the instance's attributes are the value encoded with
// the schema's implied type (terraform v1.11.4 internal/states/instance_object.go
// Encode, ctyjson.Marshal), so a DynamicPseudoType attribute is
// {"value": ..., "type": <cty type JSON>} (go-cty cty/json/marshal.go
// marshalDynamic), list-nested blocks are lists and a single-nested one
// (SDKv2's timeouts) an object or null. The values are what the resources
// store (cited at each schema below): kubernetes_manifest's object is the
// object as the API server returned it, less status and the server-side
// metadata (RemoveServerSideFields), typed from the CRD with every
// attribute the CRD declares and the object lacks as null; the fixtures
// keep only some of those attributes (the converters read apiVersion, kind
// and metadata). TestMoveFixturesAreStoredState checks that each decodes
// with its source schema's type, as the framework would decode it.

// kubernetesManifestType is the implied type of kubernetes_manifest's
// schema version 1 (hashicorp/kubernetes manifest/provider/provider.go
// GetProviderResourceSchema): attributes manifest and object
// (DynamicPseudoType), wait_for, computed_fields; blocks timeouts,
// field_manager and wait (NestingList, so lists of objects).
var kubernetesManifestType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"manifest":        tftypes.DynamicPseudoType,
	"object":          tftypes.DynamicPseudoType,
	"wait_for":        tftypes.Object{AttributeTypes: map[string]tftypes.Type{"fields": tftypes.Map{ElementType: tftypes.String}}},
	"computed_fields": tftypes.List{ElementType: tftypes.String},
	"timeouts": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"create": tftypes.String, "update": tftypes.String, "delete": tftypes.String}}},
	"field_manager": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"name": tftypes.String, "force_conflicts": tftypes.Bool}}},
	"wait": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"rollout": tftypes.Bool,
		"fields":  tftypes.Map{ElementType: tftypes.String},
		"condition": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
			"status": tftypes.String, "type": tftypes.String}}},
	}}},
}}

// sdkMetadataType is an SDKv2 namespaced metadata block with generate_name
// (kubernetes/schema_metadata.go namespacedMetadataSchema; schema_rbac.go
// metadataSchemaRBAC for RBAC objects): a list of one object.
var sdkMetadataType = tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"annotations": tftypes.Map{ElementType: tftypes.String}, "generate_name": tftypes.String, "generation": tftypes.Number,
	"labels": tftypes.Map{ElementType: tftypes.String}, "name": tftypes.String, "namespace": tftypes.String,
	"resource_version": tftypes.String, "uid": tftypes.String,
}}}

var nameRefType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String}}

// kubernetesServiceAccountType is kubernetes_service_account_v1's implied
// type, schema version 0 (kubernetes/resource_kubernetes_service_account_v1.go;
// SDKv2 adds id, and the timeouts block as a single object with create).
var kubernetesServiceAccountType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"id": tftypes.String, "metadata": sdkMetadataType,
	"image_pull_secret": tftypes.Set{ElementType: nameRefType}, "secret": tftypes.Set{ElementType: nameRefType},
	"automount_service_account_token": tftypes.Bool, "default_secret_name": tftypes.String,
	"timeouts": tftypes.Object{AttributeTypes: map[string]tftypes.Type{"create": tftypes.String}},
}}

// kubernetesRoleBindingType is kubernetes_role_binding_v1's implied type,
// schema version 0 (kubernetes/resource_kubernetes_role_binding_v1.go,
// schema_rbac.go rbacRoleRefSchema and rbacSubjectSchema).
var kubernetesRoleBindingType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"id": tftypes.String, "metadata": sdkMetadataType,
	"role_ref": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"api_group": tftypes.String, "kind": tftypes.String, "name": tftypes.String}}},
	"subject": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"api_group": tftypes.String, "kind": tftypes.String, "name": tftypes.String, "namespace": tftypes.String}}},
}}

// storedInstance is a fixture: one resource instance as a state file
// (format version 4) holds it under resources[].instances[], and the
// resource's type and provider.
type storedInstance struct {
	Provider      string
	Type          string
	SchemaVersion int64
	Attributes    []byte
	Private       []byte
}

// kubernetesSource is hashicorp/kubernetes' address as Terraform sends it.
var kubernetesSource = tfaddr.NewProvider(tfaddr.DefaultProviderRegistryHost, "hashicorp", "kubernetes").String()

// fixtureTypes are the source resource type of each fixture.
var fixtureTypes = map[string]string{
	"manifest_flinkdeployment.json":          srcManifest,
	"manifest_flinkdeployment_imported.json": srcManifest,
	"manifest_flinkstatesnapshot.json":       srcManifest,
	"service_account_v1.json":                srcServiceAccount,
	"service_account_v1_pull_secret.json":    srcServiceAccount,
	"role_binding_v1.json":                   srcRoleBinding,
}

func readStoredInstance(t *testing.T, file string) storedInstance {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "move", file))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		SchemaVersion *int64          `json:"schema_version"`
		Attributes    json.RawMessage `json:"attributes"`
		Private       []byte          `json:"private"`
	}
	if err := json.Unmarshal(b, &in); err != nil || in.SchemaVersion == nil || len(in.Attributes) == 0 {
		t.Fatalf("%s: not a state instance: %v", file, err)
	}
	if typ, ok := awsFixtureTypes[file]; ok {
		return storedInstance{Provider: awsSource, Type: typ, SchemaVersion: *in.SchemaVersion, Attributes: in.Attributes, Private: in.Private}
	}
	return storedInstance{Provider: kubernetesSource, Type: fixtureTypes[file], SchemaVersion: *in.SchemaVersion, Attributes: in.Attributes, Private: in.Private}
}

// moveRequest is the request Terraform makes for a moved block from the
// stored instance to target (cross_provider_move.go applyCrossTypeMove).
func (s storedInstance) moveRequest(target string) *tfprotov6.MoveResourceStateRequest {
	return &tfprotov6.MoveResourceStateRequest{
		SourceProviderAddress: s.Provider,
		SourceTypeName:        s.Type,
		SourceSchemaVersion:   s.SchemaVersion,
		SourceState:           &tfprotov6.RawState{JSON: s.Attributes},
		SourcePrivate:         s.Private,
		TargetTypeName:        target,
	}
}

func TestMoveFixturesAreStoredState(t *testing.T) {
	types := map[string]tftypes.Type{srcManifest: kubernetesManifestType, srcServiceAccount: kubernetesServiceAccountType,
		srcRoleBinding: kubernetesRoleBindingType}
	for file, src := range fixtureTypes {
		s := readStoredInstance(t, file)
		typ := types[src]
		v, err := (&tfprotov6.RawState{JSON: s.Attributes}).Unmarshal(typ)
		if err != nil {
			t.Errorf("%s: not a value of the source schema's type: %v", file, err)
			continue
		}
		if !v.IsFullyKnown() || v.IsNull() {
			t.Errorf("%s: stored state must be known and not null", file)
		}
		// Terraform stores every attribute of the schema (null or not).
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(s.Attributes, &attrs); err != nil {
			t.Fatal(err)
		}
		for name := range typ.(tftypes.Object).AttributeTypes {
			if _, ok := attrs[name]; !ok {
				t.Errorf("%s: attribute %s missing", file, name)
			}
		}
	}
}

// newMoveServer is the provider's protocol server as main serves it
// (NewProtocol6), with its schemas.
func newMoveServer(t *testing.T) *protocolServer {
	t.Helper()
	srv := NewProtocol6("test")()
	schemas, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasError(schemas.Diagnostics) {
		t.Fatal(err, schemas.Diagnostics)
	}
	return &protocolServer{ProviderServer: srv, schemas: schemas}
}

// moveAndImport moves the stored instance to target and imports id into it,
// through the provider's protocol server as Terraform calls it.
func moveAndImport(t *testing.T, file, target, id string) (moved, imported *tfprotov6.MoveResourceStateResponse) {
	t.Helper()
	ctx := context.Background()
	srv := newMoveServer(t)
	m, err := srv.MoveResourceState(ctx, readStoredInstance(t, file).moveRequest(target))
	if err != nil {
		t.Fatal(err)
	}
	if hasError(m.Diagnostics) {
		t.Fatalf("move %s to %s: %s", file, target, diagText(m.Diagnostics))
	}
	i, err := srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: target, ID: id})
	if err != nil || hasError(i.Diagnostics) || len(i.ImportedResources) != 1 {
		t.Fatalf("import %s %s: %v %s", target, id, err, diagText(i.Diagnostics))
	}
	return m, &tfprotov6.MoveResourceStateResponse{TargetState: i.ImportedResources[0].State, TargetPrivate: i.ImportedResources[0].Private}
}

func diagText(ds []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Summary + ": " + d.Detail + "\n")
	}
	return b.String()
}

func stateValue(t *testing.T, target string, dv *tfprotov6.DynamicValue) tftypes.Value {
	t.Helper()
	if dv == nil {
		t.Fatal("no state")
	}
	v, err := dv.Unmarshal(newMoveServer(t).resourceType(target))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// privateKeys are the provider's keys of a private state. The framework's
// own keys (a leading ".") are left out: an import adds
// .import_before_read, which only lets Read change a resource identity
// (terraform-plugin-framework v1.19.0 internal/fwserver/server_readresource.go),
// and these resources have none. privateMoved too: the move's own mark,
// cleared by the next read (TestMoveState_planWithoutRefreshRefused).
func privateKeys(t *testing.T, b []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	if len(b) == 0 {
		return out
	}
	var m map[string][]byte
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("private state %s: %v", b, err)
	}
	for k, v := range m {
		if !strings.HasPrefix(k, ".") && k != privateMoved {
			out[k] = string(v)
		}
	}
	return out
}

// A move gives exactly the state and private data of an import of the same
// object (namespace/name from the source state, the import mark that makes
// the refresh read the object as an import does), for both shapes of a
// kubernetes_manifest state: applied from configuration, and imported.
func TestMoveState_manifestIsAnImport(t *testing.T) {
	for _, c := range []struct{ file, target, id string }{
		{"manifest_flinkdeployment.json", "flinkstate_deployment", "flink/orders"},
		{"manifest_flinkdeployment_imported.json", "flinkstate_deployment", "flink/orders"},
		{"manifest_flinkstatesnapshot.json", "flinkstate_snapshot", "flink/orders-before-upgrade"},
	} {
		t.Run(c.file, func(t *testing.T) {
			moved, imported := moveAndImport(t, c.file, c.target, c.id)
			mv, iv := stateValue(t, c.target, moved.TargetState), stateValue(t, c.target, imported.TargetState)
			if !mv.Equal(iv) {
				t.Errorf("moved state\n%s\nis not the imported state\n%s", mv, iv)
			}
			mp, ip := privateKeys(t, moved.TargetPrivate), privateKeys(t, imported.TargetPrivate)
			if len(mp) != len(ip) {
				t.Errorf("moved private %v, imported %v", mp, ip)
			}
			for k, v := range ip {
				if mp[k] != v {
					t.Errorf("private %q: moved %q, imported %q", k, mp[k], v)
				}
			}
			if c.target == "flinkstate_deployment" && mp[privateImported] != "true" {
				t.Errorf("the move does not mark the import: %v", mp)
			}
		})
	}
}

// kubernetes_service_account_v1 moves as an import, and keeps the UID of
// the object it created (a replaced object is dropped by the refresh, as
// after a create); it warns about the RoleBinding of the same name.
func TestMoveState_serviceAccount(t *testing.T) {
	moved, imported := moveAndImport(t, "service_account_v1.json", "flinkstate_service_account", "flink/flink")
	target := "flinkstate_service_account"
	if mv, iv := stateValue(t, target, moved.TargetState), stateValue(t, target, imported.TargetState); !mv.Equal(iv) {
		t.Errorf("moved state\n%s\nis not the imported state\n%s", mv, iv)
	}
	mp := privateKeys(t, moved.TargetPrivate)
	if mp[privateImported] != "true" || mp[privateUID] != `"5d1c2a64-0f4e-4b8e-9a77-3f2b1c0d9e84"` {
		t.Errorf("private %v: want the import mark and the source's UID", mp)
	}
	var warned bool
	for _, d := range moved.Diagnostics {
		warned = warned || (d.Severity == tfprotov6.DiagnosticSeverityWarning && strings.Contains(d.Detail, "removed { from = kubernetes_role_binding_v1"))
	}
	if !warned {
		t.Errorf("no warning about the RoleBinding: %s", diagText(moved.Diagnostics))
	}
}

// Sources that cannot be converted faithfully fail the move, naming what
// to do instead; nothing is moved.
func TestMoveState_refused(t *testing.T) {
	ctx := context.Background()
	srv := newMoveServer(t)
	withKind := func(file, kind string) func(*tfprotov6.MoveResourceStateRequest) {
		return func(r *tfprotov6.MoveResourceStateRequest) {
			r.SourceState.JSON = []byte(strings.ReplaceAll(string(r.SourceState.JSON), `"kind": "`+kind+`"`, `"kind": "ConfigMap"`))
			r.SourceState.JSON = []byte(strings.ReplaceAll(string(r.SourceState.JSON), `"apiVersion": "flink.apache.org/v1beta1"`, `"apiVersion": "v1"`))
		}
	}
	for _, c := range []struct {
		name, file, target string
		change             func(*tfprotov6.MoveResourceStateRequest)
		want               []string
	}{
		{"deployment to snapshot", "manifest_flinkdeployment.json", "flinkstate_snapshot", nil,
			[]string{"Moving kubernetes_manifest to flinkstate_snapshot failed", "FlinkDeployment, which moves to flinkstate_deployment", "to = flinkstate_deployment.<name>"}},
		{"snapshot to deployment", "manifest_flinkstatesnapshot.json", "flinkstate_deployment", nil,
			[]string{"FlinkStateSnapshot, which moves to flinkstate_snapshot"}},
		{"another kind", "manifest_flinkdeployment.json", "flinkstate_deployment", withKind("", "FlinkDeployment"),
			[]string{"v1 ConfigMap, which no flinkstate resource manages", "Keep it as a kubernetes_manifest"}},
		{"unknown schema version", "manifest_flinkdeployment.json", "flinkstate_deployment",
			func(r *tfprotov6.MoveResourceStateRequest) { r.SourceSchemaVersion = 2 },
			[]string{"schema version 2", "Import the object instead", "removed block"}},
		{"no name", "manifest_flinkdeployment.json", "flinkstate_deployment",
			func(r *tfprotov6.MoveResourceStateRequest) {
				r.SourceState.JSON = []byte(strings.ReplaceAll(string(r.SourceState.JSON), `"name": "orders"`, `"name": null`))
			},
			[]string{"neither its object nor its manifest names the object"}},
		{"no namespace", "manifest_flinkdeployment.json", "flinkstate_deployment",
			func(r *tfprotov6.MoveResourceStateRequest) {
				r.SourceState.JSON = []byte(strings.ReplaceAll(string(r.SourceState.JSON), `"namespace": "flink"`, `"namespace": null`))
			},
			[]string{"has no metadata.namespace", "Import the object instead"}},
		{"service account with image pull secrets", "service_account_v1_pull_secret.json", "flinkstate_service_account", nil,
			[]string{"sets image pull secrets (registry-credentials), which flinkstate_service_account does not manage", "import it", "removed block"}},
		{"role binding", "role_binding_v1.json", "flinkstate_service_account", nil,
			[]string{"the RoleBinding flink/flink cannot be moved on its own", "role_binding {", "removed { from = kubernetes_role_binding_v1.<x>  lifecycle { destroy = false } }"}},
		{"service account to deployment", "service_account_v1.json", "flinkstate_deployment", nil,
			[]string{"Unable to Move Resource State", "Source Resource Type: kubernetes_service_account_v1"}},
		{"another provider", "manifest_flinkdeployment.json", "flinkstate_deployment",
			func(r *tfprotov6.MoveResourceStateRequest) {
				r.SourceProviderAddress = tfaddr.NewProvider(tfaddr.DefaultProviderRegistryHost, "gavinbunney", "kubectl").String()
			},
			[]string{"Unable to Move Resource State"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := readStoredInstance(t, c.file).moveRequest(c.target)
			if c.change != nil {
				c.change(req)
			}
			resp, err := srv.MoveResourceState(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !hasError(resp.Diagnostics) {
				t.Fatalf("moved, want an error: %s", resp.TargetState)
			}
			text := diagText(resp.Diagnostics)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("error does not say %q:\n%s", w, text)
				}
			}
		})
	}
}

// Terraform sends hashicorp/kubernetes' full address, with its registry's
// host; OpenTofu v1.10 sends "kubernetes", the provider the type implies.
func TestMoveState_sourceAddresses(t *testing.T) {
	srv := newMoveServer(t)
	for _, addr := range []string{
		kubernetesSource,
		tfaddr.NewProvider(svchost.Hostname("registry.example.org"), "hashicorp", "kubernetes").String(),
		"kubernetes",
	} {
		req := readStoredInstance(t, "manifest_flinkdeployment.json").moveRequest("flinkstate_deployment")
		req.SourceProviderAddress = addr
		resp, err := srv.MoveResourceState(context.Background(), req)
		if err != nil || hasError(resp.Diagnostics) || resp.TargetState == nil {
			t.Errorf("%s: %v %s", addr, err, diagText(resp.Diagnostics))
		}
	}
}

// A kubernetes_manifest imported with hashicorp/kubernetes carries its
// msgpack private data until its next apply; the framework alone refuses
// to decode it (moveServer), the provider's server drops it.
func TestMoveState_foreignPrivate(t *testing.T) {
	req := readStoredInstance(t, "manifest_flinkdeployment_imported.json").moveRequest("flinkstate_deployment")
	if len(req.SourcePrivate) == 0 || json.Valid(req.SourcePrivate) {
		t.Fatalf("fixture private %q: want msgpack", req.SourcePrivate)
	}
	bare, err := newProtocolServer(t).MoveResourceState(context.Background(), req)
	if err != nil || !strings.Contains(diagText(bare.Diagnostics), "Error Decoding Private State") {
		t.Errorf("the framework's own server decoded it (then moveServer is not needed): %v %s", err, diagText(bare.Diagnostics))
	}
	resp, err := newMoveServer(t).MoveResourceState(context.Background(), req)
	if err != nil || hasError(resp.Diagnostics) {
		t.Fatalf("%v %s", err, diagText(resp.Diagnostics))
	}
	if privateKeys(t, resp.TargetPrivate)[privateImported] != "true" {
		t.Errorf("private %s", resp.TargetPrivate)
	}
}

// A plan made without the refresh after a move (-refresh=false) is refused:
// the moved state names the object and nothing else.
func TestMoveState_planWithoutRefreshRefused(t *testing.T) {
	ctx := context.Background()
	srv := newMoveServer(t)
	for _, c := range []struct{ file, target string }{
		{"manifest_flinkdeployment.json", "flinkstate_deployment"},
		{"manifest_flinkstatesnapshot.json", "flinkstate_snapshot"},
		{"service_account_v1.json", "flinkstate_service_account"},
	} {
		m, err := srv.MoveResourceState(ctx, readStoredInstance(t, c.file).moveRequest(c.target))
		if err != nil || hasError(m.Diagnostics) {
			t.Fatal(err, diagText(m.Diagnostics))
		}
		p, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: c.target, PriorState: m.TargetState,
			PriorPrivate: m.TargetPrivate, ProposedNewState: m.TargetState, Config: m.TargetState})
		if err != nil {
			t.Fatal(err)
		}
		if !hasError(p.Diagnostics) || !strings.Contains(diagText(p.Diagnostics), "without -refresh=false") {
			t.Errorf("%s: planned without the refresh: %s", c.target, diagText(p.Diagnostics))
		}
	}
}
