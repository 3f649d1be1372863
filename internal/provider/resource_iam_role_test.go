package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// testOIDCProvider creates an IAM OIDC provider in the emulator, as
// aws_iam_openid_connect_provider would for an EKS cluster.
func testOIDCProvider(t *testing.T) string {
	t.Helper()
	issuer := "https://oidc.eks.us-east-1.amazonaws.com/id/" + strings.ToUpper(randName("")) + "A1B2C3D4"
	out, err := testAWS(t).IAM.CreateOpenIDConnectProvider(context.Background(), &iam.CreateOpenIDConnectProviderInput{
		Url:            aws.String(issuer),
		ClientIDList:   []string{"sts.amazonaws.com"},
		ThumbprintList: []string{strings.Repeat("9", 40)},
	})
	if err != nil {
		t.Fatalf("creating OIDC provider: %v", err)
	}
	arn := aws.ToString(out.OpenIDConnectProviderArn)
	t.Cleanup(func() {
		_, _ = testAWS(t).IAM.DeleteOpenIDConnectProvider(context.Background(), &iam.DeleteOpenIDConnectProviderInput{OpenIDConnectProviderArn: aws.String(arn)})
	})
	return arn
}

func iamRoleConfig(name, identity, stores, extra string) string {
	return fmt.Sprintf(`
resource "flinkstate_iam_role" "test" {
  name            = %q
  state_store_ids = %s
%s
%s
}
`, name, stores, identity, extra)
}

// expectRoleDocuments reads the role's trust and inline policy from IAM and
// compares them with what this project's policy code produces.
func expectRoleDocuments(t *testing.T, name string, wantTrust iampolicy.Document, wantStores []store.Store) statecheck.StateCheck {
	return expectAPI(func() error {
		ctx, c := context.Background(), testAWS(t).IAM
		role, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if err != nil {
			return err
		}
		if got := iampolicy.Decode(aws.ToString(role.Role.AssumeRolePolicyDocument)); !iampolicy.Equivalent(got, wantTrust.JSON()) {
			return fmt.Errorf("trust policy in IAM:\n%s\nwant:\n%s", got, wantTrust.JSON())
		}
		pol, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(inlinePolicyName)})
		if err != nil {
			return err
		}
		want, _ := iampolicy.Permissions("aws", wantStores, nil)
		if got := iampolicy.Decode(aws.ToString(pol.PolicyDocument)); !iampolicy.Equivalent(got, want.JSON()) {
			return fmt.Errorf("inline policy in IAM:\n%s\nwant:\n%s", got, want.JSON())
		}
		return nil
	})
}

const roleAddr = "flinkstate_iam_role.test"

// roleFixture is what the role tests share: their own OIDC provider and
// role name, the two identity blocks and the two store lists.
type roleFixture struct {
	name, irsa, podIdentity, oneHCL, twoHCL string
	irsaTrust, podTrust                     iampolicy.Document
	one, two                                []store.Store
}

func newRoleFixture(t *testing.T) roleFixture {
	oidc := testOIDCProvider(t)
	f := roleFixture{
		name: randName("flink-orders-"),
		irsa: fmt.Sprintf(`  irsa {
    oidc_provider_arn = %q
    namespace         = "data-processing"
    service_account   = "flink-orders"
  }`, oidc),
		podIdentity: `  pod_identity {
    namespace       = "data-processing"
    service_account = "flink-orders"
    cluster_name    = "prod"
  }`,
		oneHCL:    `["acme-flink-state/flink/orders"]`,
		twoHCL:    `["acme-flink-state/flink/orders", "acme-flink-state/flink/payments"]`,
		irsaTrust: mustIRSATrust(t, oidc, "data-processing", "flink-orders"),
		podTrust:  iampolicy.PodIdentityTrust("data-processing", "flink-orders", "prod"),
		one:       []store.Store{{Bucket: "acme-flink-state", Prefix: "flink/orders"}},
	}
	f.two = append(append([]store.Store{}, f.one...), store.Store{Bucket: "acme-flink-state", Prefix: "flink/payments"})
	return f
}

func (f roleFixture) checkDestroy(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := testAWS(t).IAM.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(f.name)}); !isNotFound(err) {
			return fmt.Errorf("role %s still exists after destroy (%v)", f.name, err)
		}
		return nil
	}
}

func rolePlanAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(roleAddr, action)}}
}

func TestAccIAMRole_basic(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	wantPolicy, _ := iampolicy.Permissions("aws", f.one, nil)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{{
			Config: iamRoleConfig(f.name, f.irsa, f.oneHCL, `  tags = { team = "data" }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				// The documents are known at plan time.
				plancheck.ExpectKnownValue(roleAddr, tfjsonPath("policy_json"), knownString(wantPolicy.JSON())),
				plancheck.ExpectKnownValue(roleAddr, tfjsonPath("trust_policy_json"), knownString(f.irsaTrust.JSON())),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(roleAddr, tfjsonPath("id"), knownvalue.StringExact(f.name)),
				statecheck.ExpectKnownValue(roleAddr, tfjsonPath("arn"), knownvalue.StringRegexp(regexpMust(`^arn:aws:iam::\d{12}:role/`+f.name+`$`))),
				expectRoleDocuments(t, f.name, f.irsaTrust, f.one),
			},
		}},
	})
}

func TestAccIAMRole_import(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{
			{Config: iamRoleConfig(f.name, f.irsa, f.oneHCL, `  tags = { team = "data" }`)},
			{
				ResourceName:            roleAddr,
				ImportState:             true,
				ImportStateId:           exampleImportID(t, "flinkstate_iam_role", "flink-orders", f.name),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// Import reads a Pod Identity trust back as the pod_identity block.
func TestAccIAMRole_importPodIdentity(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{
			{Config: iamRoleConfig(f.name, f.podIdentity, f.twoHCL, `  tags = { team = "streaming" }`)},
			{
				ResourceName:            roleAddr,
				ImportState:             true,
				ImportStateId:           exampleImportID(t, "flinkstate_iam_role", "flink-orders", f.name),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// A second store and new tags: in place.
func TestAccIAMRole_update(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{
			{Config: iamRoleConfig(f.name, f.irsa, f.oneHCL, `  tags = { team = "data" }`)},
			{
				Config:            iamRoleConfig(f.name, f.irsa, f.twoHCL, `  tags = { team = "streaming" }`),
				ConfigPlanChecks:  rolePlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectRoleDocuments(t, f.name, f.irsaTrust, f.two)},
			},
		},
	})
}

// From IRSA to Pod Identity: the trust policy changes in place.
func TestAccIAMRole_updateIdentity(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{
			{Config: iamRoleConfig(f.name, f.irsa, f.twoHCL, `  tags = { team = "streaming" }`)},
			{
				Config:            iamRoleConfig(f.name, f.podIdentity, f.twoHCL, `  tags = { team = "streaming" }`),
				ConfigPlanChecks:  rolePlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectRoleDocuments(t, f.name, f.podTrust, f.two)},
			},
		},
	})
}

// The inline policy deleted out of band is planned back.
func TestAccIAMRole_driftInlinePolicyDeleted(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	cfg := iamRoleConfig(f.name, f.irsa, f.twoHCL, `  tags = { team = "streaming" }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					if _, err := testAWS(t).IAM.DeleteRolePolicy(context.Background(), &iam.DeleteRolePolicyInput{RoleName: aws.String(f.name), PolicyName: aws.String(inlinePolicyName)}); err != nil {
						t.Fatalf("deleting policy out of band: %v", err)
					}
				},
				Config:            cfg,
				ConfigPlanChecks:  rolePlanAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{expectRoleDocuments(t, f.name, f.irsaTrust, f.two)},
			},
		},
	})
}

// Deleted out of band: planned as a create.
func TestAccIAMRole_disappears(t *testing.T) {
	skipUnlessAcc(t)
	f := newRoleFixture(t)
	cfg := iamRoleConfig(f.name, f.podIdentity, f.twoHCL, `  tags = { team = "streaming" }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             f.checkDestroy(t),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					ctx, c := context.Background(), testAWS(t).IAM
					_, _ = c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(f.name), PolicyName: aws.String(inlinePolicyName)})
					if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(f.name)}); err != nil {
						t.Fatalf("deleting role out of band: %v", err)
					}
				},
				Config:            cfg,
				ConfigPlanChecks:  rolePlanAction(plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{expectRoleDocuments(t, f.name, f.podTrust, f.two)},
			},
		},
	})
}

func TestIAMRole_invalidInput(t *testing.T) {
	t.Parallel()
	irsa := `  irsa {
    oidc_provider_arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"
    namespace         = "ns"
    service_account   = "sa"
  }`
	pod := `  pod_identity {
    namespace       = "ns"
    service_account = "sa"
  }`
	var many []string
	for i := 0; i < 60; i++ {
		many = append(many, fmt.Sprintf(`"acme-flink-state/flink/application-number-%03d"`, i))
	}
	cases := map[string]struct {
		name, identity, stores string
		want                   []string
	}{
		"name over 64":    {strings.Repeat("r", 65), irsa, `["bkt/p"]`, []string{"name", "1 to 64"}},
		"name bad chars":  {"flink orders", irsa, `["bkt/p"]`, []string{"name", "letters, digits"}},
		"both identities": {"r", irsa + "\n" + pod, `["bkt/p"]`, []string{"irsa", "pod_identity"}},
		"no identity":     {"r", "", `["bkt/p"]`, []string{"irsa", "pod_identity"}},
		"oidc arn not a provider": {"r", strings.Replace(irsa, "oidc-provider/", "role/", 1), `["bkt/p"]`,
			[]string{"irsa.oidc_provider_arn", "oidc-provider/"}},
		"irsa without namespace":  {"r", strings.Replace(irsa, `namespace         = "ns"`, "", 1), `["bkt/p"]`, []string{"irsa.namespace", "must be specified"}},
		"store id without prefix": {"r", irsa, `["acme-flink-state"]`, []string{"state_store_ids", "bucket/prefix"}},
		"store id trailing slash": {"r", irsa, `["bkt/flink/"]`, []string{"state_store_ids", "slash"}},
		"no stores":               {"r", irsa, `[]`, []string{"state_store_ids", "at least 1"}},
		"policy over IAM's limit": {"r", irsa, "[" + strings.Join(many, ",") + "]", []string{"state_store_ids", "10240-character limit"}},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      iamRoleConfig(tc.name, tc.identity, tc.stores, ""),
					PlanOnly:    true,
					ExpectError: errorRE(tc.want...),
				}},
			})
		})
	}
}

// State store IDs from stores created in the same run: the store computes
// its ID at plan time, so the role's policy is in the plan already; and with
// a bucket name unknown until apply, the policy is simply known after apply.
func TestAccIAMRole_storesFromSameRun(t *testing.T) {
	skipUnlessAcc(t)
	oidc := testOIDCProvider(t)
	bucket := randName("fs-samerun-")
	name := randName("flink-samerun-")
	want, _ := iampolicy.Permissions("aws", []store.Store{{Bucket: bucket, Prefix: "flink/orders"}}, nil)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "terraform_data" "bucket_name" {
  input = %q
}

resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}

resource "flinkstate_state_store" "orders" {
  bucket = flinkstate_bucket.state.bucket
  prefix = "flink/orders"
}

# Its bucket name is only known after apply.
resource "flinkstate_state_store" "late" {
  bucket     = terraform_data.bucket_name.output
  prefix     = "flink/late"
  depends_on = [flinkstate_bucket.state]
}

resource "flinkstate_iam_role" "r" {
  name            = %q
  state_store_ids = [flinkstate_state_store.orders.id]
  irsa {
    oidc_provider_arn = %q
    namespace         = "data-processing"
    service_account   = "flink"
  }
}

resource "flinkstate_iam_role" "late" {
  name            = "${%q}-late"
  state_store_ids = [flinkstate_state_store.late.id]
  irsa {
    oidc_provider_arn = %q
    namespace         = "data-processing"
    service_account   = "flink-late"
  }
}
`, bucket, bucket, name, oidc, name, oidc),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("flinkstate_state_store.orders", tfjsonPath("checkpoint_dir"), knownString("s3://"+bucket+"/flink/orders/checkpoints")),
				plancheck.ExpectKnownValue("flinkstate_iam_role.r", tfjsonPath("policy_json"), knownString(want.JSON())),
				plancheck.ExpectUnknownValue("flinkstate_iam_role.late", tfjsonPath("policy_json")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				expectRoleDocuments(t, name, mustIRSATrust(t, oidc, "data-processing", "flink"), []store.Store{{Bucket: bucket, Prefix: "flink/orders"}}),
				expectRoleDocuments(t, name+"-late", mustIRSATrust(t, oidc, "data-processing", "flink-late"), []store.Store{{Bucket: bucket, Prefix: "flink/late"}}),
			},
		}},
	})
}

func mustIRSATrust(t *testing.T, oidc, ns, sa string) iampolicy.Document {
	t.Helper()
	d, err := iampolicy.IRSATrust(oidc, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
