package provider

import (
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// Plan-time checks that need more than one attribute. Rules about a single
// resource run in ValidateConfig (terraform validate, and again at plan
// with the values other resources' plans made known); rules that relate
// two resources of the same configuration use what this provider instance
// planned earlier in the same run (planned: a ServiceAccount's IRSA role,
// a deployment's identity and savepoint directory). Terraform plans a
// resource after those it references, so a reference
// (service_account = flinkstate_service_account.x.name) is what makes the
// relation visible at plan; without one, the same rule runs at apply,
// before anything is written. Each resource's checks are in its
// resource_<name>_plan.go (docgen lists them from there); this file holds
// the registry and the check two resources share (podIdentityUser).

// planned is what this provider instance planned so far in this run.
type planned struct {
	mu sync.Mutex
	// irsa: ServiceAccounts (namespace/name) planned with irsa_role_arn.
	irsa map[string]bool
	// podIdentity: ServiceAccounts that get credentials through Pod
	// Identity, with the attribute that said so (for the message).
	podIdentity map[string]string
	// deployments: namespace/name -> what snapshots need to know.
	deployments map[string]plannedDeployment
	// stores: the state stores planned, as their s3:// URI.
	stores []plannedStore
	// roles: ServiceAccounts (namespace/name) a planned flinkstate_iam_role
	// trusts, with the state stores it grants (all such roles' together).
	roles map[string][]store.Store
}

type plannedStore struct {
	dir      store.Dir
	creating bool
	// replacing: registered by the first plan of a replace (prior state
	// with another bucket or prefix); terraform plans the replacement's
	// create again with no prior state, and that second plan is this
	// same store, not another one on its prefix.
	replacing bool
}

type plannedDeployment struct {
	savepointDir   string // "" when none
	checkpointDir  string // "" when none
	storeURI       string // s3://bucket/prefix with state.store_id, else ""
	serviceAccount string // namespace/name of the pods' ServiceAccount, "" when unknown
	backend        string // state.backend, "" when unset
}

// planned returns this provider instance's registry (meta.plans), made on
// first use.
func (m *meta) planned() *planned {
	if m == nil {
		return &planned{}
	}
	m.plansOnce.Do(func() {
		m.plans = &planned{irsa: map[string]bool{}, podIdentity: map[string]string{}, deployments: map[string]plannedDeployment{},
			roles: map[string][]store.Store{}}
	})
	return m.plans
}

// irsaConflictDetail explains rule 6: the AWS SDK for Java v1 that the
// Hadoop S3 plugin bundles tries web identity (IRSA) before container
// credentials (Pod Identity) in DefaultAWSCredentialsProviderChain, so an
// IRSA annotation on the account silently wins. (The plugin bundles
// aws-java-sdk-core 1.12.779, flink-s3-fs-hadoop's META-INF/NOTICE in Flink
// 2.2.1; its DefaultAWSCredentialsProviderChain tries environment variables,
// system properties, WebIdentityTokenCredentialsProvider and profiles
// before EC2ContainerCredentialsProviderWrapper.)
const irsaConflictDetail = "The ServiceAccount %s carries the IRSA annotation " + kube.IRSAAnnotation + " (irsa_role_arn), and %s gives its pods " +
	"EKS Pod Identity. The AWS SDK for Java v1 in Flink's S3 plugin takes web identity credentials before container credentials, so the " +
	"pods would run as the IRSA role, not the Pod Identity one. Use one mechanism: remove irsa_role_arn, or use identity = \"irsa\" " +
	"without a Pod Identity association."

// podIdentityUser records that a ServiceAccount gets Pod Identity and
// reports a conflict with an IRSA ServiceAccount planned earlier.
func (r *resourceBase) podIdentityUser(ns, sa types.String, by string, at path.Path, diags *diag.Diagnostics) {
	if !known(ns, sa) {
		return
	}
	key := ns.ValueString() + "/" + sa.ValueString()
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podIdentity[key] = by
	if p.irsa[key] {
		diags.AddAttributeError(at, "IRSA and Pod Identity on the same ServiceAccount", fmt.Sprintf(irsaConflictDetail, key, by))
	}
}
