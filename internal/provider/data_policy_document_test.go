package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

func TestPolicyDocument_matchesPolicyCode(t *testing.T) {
	t.Parallel()
	want, err := iampolicy.Permissions("aws", []store.Store{{Bucket: "acme-flink-state", Prefix: "flink/orders"}},
		[]string{"arn:aws:kms:eu-west-1:123456789012:key/k1"})
	if err != nil {
		t.Fatal(err)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
data "flinkstate_policy_document" "p" {
  state_store_ids = ["acme-flink-state/flink/orders"]
  kms_key_arns    = ["arn:aws:kms:eu-west-1:123456789012:key/k1"]
}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.flinkstate_policy_document.p", tfjsonPath("json"), knownvalue.StringExact(want.JSON())),
					statecheck.ExpectKnownValue("data.flinkstate_policy_document.p", tfjsonPath("size"), knownvalue.Int64Exact(int64(iampolicy.Size(want.JSON())))),
				},
			},
		},
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "flinkstate_policy_document" "p" {
  state_store_ids = ["acme-flink-state/"]
}`,
			PlanOnly:    true,
			ExpectError: errorRE("state_store_ids", "bucket/prefix"),
		}},
	})
}

// The data source gives exactly the document the role attaches.
func TestAccPolicyDocument_sameAsRole(t *testing.T) {
	skipUnlessAcc(t)
	oidc := testOIDCProvider(t)
	name := randName("flink-doc-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
locals {
  stores = ["acme-flink-state/flink/orders", "acme-flink-state/flink/payments"]
}

data "flinkstate_policy_document" "p" {
  state_store_ids = local.stores
}

resource "flinkstate_iam_role" "r" {
  name            = %q
  state_store_ids = local.stores
  irsa {
    oidc_provider_arn = %q
    namespace         = "data-processing"
    service_account   = "flink"
  }
}`, name, oidc),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs("data.flinkstate_policy_document.p", tfjsonPath("json"),
					"flinkstate_iam_role.r", tfjsonPath("policy_json"), compare.ValuesSame()),
			},
		}},
	})
}
