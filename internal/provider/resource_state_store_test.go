package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

const testJobID = "9f3c2a8d7e6b5a4c3d2e1f0a9b8c7d6e"

func storesConfig(bucket string, app1, app1Force, app10Force bool) string {
	cfg := fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}

resource "flinkstate_state_store" "app10" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = "flink/app10"
  force_destroy = %v
}
`, bucket, app10Force)
	if app1 {
		cfg += fmt.Sprintf(`
resource "flinkstate_state_store" "app1" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = "flink/app1"
  force_destroy = %v
}
`, app1Force)
	}
	return cfg
}

// putObjects writes keys (empty bodies) with a few concurrent writers.
func putObjects(t *testing.T, bucket string, keys []string) {
	t.Helper()
	c := testAWS(t).S3
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 8)
	for _, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func(k string) {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader("")}); err != nil {
				errs <- fmt.Errorf("put %s: %w", k, err)
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func countUnder(t *testing.T, bucket, prefix string) int {
	t.Helper()
	n, _, err := s3state.Contents(context.Background(), testAWS(t).S3, bucket, prefix, 1<<30)
	if err != nil {
		t.Fatalf("counting s3://%s/%s: %v", bucket, prefix, err)
	}
	return n
}

const storeApp1 = "flinkstate_state_store.app1"

// app1State is what a store at flink/app1 holds in the tests: chk-9 and
// chk-10 complete, chk-11 in progress (no _metadata), 1000 shared files
// (more than one page of a listing), a savepoint and HA metadata. Beside it:
// app10, which shares the "flink/app1" string prefix, and a file directly
// beside the stores.
func app1State() (app1, app10, beside []string) {
	job := "flink/app1/checkpoints/" + testJobID
	app1 = []string{job + "/chk-9/_metadata", job + "/chk-10/_metadata", job + "/chk-11/part-0",
		"flink/app1/savepoints/savepoint-9f3c2a-1/_metadata", "flink/app1/ha/orders/completedCheckpoint1"}
	for i := 0; i < 1000; i++ {
		app1 = append(app1, fmt.Sprintf("%s/shared/%04d-sst", job, i))
	}
	app10 = []string{"flink/app10/checkpoints/" + testJobID + "/chk-1/_metadata", "flink/app10/savepoints/s/_metadata", "flink/app10/ha/x"}
	beside = []string{"flink/app1.txt"}
	return app1, app10, beside
}

func TestAccStateStore_basic(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-store-")
	var token string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{{
			Config: storesConfig(bucket, true, false, false),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(storeApp1, tfjsonPath("id"), knownvalue.StringExact(bucket+"/flink/app1")),
				statecheck.ExpectKnownValue(storeApp1, tfjsonPath("uri"), knownvalue.StringExact("s3://"+bucket+"/flink/app1")),
				statecheck.ExpectKnownValue(storeApp1, tfjsonPath("checkpoint_dir"), knownvalue.StringExact("s3://"+bucket+"/flink/app1/checkpoints")),
				statecheck.ExpectKnownValue(storeApp1, tfjsonPath("savepoint_dir"), knownvalue.StringExact("s3://"+bucket+"/flink/app1/savepoints")),
				statecheck.ExpectKnownValue(storeApp1, tfjsonPath("ha_dir"), knownvalue.StringExact("s3://"+bucket+"/flink/app1/ha")),
				// The marker in S3 names this configuration's owner_token.
				recordAttr(storeApp1, "owner_token", &token),
				expectAPI(func() error {
					m, err := s3state.ReadMarker(context.Background(), testAWS(t).S3, store.Store{Bucket: bucket, Prefix: "flink/app1"})
					if err != nil || m == nil || m.Owner != token {
						return fmt.Errorf("owner_token %q does not match the marker %+v (%v)", token, m, err)
					}
					return nil
				}),
			},
		}},
	})
}

func TestAccStateStore_import(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-store-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storesConfig(bucket, true, false, false)},
			{
				ResourceName:            storeApp1,
				ImportState:             true,
				ImportStateId:           exampleImportID(t, "flinkstate_state_store", "acme-flink-state", bucket, "flink/orders", "flink/app1"),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"force_destroy"},
			},
		},
	})
}

// Removing app1 from the configuration while it holds state: refused,
// nothing deleted, and the error names the counts and the newest completed
// checkpoint (chk-10, not chk-9 or chk-11).
func TestAccStateStore_destroyRefusedWhileStateStored(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-store-")
	app1, app10, beside := app1State()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storesConfig(bucket, true, false, false)},
			{
				PreConfig: func() {
					putObjects(t, bucket, append(append(append([]string{}, app1...), app10...), beside...))
				},
				Config: storesConfig(bucket, false, false, false),
				ExpectError: errorRE("State store is not empty", "s3://"+bucket+"/flink/app1 holds Flink state: 1003 objects under checkpoints/",
					"1 object under savepoints/, 1 object under ha/",
					"Newest completed checkpoint: s3://"+bucket+"/flink/app1/checkpoints/"+testJobID+"/chk-10 (job", "Nothing was deleted"),
			},
			{
				Config: storesConfig(bucket, true, true, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(storeApp1, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if n := countUnder(t, bucket, "flink/app1/"); n != len(app1)+1 {
						return fmt.Errorf("after the refused destroy app1 holds %d objects, want all %d and its marker", n, len(app1))
					}
					return nil
				})},
			},
			{
				// Let the final destroy through.
				Config: storesConfig(bucket, false, false, true),
			},
		},
	})
}

// With force_destroy, app1 goes with everything under flink/app1/ (more than
// a page of objects) and nothing else: not app10, not the file beside it.
func TestAccStateStore_forceDestroyKeepsSiblings(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-store-")
	app1, app10, beside := app1State()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storesConfig(bucket, true, true, false)},
			{
				PreConfig: func() {
					putObjects(t, bucket, append(append(append([]string{}, app1...), app10...), beside...))
				},
				Config: storesConfig(bucket, false, false, false),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if n := countUnder(t, bucket, "flink/app1/"); n != 0 {
						return fmt.Errorf("app1 still holds %d objects", n)
					}
					if n := countUnder(t, bucket, "flink/app10/"); n != len(app10)+1 {
						return fmt.Errorf("sibling app10 holds %d objects, want its %d and its marker", n, len(app10))
					}
					if n := countUnder(t, bucket, "flink/app1.txt"); n != 1 {
						return fmt.Errorf("the file beside the stores is gone")
					}
					return nil
				})},
			},
			{
				// Let the final destroy through.
				Config: storesConfig(bucket, false, false, true),
			},
		},
	})
}

// A store lives in its bucket: with the bucket deleted outside Terraform,
// the next plan creates both again (Read drops the store from state).
func TestAccStateStore_bucketDeletedOutOfBand(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-store-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storesConfig(bucket, true, false, false)},
			{
				PreConfig: func() {
					// The stores' markers are in it: empty it first.
					if _, err := s3state.DeleteAll(context.Background(), testAWS(t).S3, bucket, "", nil); err != nil {
						t.Fatalf("emptying the bucket out of band: %v", err)
					}
					if _, err := testAWS(t).S3.DeleteBucket(context.Background(), &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
						t.Fatalf("deleting the bucket out of band: %v", err)
					}
				},
				Config: storesConfig(bucket, true, false, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flinkstate_bucket.state", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("flinkstate_state_store.app1", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("flinkstate_state_store.app10", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(storeApp1, tfjsonPath("checkpoint_dir"), knownvalue.StringExact("s3://"+bucket+"/flink/app1/checkpoints")),
				},
			},
		},
	})
}

func TestStateStore_invalidInput(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ bucket, prefix, want string }{
		"leading slash":  {"acme", "/flink/orders", `(?s)prefix.*must not start with a slash`},
		"trailing slash": {"acme", "flink/orders/", `(?s)prefix.*must not end with a slash`},
		"empty segment":  {"acme", "flink//orders", `(?s)prefix.*empty segment`},
		"dot dot":        {"acme", "flink/../orders", `(?s)prefix.*\. or \.\. segments`},
		"wildcard":       {"acme", "flink/*", `(?s)prefix.*wildcards`},
		"bad bucket":     {"Acme", "flink/orders", `(?s)Invalid bucket name`},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config: fmt.Sprintf(`
resource "flinkstate_state_store" "s" {
  bucket = %q
  prefix = %q
}`, tc.bucket, tc.prefix),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// ownershipFixture is a bucket with this configuration's stores (app1,
// app10) for the ownership tests, and what they check afterwards.
type ownershipFixture struct {
	bucket      string
	app1, their store.Store
	token       string
}

func newOwnershipFixture() *ownershipFixture {
	bucket := randName("fs-own-")
	return &ownershipFixture{bucket: bucket, app1: store.Store{Bucket: bucket, Prefix: "flink/app1"}, their: store.Store{Bucket: bucket, Prefix: "flink/theirs"}}
}

func (f *ownershipFixture) base() string { return storesConfig(f.bucket, true, false, false) }

// withOther adds a store at prefix to the base configuration.
func (f *ownershipFixture) withOther(prefix string) string {
	return f.base() + fmt.Sprintf(`
resource "flinkstate_state_store" "other" {
  bucket        = flinkstate_bucket.state.bucket
  prefix        = %q
  force_destroy = true
}
`, prefix)
}

func (f *ownershipFixture) markerOwner(t *testing.T, s store.Store) (string, error) {
	m, err := s3state.ReadMarker(context.Background(), testAWS(t).S3, s)
	if err != nil || m == nil {
		return "", fmt.Errorf("marker of %s: %v %v", s.ID(), m, err)
	}
	return m.Owner, nil
}

// create is the first step: the base configuration, app1's token recorded.
func (f *ownershipFixture) create() resource.TestStep {
	return resource.TestStep{Config: f.base(), ConfigStateChecks: []statecheck.StateCheck{recordAttr(storeApp1, "owner_token", &f.token)}}
}

// writeTheirs puts another configuration's store (its marker, its token) at flink/theirs.
func (f *ownershipFixture) writeTheirs(t *testing.T) {
	if err := s3state.WriteMarker(context.Background(), testAWS(t).S3, f.their, "their-token", "test", true); err != nil {
		t.Fatal(err)
	}
}

// unchanged is the last step: nothing was adopted or changed by a refused
// create: an empty plan, app1's marker names this configuration, the other
// configuration's marker (when written) is intact.
func (f *ownershipFixture) unchanged(t *testing.T, theirs bool, more ...statecheck.StateCheck) resource.TestStep {
	checks := []statecheck.StateCheck{expectAPI(func() error {
		if owner, err := f.markerOwner(t, f.app1); err != nil || owner != f.token {
			return fmt.Errorf("app1's marker changed owner: %q (%v)", owner, err)
		}
		if theirs {
			if owner, err := f.markerOwner(t, f.their); err != nil || owner != "their-token" {
				return fmt.Errorf("the other configuration's marker changed: %q %v", owner, err)
			}
		}
		return nil
	})}
	return resource.TestStep{
		Config:            f.base(),
		ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		ConfigStateChecks: append(checks, more...),
	}
}

// Another configuration's store at the same prefix: a create refuses it
// and says how to import it instead.
func TestAccStateStore_createRefusesExistingStore(t *testing.T) {
	skipUnlessAcc(t)
	f := newOwnershipFixture()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, f.bucket),
		Steps: []resource.TestStep{
			f.create(),
			{
				PreConfig:   func() { f.writeTheirs(t) },
				Config:      f.withOther("flink/theirs"),
				ExpectError: errorRE("State store already exists", "terraform import ADDRESS "+f.bucket+"/flink/theirs"),
			},
			f.unchanged(t, true),
		},
	})
}

// A store inside another configuration's store is refused.
func TestAccStateStore_createRefusesPrefixInsideStore(t *testing.T) {
	skipUnlessAcc(t)
	f := newOwnershipFixture()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, f.bucket),
		Steps: []resource.TestStep{
			f.create(),
			{
				PreConfig:   func() { f.writeTheirs(t) },
				Config:      f.withOther("flink/theirs/inner"),
				ExpectError: errorRE("Prefix not free", "inside the state store "+f.bucket+"/flink/theirs"),
			},
			f.unchanged(t, true),
		},
	})
}

// A store on a prefix that already holds objects is refused; the objects stay.
func TestAccStateStore_createRefusesPrefixWithObjects(t *testing.T) {
	skipUnlessAcc(t)
	f := newOwnershipFixture()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, f.bucket),
		Steps: []resource.TestStep{
			f.create(),
			{
				PreConfig:   func() { putObjects(t, f.bucket, []string{"flink/legacy/checkpoints/x"}) },
				Config:      f.withOther("flink/legacy"),
				ExpectError: errorRE("Prefix not free", "already holds objects", "flink/legacy/checkpoints/x"),
			},
			f.unchanged(t, false, expectAPI(func() error {
				if n := countUnder(t, f.bucket, "flink/legacy/"); n != 1 {
					return fmt.Errorf("the objects under flink/legacy/ are gone")
				}
				return nil
			})),
		},
	})
}

// Another owner's marker at app1's prefix (e.g. the prefix was handed to
// another configuration): force_destroy must not reach it. Once the marker
// names this configuration again, force_destroy goes through, and objects
// beside the store (flink/legacy/) stay.
func TestAccStateStore_forceDestroyRefusedForOtherOwner(t *testing.T) {
	skipUnlessAcc(t)
	f := newOwnershipFixture()
	ctx := context.Background()
	state := []string{"flink/app1/checkpoints/" + testJobID + "/chk-1/_metadata", "flink/app1/ha/x"}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, f.bucket),
		Steps: []resource.TestStep{
			f.create(),
			{
				PreConfig: func() {
					if err := s3state.WriteMarker(ctx, testAWS(t).S3, f.app1, "someone-else", "test", false); err != nil {
						t.Fatal(err)
					}
					putObjects(t, f.bucket, append([]string{"flink/legacy/checkpoints/x"}, state...))
				},
				Config: storesConfig(f.bucket, true, true, false),
			},
			{
				Config:      storesConfig(f.bucket, false, false, false),
				ExpectError: errorRE("State store not owned by this configuration", "names another owner", "Nothing was deleted"),
			},
			{
				Config:           storesConfig(f.bucket, true, true, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if n := countUnder(t, f.bucket, "flink/app1/"); n != len(state)+1 {
						return fmt.Errorf("app1 holds %d objects after the refused force_destroy, want %d and the marker", n, len(state))
					}
					return nil
				})},
			},
			{
				// The marker names this configuration again: now force_destroy goes through.
				PreConfig: func() {
					if err := s3state.WriteMarker(ctx, testAWS(t).S3, f.app1, f.token, "test", false); err != nil {
						t.Fatal(err)
					}
				},
				Config: storesConfig(f.bucket, false, false, true),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if n := countUnder(t, f.bucket, "flink/app1/"); n != 0 {
						return fmt.Errorf("app1 still holds %d objects", n)
					}
					if n := countUnder(t, f.bucket, "flink/legacy/"); n != 1 {
						return fmt.Errorf("the objects under flink/legacy/ are gone")
					}
					return nil
				})},
			},
		},
	})
}

// A store nested below another (possible before markers existed) keeps its
// data when the outer store is force-destroyed.
func TestAccStateStore_forceDestroySkipsNestedStore(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-nest-")
	ctx := context.Background()
	inner := store.Store{Bucket: bucket, Prefix: "flink/app10/inner"}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storesConfig(bucket, false, false, true)},
			{
				PreConfig: func() {
					if err := s3state.WriteMarker(ctx, testAWS(t).S3, inner, "inner-owner", "test", false); err != nil {
						t.Fatal(err)
					}
					putObjects(t, bucket, []string{"flink/app10/inner/checkpoints/x", "flink/app10/checkpoints/y"})
				},
				// app10 leaves the configuration; its bucket stays.
				Config: fmt.Sprintf(`
resource "flinkstate_bucket" "state" {
  bucket        = %q
  force_destroy = true
}
`, bucket),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if n := countUnder(t, bucket, "flink/app10/inner/"); n != 2 {
						return fmt.Errorf("the nested store holds %d objects, want its marker and checkpoint", n)
					}
					if n := countUnder(t, bucket, "flink/app10/checkpoints/"); n != 0 {
						return fmt.Errorf("the outer store's own objects are still there")
					}
					return nil
				})},
			},
		},
	})
}

// Two applies create nested stores at once (flink/a here, flink/a/b by
// another configuration): both pass the nesting check before either marker
// exists. The proxy lets the other marker appear just before this create's
// marker is written; the check after the write sees it, this create removes
// its own marker and fails, and the other store is left alone.
func TestAccStateStore_nestedByRaceRefused(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-race-")
	ctx, c := context.Background(), testAWS(t).S3
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = s3state.DeleteAll(ctx, c, bucket, "", nil)
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	})
	inner := store.Store{Bucket: bucket, Prefix: "flink/a/b"}
	outer := store.Store{Bucket: bucket, Prefix: "flink/a"}
	p := newFaultProxy(t)
	var once sync.Once
	race := func(r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+outer.MarkerKey()) {
			once.Do(func() {
				if err := s3state.WriteMarker(ctx, c, inner, "the-other-apply", "test", true); err != nil {
					t.Errorf("writing the other store's marker: %v", err)
				}
			})
		}
	}
	p.before.Store(&race)
	cfg := awsProxyProvider(p.URL) + fmt.Sprintf(`
resource "flinkstate_state_store" "a" {
  bucket = %q
  prefix = "flink/a"
}
`, bucket)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: errorRE("Prefix not free", "flink/a/b was created at the same time", "marker was removed again"),
		}},
	})
	if m, err := s3state.ReadMarker(ctx, c, outer); err != nil || m != nil {
		t.Errorf("the losing store's marker: %+v, %v; want it removed", m, err)
	}
	if m, err := s3state.ReadMarker(ctx, c, inner); err != nil || m == nil || m.Owner != "the-other-apply" {
		t.Errorf("the other store's marker: %+v, %v; want it left alone", m, err)
	}
}
