package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithMoveState = (*serviceAccountResource)(nil)

// serviceAccountState is kubernetes_service_account_v1's state (schema
// version 0: hashicorp/kubernetes kubernetes/resource_kubernetes_service_account_v1.go
// sets no SchemaVersion): an SDKv2 resource, so metadata is a list of one
// object (namespacedMetadataSchema in kubernetes/schema_metadata.go: name,
// namespace, generate_name, labels, annotations, generation,
// resource_version, uid), image_pull_secret and secret sets of {name},
// automount_service_account_token (default true, always written to the
// object; Read stores false when the object has none),
// default_secret_name, and id "namespace/name" (buildId in
// kubernetes/structures.go).
type serviceAccountState struct {
	ID       string `json:"id"`
	Metadata []struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid"`
	} `json:"metadata"`
	ImagePullSecrets []struct {
		Name string `json:"name"`
	} `json:"image_pull_secret"`
	Secrets []struct {
		Name string `json:"name"`
	} `json:"secret"`
	Automount *bool `json:"automount_service_account_token"`
}

// unmodelledServiceAccount names the settings of a ServiceAccount that
// flinkstate_service_account does not manage: they would stay on the object,
// managed by nobody.
func unmodelledServiceAccount(imagePullSecrets, secrets []string) []string {
	var out []string
	if len(imagePullSecrets) > 0 {
		out = append(out, "image pull secrets ("+strings.Join(imagePullSecrets, ", ")+")")
	}
	if len(secrets) > 0 {
		out = append(out, "secrets ("+strings.Join(secrets, ", ")+")")
	}
	return out
}

// warnAutomount: flinkstate_service_account never writes
// automountServiceAccountToken, so a false one stays on the object,
// unmanaged. Not an error: kubernetes_service_account_v1 also reads an
// absent field as false (its Read), so false in its state does not say the
// object has it.
func warnAutomount(diags *diag.Diagnostics, ns, name string, automount *bool) {
	if automount != nil && !*automount {
		diags.AddWarning("automountServiceAccountToken of "+ns+"/"+name+" left as it is",
			"The source had automount_service_account_token = false. flinkstate_service_account does not manage that field: "+
				"the ServiceAccount keeps whatever it has (false, or absent, which Kubernetes reads as true), and no later apply changes it.")
	}
}

// MoveState: a kubernetes_manifest ServiceAccount or a
// kubernetes_service_account_v1 (serviceAccountState) moves in as an import
// (move_state.go).
func (r *serviceAccountResource) MoveState(context.Context) []resource.StateMover {
	const target = "flinkstate_service_account"
	importHint := "Keep the ServiceAccount where it is (remove the moved block), or, to let these settings stay on the object " +
		"unmanaged, import it (an import block with to = flinkstate_service_account.<name> and id = \"<namespace>/<name>\") and " +
		"remove the old resource from state with a removed block (lifecycle { destroy = false })."
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		if !fromKubernetesProvider(req) {
			return
		}
		switch req.SourceTypeName {
		case srcManifest:
			ref, ok := moveManifest(req, resp, target)
			if !ok || resp.Diagnostics.HasError() {
				return
			}
			var pull, secrets []string
			for _, list := range []struct {
				key string
				out *[]string
			}{{"imagePullSecrets", &pull}, {"secrets", &secrets}} {
				items, _ := ref.Object[list.key].([]any)
				for _, it := range items {
					m, _ := it.(map[string]any)
					n, _ := m["name"].(string)
					*list.out = append(*list.out, n)
				}
			}
			var automount *bool
			if b, ok := ref.Object["automountServiceAccountToken"].(bool); ok {
				automount = &b
			}
			if u := unmodelledServiceAccount(pull, secrets); len(u) > 0 {
				moveProblem(&resp.Diagnostics, req, target, fmt.Sprintf("the ServiceAccount %s/%s sets %s, which flinkstate_service_account "+
					"does not manage", ref.Namespace, ref.Name, strings.Join(u, ", ")), importHint)
				return
			}
			warnAutomount(&resp.Diagnostics, ref.Namespace, ref.Name, automount)
			moveInto(ctx, resp, ref.Namespace, ref.Name, nil)
		case srcServiceAccount, srcServiceAccountOld:
			if req.SourceSchemaVersion != 0 || req.SourceRawState == nil {
				moveProblem(&resp.Diagnostics, req, target, fmt.Sprintf("its state has schema version %d; the provider converts "+
					"version 0, the only one hashicorp/kubernetes has written", req.SourceSchemaVersion), importHint)
				return
			}
			var st serviceAccountState
			if err := json.Unmarshal(req.SourceRawState.JSON, &st); err != nil || len(st.Metadata) != 1 || st.Metadata[0].Name == "" {
				moveProblem(&resp.Diagnostics, req, target, "the state does not name the ServiceAccount (metadata.0.name)", importHint)
				return
			}
			md := st.Metadata[0]
			ns := md.Namespace
			if ns == "" {
				ns = "default" // the schema's default (namespacedMetadataSchema)
			}
			var pull, secrets []string
			for _, s := range st.ImagePullSecrets {
				pull = append(pull, s.Name)
			}
			for _, s := range st.Secrets {
				secrets = append(secrets, s.Name)
			}
			if u := unmodelledServiceAccount(pull, secrets); len(u) > 0 {
				moveProblem(&resp.Diagnostics, req, target, fmt.Sprintf("the ServiceAccount %s/%s sets %s, which flinkstate_service_account "+
					"does not manage", ns, md.Name, strings.Join(u, ", ")), importHint)
				return
			}
			warnAutomount(&resp.Diagnostics, ns, md.Name, st.Automount)
			moveInto(ctx, resp, ns, md.Name, nil)
			// The object the source created: Read drops the resource (a
			// warning) if the object of that name is another one now.
			setObjectUID(ctx, resp.TargetPrivate, md.UID, &resp.Diagnostics)
			resp.Diagnostics.AddWarning("RoleBinding of "+ns+"/"+md.Name+" not moved",
				"If a RoleBinding named "+ns+"/"+md.Name+" exists, the refresh after this move reads it into role_binding, "+
					"and flinkstate_service_account manages (and on destroy deletes) it. If a kubernetes_role_binding_v1 manages it, "+
					"take that out of state without deleting it: removed { from = kubernetes_role_binding_v1.<x>  lifecycle { destroy = false } }, "+
					"and set role_binding { role_name, kind } to what it binds. A RoleBinding of another name is not affected.")
		case srcRoleBinding, srcRoleBindingOld:
			id := ""
			if req.SourceRawState != nil {
				var st struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal(req.SourceRawState.JSON, &st)
				id = st.ID
			}
			moveProblem(&resp.Diagnostics, req, target, roleBindingCause(id), roleBindingTodo)
		}
	}}}
}
