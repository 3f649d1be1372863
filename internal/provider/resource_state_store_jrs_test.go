package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// Flink's job result store under the HA directory (a new directory each
// deploy, never deleted: store.JobResultStoreDir) is not stored state: a
// store holding a checkpoint and job result store entries is refused
// naming the checkpoint only, and once the checkpoint is gone the destroy
// goes through without force_destroy and deletes the entries with the
// store, saying so.
func TestAccStateStore_jobResultStoreIsNotState(t *testing.T) {
	skipUnlessAcc(t)
	bucket := randName("fs-store-")
	jrs := []string{
		"flink/app1/ha/job-result-store/app1/4c0d9d0e-8f1e-4a5b-9a53-0f4d1c2b3a41/" + testJobID + ".json",
		"flink/app1/ha/job-result-store/app1/9b2f6c1a-2d3e-4f50-8a61-7b8c9d0e1f23/" + testJobID + "_DIRTY.json",
	}
	chk := "flink/app1/checkpoints/" + testJobID + "/chk-1/part-0"
	rec := &diagRecorder{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             checkBucketGone(t, bucket),
		Steps: []resource.TestStep{
			{Config: storesConfig(bucket, true, false, false)},
			{
				PreConfig:   func() { putObjects(t, bucket, append([]string{chk}, jrs...)) },
				Config:      storesConfig(bucket, false, false, false),
				ExpectError: errorRE("State store is not empty", "s3://"+bucket+"/flink/app1 holds Flink state: 1 object under checkpoints/. Nothing was deleted"),
			},
			{
				PreConfig: func() {
					if _, err := testAWS(t).S3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(chk)}); err != nil {
						t.Fatal(err)
					}
					rec.reset()
				},
				Config: storesConfig(bucket, false, false, false),
				ConfigStateChecks: []statecheck.StateCheck{expectAPI(func() error {
					if n := countUnder(t, bucket, "flink/app1/"); n != 0 {
						return fmt.Errorf("%d objects left under flink/app1/ after the store's destroy", n)
					}
					return nil
				})},
				Check: rec.expectWarning("ApplyResourceChange", "Job result store entries deleted", "only 2 object versions of Flink's job result store",
					"s3://"+bucket+"/flink/app1/ha/job-result-store/"),
			},
		},
	})
}
