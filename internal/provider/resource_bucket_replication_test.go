package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/iampolicy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

const replAddr = "flinkstate_bucket_replication.state"

// replFixture is a source bucket in the provider's region, a replica bucket
// in the test bed's second region and a role name, all the test's own.
type replFixture struct {
	src, dst, role string
}

func newReplFixture() replFixture {
	return replFixture{src: randName("acc-repl-src-"), dst: randName("acc-repl-dst-"), role: randName("flink-state-replication-")}
}

// testAWSIn is testAWS with clients signing for region: S3 refuses a
// request to a bucket signed for another region (the test bed's front
// does too).
func testAWSIn(t *testing.T, region string) *awsclient.Clients {
	t.Helper()
	c, err := awsclient.New(context.Background(), awsclient.Config{Region: region})
	if err != nil {
		t.Fatalf("AWS clients: %v", err)
	}
	return c
}

// replProviderFactories serve the provider under a second local name for
// the other region. terraform-plugin-testing reattaches terraform to one
// provider server per name, and every configuration of that name (an alias
// included) configures that one server, the last one winning; so a test
// cannot give an alias its own region, as a real run (one plugin process
// per provider configuration) does. hashicorp/aws's tests do the same
// (acctest.ProviderNameAlternate "awsalternate", ProtoV5FactoriesAlternate).
var replProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"flinkstate":   NewProtocol6WithError("test"),
	"flinkstatedr": NewProtocol6WithError("test"),
}

// config is the two buckets (versioning as given), and the replication
// given. The replica's provider is the other region's (an alias in the
// example; see replProviderFactories).
func (f replFixture) config(srcVersioning, dstVersioning bool, replication string) string {
	return fmt.Sprintf(`
provider "flinkstatedr" {
  aws {
    region = %q
  }
}

resource "flinkstate_bucket" "state" {
  bucket        = %q
  versioning    = %t
  force_destroy = true
}

resource "flinkstate_bucket" "replica" {
  provider      = flinkstatedr
  bucket        = %q
  versioning    = %t
  force_destroy = true
}
%s
`, testbed.SecondRegion, f.src, srcVersioning, f.dst, dstVersioning, replication)
}

func (f replFixture) replication(extra string) string {
	return fmt.Sprintf(`
resource "flinkstate_bucket_replication" "state" {
  bucket             = flinkstate_bucket.state.bucket
  destination_bucket = flinkstate_bucket.replica.bucket
  prefixes           = ["flink/orders"]
  role_name          = %q
%s
}
`, f.role, extra)
}

// roleGone checks that the replication role does not exist.
func (f replFixture) roleGone(t *testing.T) error {
	if _, err := testAWS(t).IAM.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(f.role)}); !isNotFound(err) {
		return fmt.Errorf("role %s exists (%v)", f.role, err)
	}
	return nil
}

func (f replFixture) putSource(t *testing.T, key, body string) error {
	_, err := testAWS(t).S3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(f.src), Key: aws.String(key), Body: strings.NewReader(body)})
	return err
}

// replica reads key in the destination bucket; found is false when S3
// says there is no such key.
func (f replFixture) replica(t *testing.T, key string) (body string, found bool, err error) {
	out, err := testAWSIn(t, testbed.SecondRegion).S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(f.dst), Key: aws.String(key)})
	if isNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), true, err
}

func waitReplicationIdle(t *testing.T) error {
	_, env := loadTestbed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return env.ReplicationControl().WaitIdle(ctx)
}

// Created: the role with S3's trust and the least-privilege policy, a rule
// for the prefix; an object written under the prefix then appears in the
// other region's bucket after the lag, one outside the prefix does not.
func TestAccBucketReplication_replicatesThePrefix(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	wantPolicy, _ := iampolicy.ReplicationPermissions("aws", f.src, f.dst, []string{"flink/orders"}, false)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{{
			Config: f.config(true, true, f.replication("")),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionCreate),
				plancheck.ExpectKnownValue(replAddr, tfjsonPath("policy_json"), knownString(wantPolicy.JSON())),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(replAddr, tfjsonPath("id"), knownvalue.StringExact(f.src)),
				statecheck.ExpectKnownValue(replAddr, tfjsonPath("destination_region"), knownvalue.StringExact(testbed.SecondRegion)),
				statecheck.ExpectKnownValue(replAddr, tfjsonPath("delete_marker_replication"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(replAddr, tfjsonPath("role_arn"), knownvalue.StringRegexp(regexpMust(`^arn:aws:iam::\d{12}:role/`+f.role+`$`))),
				expectAPI(func() error {
					ctx, c := context.Background(), testAWS(t).IAM
					role, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(f.role)})
					if err != nil {
						return err
					}
					if got := iampolicy.Decode(aws.ToString(role.Role.AssumeRolePolicyDocument)); !iampolicy.Equivalent(got, iampolicy.ReplicationTrust().JSON()) {
						return fmt.Errorf("trust policy %s, want S3's", got)
					}
					pol, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(f.role), PolicyName: aws.String(inlinePolicyName)})
					if err != nil {
						return err
					}
					if got := iampolicy.Decode(aws.ToString(pol.PolicyDocument)); !iampolicy.Equivalent(got, wantPolicy.JSON()) {
						return fmt.Errorf("inline policy %s, want %s", got, wantPolicy.JSON())
					}
					return nil
				}),
				expectAPI(func() error {
					if err := f.putSource(t, "flink/orders/checkpoints/j/chk-1/_metadata", "state"); err != nil {
						return err
					}
					if err := f.putSource(t, "flink/other/file", "not replicated"); err != nil {
						return err
					}
					if err := waitReplicationIdle(t); err != nil {
						return err
					}
					if body, found, err := f.replica(t, "flink/orders/checkpoints/j/chk-1/_metadata"); err != nil || !found || body != "state" {
						return fmt.Errorf("replica under the prefix: %q, found %v, %v; want it copied", body, found, err)
					}
					if _, found, err := f.replica(t, "flink/other/file"); err != nil || found {
						return fmt.Errorf("the object outside the prefix was replicated (found %v, %v)", found, err)
					}
					return nil
				}),
			},
		}},
	})
}

// A source or destination bucket without versioning is refused at apply,
// before any change: no role is created.
func TestAccBucketReplication_versioningRequired(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{
			{
				Config:      f.config(false, true, f.replication("")),
				ExpectError: errorRE(`Versioning is not enabled on the source bucket`, `with flinkstate_bucket_replication.state`, f.src, "versioning = true"),
				Check:       func(*terraform.State) error { return f.roleGone(t) },
			},
			{
				Config:      f.config(true, false, f.replication("")),
				ExpectError: errorRE(`Versioning is not enabled on the destination bucket`, f.dst, "versioning = true"),
			},
			{
				Config: f.config(true, false, ""),
				Check:  func(*terraform.State) error { return f.roleGone(t) },
			},
		},
	})
}

// Import by the source bucket's name: every attribute, the role included,
// is read back.
func TestAccBucketReplication_import(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{
			{Config: f.config(true, true, f.replication(`  delete_marker_replication = true`))},
			{
				ResourceName:      replAddr,
				ImportState:       true,
				ImportStateId:     f.src,
				ImportStateVerify: true,
			},
		},
	})
}

// Drift that weakens the replication (delete markers turned on outside,
// which lets a deletion in the failed region reach the copy), the
// configuration pointed at another role, and the configuration removed
// outside each plan an update, and the apply puts the provider's
// configuration back.
func TestAccBucketReplication_driftCorrected(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	edit := func(change func(*s3types.ReplicationConfiguration)) func() {
		return func() {
			ctx, c := context.Background(), testAWS(t).S3
			cfg, err := s3state.FindReplication(ctx, c, f.src)
			if err != nil {
				t.Fatal(err)
			}
			change(cfg)
			if _, err := c.PutBucketReplication(ctx, &s3.PutBucketReplicationInput{Bucket: aws.String(f.src), ReplicationConfiguration: cfg}); err != nil {
				t.Fatal(err)
			}
		}
	}
	restored := expectAPI(func() error {
		cfg, err := s3state.FindReplication(context.Background(), testAWS(t).S3, f.src)
		if err != nil {
			return err
		}
		got := s3state.ParseReplication(cfg)
		if got.DeleteMarkers || len(got.Prefixes) != 1 || got.Prefixes[0] != "flink/orders" || len(got.Foreign) != 0 {
			return fmt.Errorf("configuration after apply %+v, want the one rule on flink/orders without delete markers", got)
		}
		role, err := testAWS(t).IAM.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(f.role)})
		if err != nil {
			return err
		}
		if got.RoleARN != aws.ToString(role.Role.Arn) {
			return fmt.Errorf("configuration's role %s, want the resource's own %s", got.RoleARN, aws.ToString(role.Role.Arn))
		}
		return nil
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{
			{Config: f.config(true, true, f.replication(""))},
			{
				PreConfig: edit(func(c *s3types.ReplicationConfiguration) {
					c.Rules[0].DeleteMarkerReplication.Status = s3types.DeleteMarkerReplicationStatusEnabled
				}),
				Config: f.config(true, true, f.replication("")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(replAddr, tfjsonPath("delete_marker_replication"), knownvalue.Bool(false)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{restored},
			},
			{
				PreConfig: edit(func(c *s3types.ReplicationConfiguration) {
					c.Role = aws.String(strings.Replace(aws.ToString(c.Role), f.role, "someone-elses-role", 1))
				}),
				Config: f.config(true, true, f.replication("")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{restored},
			},
			{
				PreConfig: func() {
					if _, err := testAWS(t).S3.DeleteBucketReplication(context.Background(), &s3.DeleteBucketReplicationInput{Bucket: aws.String(f.src)}); err != nil {
						t.Fatal(err)
					}
				},
				Config:            f.config(true, true, f.replication("")),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: []statecheck.StateCheck{restored},
			},
		},
	})
}

// Destroying the replication (the buckets stay) deletes its configuration
// and its role, and touches no object in either bucket.
func TestAccBucketReplication_destroyKeepsObjects(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	key := "flink/orders/savepoints/sp-1/_metadata"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{
			{
				Config: f.config(true, true, f.replication("")),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if err := f.putSource(t, key, "sp"); err != nil {
						return err
					}
					return waitReplicationIdle(t)
				})},
			},
			{
				Config:           f.config(true, true, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionDestroy)}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if _, err := s3state.FindReplication(context.Background(), testAWS(t).S3, f.src); err == nil {
						return errors.New("the replication configuration is still there")
					}
					if err := f.roleGone(t); err != nil {
						return err
					}
					if _, err := testAWS(t).S3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(f.src), Key: aws.String(key)}); err != nil {
						return fmt.Errorf("the source object: %w", err)
					}
					if _, found, err := f.replica(t, key); err != nil || !found {
						return fmt.Errorf("the replica is gone (found %v, %v)", found, err)
					}
					return nil
				})},
			},
		},
	})
}

// A second prefix is added in place: a second rule, and the role's policy
// grows to that prefix in both buckets.
func TestAccBucketReplication_addPrefixInPlace(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	two := strings.Replace(f.replication(""), `["flink/orders"]`, `["flink/orders", "flink/payments"]`, 1)
	wantPolicy, _ := iampolicy.ReplicationPermissions("aws", f.src, f.dst, []string{"flink/orders", "flink/payments"}, false)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{
			{Config: f.config(true, true, f.replication(""))},
			{
				Config: f.config(true, true, two),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(replAddr, tfjsonPath("policy_json"), knownString(wantPolicy.JSON())),
				}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					cfg, err := s3state.FindReplication(context.Background(), testAWS(t).S3, f.src)
					if err != nil {
						return err
					}
					if got := s3state.ParseReplication(cfg); strings.Join(got.Prefixes, ",") != "flink/orders,flink/payments" || len(got.Foreign) != 0 {
						return fmt.Errorf("configuration %+v, want rules on flink/orders and flink/payments", got)
					}
					pol, err := testAWS(t).IAM.GetRolePolicy(context.Background(), &iam.GetRolePolicyInput{RoleName: aws.String(f.role), PolicyName: aws.String(inlinePolicyName)})
					if err != nil {
						return err
					}
					if got := iampolicy.Decode(aws.ToString(pol.PolicyDocument)); !iampolicy.Equivalent(got, wantPolicy.JSON()) {
						return fmt.Errorf("inline policy %s, want %s", got, wantPolicy.JSON())
					}
					return nil
				})},
			},
		},
	})
}

// Versioning suspended on the replica outside Terraform stops replication
// (S3 needs it on both buckets): the replica's flinkstate_bucket plans it
// back on, the replication itself is left as it is, and after the apply
// objects replicate again.
func TestAccBucketReplication_versioningSuspendedDrift(t *testing.T) {
	skipUnlessAcc(t)
	f := newReplFixture()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: replProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return f.roleGone(t) },
		Steps: []resource.TestStep{
			{Config: f.config(true, true, f.replication(""))},
			{
				PreConfig: func() {
					if _, err := testAWSIn(t, testbed.SecondRegion).S3.PutBucketVersioning(context.Background(), &s3.PutBucketVersioningInput{Bucket: aws.String(f.dst),
						VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusSuspended}}); err != nil {
						t.Fatal(err)
					}
					// Replication stops meanwhile.
					if err := f.putSource(t, "flink/orders/during-drift", "x"); err != nil {
						t.Fatal(err)
					}
					if err := waitReplicationIdle(t); err != nil {
						t.Fatal(err)
					}
					if _, found, err := f.replica(t, "flink/orders/during-drift"); err != nil || found {
						t.Fatalf("an object replicated into a destination without versioning (found %v, %v)", found, err)
					}
				},
				Config: f.config(true, true, f.replication("")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.replica", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(replAddr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if err := f.putSource(t, "flink/orders/after-drift", "x"); err != nil {
						return err
					}
					if err := waitReplicationIdle(t); err != nil {
						return err
					}
					if _, found, err := f.replica(t, "flink/orders/after-drift"); err != nil || !found {
						return fmt.Errorf("after the apply the object did not replicate (found %v, %v)", found, err)
					}
					return nil
				})},
			},
		},
	})
}
