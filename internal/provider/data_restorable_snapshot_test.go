package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// realSavepoint is the canonical savepoint real Flink 2.2.1 wrote
// (internal/checkpoint/testdata/canonical-savepoint): its _metadata, which
// names its one state file relative to its own directory, and that file's
// name and size.
func realSavepoint(t *testing.T) (meta []byte, file string, size int64) {
	t.Helper()
	dir := filepath.Join("..", "checkpoint", "testdata", "canonical-savepoint")
	meta, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(dir, "objects.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		i := strings.LastIndex(l, " ")
		if l == "" || strings.HasPrefix(l, "#") || i <= 0 || l[:i] == "_metadata" {
			continue
		}
		if size, err = strconv.ParseInt(l[i+1:], 10, 64); err != nil {
			t.Fatal(err)
		}
		return meta, l[:i], size
	}
	t.Fatal("objects.txt names no state file")
	return nil, "", 0
}

// A replica bucket mid-replication, written oldest first: a whole
// savepoint; a newer savepoint whose _metadata arrived before its state
// file; a newer checkpoint copied from the source bucket (its _metadata
// names its shared file there); the newest savepoint's state file without
// its _metadata. The data source returns the whole savepoint, not the
// newest _metadata, and lists the three newer ones with their reasons.
func TestAccRestorableSnapshot_replicaMidReplication(t *testing.T) {
	skipUnlessAcc(t)
	meta, file, size := realSavepoint(t)
	cp := loadRealCheckpoint(t) // the source bucket, with the checkpoint there
	cp.plant(t, 3)
	replica := testCheckpointBucket(t)
	spDir := cp.prefix + "/savepoints/"
	whole, partial, newest := spDir+"savepoint-2d6fb8-000000000001", spDir+"savepoint-2d6fb8-000000000002", spDir+"savepoint-2d6fb8-000000000003"
	putBytes(t, replica, whole+"/"+file, make([]byte, size))
	putBytes(t, replica, whole+"/_metadata", meta)
	time.Sleep(1100 * time.Millisecond) // S3 dates objects to the second
	putBytes(t, replica, partial+"/_metadata", meta)
	time.Sleep(1100 * time.Millisecond)
	for k, n := range cp.files {
		putBytes(t, replica, k, make([]byte, n))
	}
	putBytes(t, replica, cp.jobDir()+"/chk-3/_metadata", cp.meta)
	time.Sleep(1100 * time.Millisecond)
	putBytes(t, replica, newest+"/"+file, make([]byte, size))

	u := func(key string) string { return "s3://" + replica + "/" + key }
	ds := "data.flinkstate_restorable_snapshot.dr"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_restorable_snapshot" "dr" {
  savepoint_dir  = %q
  checkpoint_dir = %q
}

data "flinkstate_restorable_snapshot" "checkpoints_only" {
  checkpoint_dir = %[2]q
}
`, u(cp.prefix+"/savepoints"), u(cp.prefix+"/checkpoints")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonPath("found"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(ds, tfjsonPath("path"), knownvalue.StringExact(u(whole))),
				statecheck.ExpectKnownValue(ds, tfjsonPath("type"), knownvalue.StringExact("savepoint")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("metadata_path"), knownvalue.StringExact(u(whole)+"/_metadata")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("files"), knownvalue.Int64Exact(1)),
				// What the replica's savepoint records (real Flink 2.2.1's
				// canonical savepoint of the test job): the pre-flight's facts.
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("format"), knownvalue.StringExact("CANONICAL savepoint")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("keyed_state_kind"), knownvalue.StringExact("canonical")),
				statecheck.ExpectKnownValue(ds, tfjsonPath("contents").AtMapKey("metadata_version"), knownvalue.Int64Exact(6)),
				statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.checkpoints_only", tfjsonPath("contents"), knownvalue.Null()),
				statecheck.ExpectKnownValue(ds, tfjsonPath("skipped"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact(u(newest) + ": no _metadata (in progress, not yet replicated, or abandoned)"),
					knownvalue.StringExact(u(cp.jobDir()+"/chk-3") + ": not relocatable: 1 of the 1 files it references are named by " +
						"absolute path outside its directory: " + cp.uri(cp.sharedKey())),
					knownvalue.StringExact(u(partial) + ": partly arrived: 1 of the 1 files it references are missing: " + u(partial+"/"+file)),
				})),
				statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.checkpoints_only", tfjsonPath("found"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.checkpoints_only", tfjsonPath("path"), knownvalue.Null()),
			},
		}},
	})
}

// With require = true and nothing that qualifies, the read fails naming
// each snapshot passed over and why.
func TestAccRestorableSnapshot_require(t *testing.T) {
	skipUnlessAcc(t)
	meta, file, _ := realSavepoint(t)
	replica := testCheckpointBucket(t)
	sp := "flink/orders/savepoints/savepoint-2d6fb8-000000000009"
	putBytes(t, replica, sp+"/_metadata", meta)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "flinkstate_restorable_snapshot" "dr" {
  savepoint_dir = "s3://%s/flink/orders/savepoints"
  require       = true
}
`, replica),
			ExpectError: errorRE("No snapshot restores from where it is: 1 found", "s3://"+replica+"/"+sp+": partly arrived",
				"s3://"+replica+"/"+sp+"/"+file, "require = false"),
		}},
	})
}

// Neither directory is a configuration error at validate.
func TestAccRestorableSnapshot_needsADirectory(t *testing.T) {
	skipUnlessAcc(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `data "flinkstate_restorable_snapshot" "dr" {}`,
			ExpectError: errorRE("savepoint_dir", "checkpoint_dir"),
		}},
	})
}

// The data source's example, read against a bucket holding one whole
// savepoint (the example's provider alias is the test's one provider).
func TestAccExample_dataSourceRestorableSnapshot(t *testing.T) {
	skipUnlessAcc(t)
	meta, file, size := realSavepoint(t)
	replica := testCheckpointBucket(t)
	sp := "flink/orders/savepoints/savepoint-2d6fb8-00000000000a"
	putBytes(t, replica, sp+"/"+file, make([]byte, size))
	putBytes(t, replica, sp+"/_metadata", meta)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: example(t, "data-sources/flinkstate_restorable_snapshot/data-source.tf",
				"  provider      = flinkstate.dr\n", "", `"s3://acme-flink-state-dr/`, `"s3://`+replica+"/"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.orders", tfjsonPath("path"), knownvalue.StringExact("s3://"+replica+"/"+sp)),
				statecheck.ExpectKnownValue("data.flinkstate_restorable_snapshot.orders", tfjsonPath("skipped"), knownvalue.ListSizeExact(0)),
			},
		}},
	})
}
