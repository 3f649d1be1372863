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
)

// The orphan report names a file planted under shared/ that no checkpoint
// references, and neither the referenced shared file nor one written after
// the newest _metadata (unsettled).
func TestAccOrphanedStateFiles(t *testing.T) {
	skipUnlessAcc(t)
	cp := loadRealCheckpoint(t)
	orphan := cp.jobDir() + "/shared/5e1f2a3b-orphan"
	// S3 gives _metadata's time (Last-Modified) to the second, and the
	// test bed's listings to the millisecond: the orphan is written a
	// second before the checkpoint, the unsettled file a second after.
	cp.put(t, orphan, make([]byte, 1234))
	time.Sleep(1100 * time.Millisecond)
	cp.plant(t, 3)
	time.Sleep(1100 * time.Millisecond)
	later := cp.jobDir() + "/taskowned/written-after-metadata"
	cp.put(t, later, []byte("in progress"))
	addr := "data.flinkstate_orphaned_state_files.orders"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_orphaned_state_files" "orders" {
  store_id = "%s/%s"
  job_id   = %q
}
`, cp.bucket, cp.prefix, cp.jobID),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonPath("keys"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(cp.uri(orphan))})),
				statecheck.ExpectKnownValue(addr, tfjsonPath("orphan_count"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue(addr, tfjsonPath("total_bytes"), knownvalue.Int64Exact(1234)),
				statecheck.ExpectKnownValue(addr, tfjsonPath("retained_checkpoints"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(cp.chk(3))})),
				statecheck.ExpectKnownValue(addr, tfjsonPath("unsettled"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(cp.uri(later))})),
				statecheck.ExpectKnownValue(addr, tfjsonPath("truncated"), knownvalue.Bool(false)),
				// Read-only: every file is still there.
				expectAPI(func() error {
					for _, k := range []string{orphan, later, cp.sharedKey(), cp.jobDir() + "/chk-3/_metadata"} {
						if _, err := testAWS(t).S3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(cp.bucket), Key: aws.String(k)}); err != nil {
							return fmt.Errorf("%s after the report: %v", k, err)
						}
					}
					return nil
				}),
			},
		}},
	})
}
