package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// planStore refuses a state store whose prefix is, or lies in or around,
// another store planned in this run: one store's force_destroy and
// ownership marker would reach the other's checkpoints (rule 4). Stores
// made elsewhere are checked against S3 at apply. A new store in a bucket
// whose name has dots is warned of: Flink reaches it only with path-style
// access (dottedBucketDetail, store.WildcardCertMatches).
//
// replacing is a plan whose prior state has another bucket or prefix: a new
// store on the new prefix (checked as a create). Terraform then plans the
// replacement's create once more with no prior state (the Terraform
// plugin protocol: a planned replace is a delete plus a create, planned as
// such); that plan matches the replacing entry and is not taken for another
// store on the same prefix.
func (r *stateStoreResource) planStore(bucket, prefix types.String, creating, replacing bool, diags *diag.Diagnostics) {
	if !known(bucket, prefix) {
		return
	}
	if b := bucket.ValueString(); (creating || replacing) && !store.WildcardCertMatches(b) {
		diags.AddAttributeWarning(path.Root("bucket"), "Bucket name with dots", fmt.Sprintf(dottedBucketDetail, b, b))
	}
	d, err := store.ParseDir("s3://" + bucket.ValueString() + "/" + prefix.ValueString())
	if err != nil {
		return
	}
	p := r.meta.planned()
	p.mu.Lock()
	defer p.mu.Unlock()
	if creating {
		for i, o := range p.stores {
			if o.replacing && o.dir == d {
				p.stores[i].replacing = false
				return
			}
		}
	}
	creating = creating || replacing
	for _, o := range p.stores {
		// Stores both already in the state are left alone: the rule
		// stops new nesting, it does not block plans of existing stores.
		if d.Overlaps(o.dir) && (creating || o.creating) {
			diags.AddAttributeError(path.Root("prefix"), "State stores must not be nested", fmt.Sprintf(
				"%s and %s, another state store of this configuration, are the same or nested: destroying one with force_destroy "+
					"would delete the other's checkpoints and savepoints, and the other's role could reach this one's state. Give each "+
					"application a prefix of its own that neither contains nor lies under another's (e.g. flink/orders and flink/payments).",
				d, o.dir))
			return
		}
	}
	p.stores = append(p.stores, plannedStore{dir: d, creating: creating, replacing: replacing})
}
