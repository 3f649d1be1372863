package checkpoint

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// MetadataFile is the file Flink writes last into a completed checkpoint
// (chk-N) or savepoint directory; a directory without it cannot be restored
// (Flink's AbstractFsCheckpointStorageAccess.METADATA_FILE_NAME, resolved by
// AbstractFsCheckpointStorageAccess.resolveCheckpointPointer, which accepts
// the directory or the _metadata file itself).
const MetadataFile = "_metadata"

// MetadataURI is where the _metadata of a restore target is: the target
// itself when it names the file, else <target>/_metadata.
func MetadataURI(target string) string {
	t := strings.TrimSuffix(target, "/")
	if strings.HasSuffix(t, "/"+MetadataFile) {
		return t
	}
	return t + "/" + MetadataFile
}

// ValidateRestorePath says what is wrong with a restore target given to
// job.initial_savepoint_path ("" when it is fine). Empty is refused with its
// likely cause: a flinkstate_snapshot reports an empty path until it has
// completed with one, so that a deployment planned to restore from it never
// starts without state (the operator deploys statelessly when
// initialSavepointPath is empty: ApplicationReconciler.deploy,
// flink-kubernetes-operator release-1.15.0).
func ValidateRestorePath(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty: a flinkstate_snapshot's path is empty until the snapshot has completed with a path (its wait timed out, " +
			"or the operator completed a checkpoint-type snapshot without one), and the job would start without state. Apply again " +
			"once the snapshot has completed, or remove initial_savepoint_path to start the job without state"
	}
	return store.ValidatePath(s)
}

// MetadataTime is when the _metadata of a savepoint or checkpoint (target:
// its directory or the file) was last written: Flink writes it last, when
// the snapshot completes (Checkpoints.storeCheckpointMetadata), so it dates
// the snapshot.
func MetadataTime(ctx context.Context, c S3API, target string) (time.Time, error) {
	uri := MetadataURI(target)
	bucket, key, err := ParseS3URI(uri)
	if err != nil {
		return time.Time{}, err
	}
	out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if notfound.Is(awsclient.NotFound(uri, err)) {
		return time.Time{}, fmt.Errorf("%s does not exist", uri)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading %s: %w", uri, err)
	}
	if out.LastModified == nil {
		return time.Time{}, fmt.Errorf("S3 gave no last-modified time for %s", uri)
	}
	return *out.LastModified, nil
}
