package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/s3state"
)

const (
	jobA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	jobB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	jobC = "cccccccccccccccccccccccccccccccc"
)

// testCheckpointBucket creates a bucket and writes objects in order: groups
// are written one after another with a pause, so _metadata files of later
// groups are newer (S3 times have a resolution of a second).
func testCheckpointBucket(t *testing.T, groups ...[]string) string {
	t.Helper()
	ctx := context.Background()
	bucket := randName("fs-chk-")
	c := testAWS(t).S3
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = s3state.DeleteAll(ctx, c, bucket, "", nil)
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	})
	for i, g := range groups {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		putObjects(t, bucket, g)
	}
	return bucket
}

func chkKeys(dir, job string, ids []int, complete bool) []string {
	var keys []string
	for _, id := range ids {
		if complete {
			keys = append(keys, fmt.Sprintf("%s/%s/chk-%d/_metadata", dir, job, id))
		} else {
			keys = append(keys, fmt.Sprintf("%s/%s/chk-%d/3f9a-part", dir, job, id))
		}
	}
	return keys
}

func TestAccLatestCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	dir := "flink/orders/checkpoints"
	// Job A: chk-9 and chk-10 complete (chk-10 must win over chk-9: numeric
	// order), chk-11 in progress, and shared/taskowned state files.
	a := append(chkKeys(dir, jobA, []int{8, 9, 10}, true), chkKeys(dir, jobA, []int{11}, false)...)
	a = append(a, dir+"/"+jobA+"/shared/0001-sst", dir+"/"+jobA+"/taskowned/x", dir+"/not-a-job/chk-99/_metadata")
	// Job B, written later: its chk-3 is the newest completed checkpoint of the directory.
	b := chkKeys(dir, jobB, []int{3}, true)
	// Job C elsewhere: 1006 checkpoint directories, more than one page of a
	// listing. chk-1..chk-999 complete, chk-1000..chk-1005 in progress, so the
	// newest complete one, chk-999, sorts last by name.
	var cIDs, cOpen []int
	for i := 1; i <= 999; i++ {
		cIDs = append(cIDs, i)
	}
	for i := 1000; i <= 1005; i++ {
		cOpen = append(cOpen, i)
	}
	c := append(chkKeys("flink/big/checkpoints", jobC, cIDs, true), chkKeys("flink/big/checkpoints", jobC, cOpen, false)...)
	bucket := testCheckpointBucket(t, append(a, c...), b)
	lc := func(name string) string { return "data.flinkstate_latest_checkpoint." + name }

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "any_job" {
  checkpoint_dir = "s3://%[1]s/flink/orders/checkpoints"
}

data "flinkstate_latest_checkpoint" "job_a" {
  store_id = "%[1]s/flink/orders"
  job_id   = %[2]q
}

data "flinkstate_latest_checkpoint" "many" {
  checkpoint_dir = "s3://%[1]s/flink/big/checkpoints/"
}

data "flinkstate_latest_checkpoint" "empty" {
  checkpoint_dir = "s3://%[1]s/flink/nothing-here/checkpoints"
}

data "flinkstate_latest_checkpoint" "unknown_job" {
  store_id = "%[1]s/flink/orders"
  job_id   = "dddddddddddddddddddddddddddddddd"
}
`, bucket, jobA),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(lc("any_job"), tfjsonPath("found"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(lc("any_job"), tfjsonPath("job_id"), knownvalue.StringExact(jobB)),
				statecheck.ExpectKnownValue(lc("any_job"), tfjsonPath("checkpoint_id"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(lc("any_job"), tfjsonPath("path"), knownvalue.StringExact("s3://"+bucket+"/"+dir+"/"+jobB+"/chk-3")),

				statecheck.ExpectKnownValue(lc("job_a"), tfjsonPath("checkpoint_id"), knownvalue.Int64Exact(10)),
				statecheck.ExpectKnownValue(lc("job_a"), tfjsonPath("path"), knownvalue.StringExact("s3://"+bucket+"/"+dir+"/"+jobA+"/chk-10")),
				statecheck.ExpectKnownValue(lc("job_a"), tfjsonPath("metadata_path"), knownvalue.StringExact("s3://"+bucket+"/"+dir+"/"+jobA+"/chk-10/_metadata")),
				statecheck.ExpectKnownValue(lc("job_a"), tfjsonPath("last_modified"), knownvalue.StringRegexp(regexpMust(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`))),

				statecheck.ExpectKnownValue(lc("many"), tfjsonPath("checkpoint_id"), knownvalue.Int64Exact(999)),
				statecheck.ExpectKnownValue(lc("many"), tfjsonPath("job_id"), knownvalue.StringExact(jobC)),

				statecheck.ExpectKnownValue(lc("empty"), tfjsonPath("found"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(lc("empty"), tfjsonPath("path"), knownvalue.Null()),
				statecheck.ExpectKnownValue(lc("unknown_job"), tfjsonPath("found"), knownvalue.Bool(false)),
			},
		}},
	})
}

func TestAccLatestCheckpoint_require(t *testing.T) {
	skipUnlessAcc(t)
	bucket := testCheckpointBucket(t, chkKeys("flink/orders/checkpoints", jobA, []int{1}, false))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "x" {
  checkpoint_dir = "s3://%s/flink/orders/checkpoints"
  require        = true
}`, bucket),
			ExpectError: errorRE("No completed checkpoint", "no chk-N directory with _metadata under s3://"+bucket+"/flink/orders/checkpoints/"),
		}},
	})
}

func TestLatestCheckpoint_invalidInput(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, want string }{
		"job id not hex": {`  checkpoint_dir = "s3://b/flink/checkpoints"
  job_id = "not-a-job"`, "job_id"},
		"both sources": {`  checkpoint_dir = "s3://b/flink/checkpoints"
  store_id = "b/flink"`, "checkpoint_dir"},
		"neither source":     {``, "checkpoint_dir"},
		"dir not an s3 uri":  {`  checkpoint_dir = "/tmp/checkpoints"`, "checkpoint_dir"},
		"store id no prefix": {`  store_id = "bucket"`, "store_id"},
	}
	for label, tc := range cases {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      "data \"flinkstate_latest_checkpoint\" \"x\" {\n" + tc.body + "\n}",
					PlanOnly:    true,
					ExpectError: errorRE(tc.want),
				}},
			})
		})
	}
}

// complete = true passes over the newest checkpoint, whose shared file is
// missing, returns the older complete one, and says which it skipped and
// why; without it, the newest _metadata wins.
func TestAccLatestCheckpoint_complete(t *testing.T) {
	skipUnlessAcc(t)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	const gone = "00000000-0000-4000-8000-000000000000"
	cp.put(t, cp.jobDir()+"/chk-4/_metadata", cp.withSharedFile(t, gone))
	missing := cp.uri(cp.jobDir() + "/shared/" + gone)
	ds := func(name string) string { return "data.flinkstate_latest_checkpoint." + name }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_latest_checkpoint" "complete" {
  store_id = "%[1]s/%[2]s"
  job_id   = %[3]q
  complete = true
}

data "flinkstate_latest_checkpoint" "any_job" {
  checkpoint_dir = "s3://%[1]s/%[2]s/checkpoints"
  complete       = true
}

data "flinkstate_latest_checkpoint" "newest" {
  store_id = "%[1]s/%[2]s"
  job_id   = %[3]q
}
`, cp.bucket, cp.prefix, cp.jobID),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds("complete"), tfjsonPath("found"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(ds("complete"), tfjsonPath("checkpoint_id"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(ds("complete"), tfjsonPath("path"), knownvalue.StringExact(cp.chk(3))),
				statecheck.ExpectKnownValue(ds("complete"), tfjsonPath("skipped"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("chk-4: 1 of the 1 files it references are missing: " + missing),
				})),
				statecheck.ExpectKnownValue(ds("any_job"), tfjsonPath("path"), knownvalue.StringExact(cp.chk(3))),
				statecheck.ExpectKnownValue(ds("any_job"), tfjsonPath("job_id"), knownvalue.StringExact(cp.jobID)),
				statecheck.ExpectKnownValue(ds("newest"), tfjsonPath("checkpoint_id"), knownvalue.Int64Exact(4)),
				statecheck.ExpectKnownValue(ds("newest"), tfjsonPath("skipped"), knownvalue.Null()),
			},
		}},
	})
}
