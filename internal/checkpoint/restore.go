package checkpoint

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
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

// VerifyRestoreTarget checks that target (a chk-N or savepoint directory, or
// its _metadata file) holds the _metadata a restore reads. It returns an
// error that says what is missing and what to point at instead.
func VerifyRestoreTarget(ctx context.Context, c S3API, target string) error {
	uri := MetadataURI(target)
	bucket, key, err := ParseS3URI(uri)
	if err != nil {
		return err
	}
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if awsclient.IsNotFound(err) {
		return fmt.Errorf("%s has no %s: it is not a completed checkpoint (chk-N) or savepoint directory, so Flink could not restore "+
			"from it. Point at one that has it, e.g. data.flinkstate_latest_checkpoint's path or a flinkstate_snapshot's path", target, uri)
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", uri, err)
	}
	return nil
}
