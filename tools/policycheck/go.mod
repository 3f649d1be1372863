// policycheck evaluates IAM policy documents with an engine this project did
// not write (MinIO's, github.com/minio/pkg/v3/policy). It is its own module
// and runs as a separate program: MinIO's package is AGPL-3.0, and the
// provider (MPL-2.0) neither imports nor ships it; only the tests run it.
module github.com/flinkstate/terraform-provider-flinkstate/tools/policycheck

go 1.24.0

require github.com/minio/pkg/v3 v3.1.3

require (
	github.com/goccy/go-json v0.10.5 // indirect
	github.com/minio/minio-go/v7 v7.0.88 // indirect
)
