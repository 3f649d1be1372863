package testbed

import "github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/awsfront"

// Names of the AWS front (package awsfront) that the provider's tests use
// through the test bed.

// SecondRegion is the test bed's second region (awsfront.SecondRegion).
const SecondRegion = awsfront.SecondRegion

// S3Request is one line of the front's S3 request log (awsfront.S3Request).
type S3Request = awsfront.S3Request

// ReadS3Requests reads the front's S3 request log (awsfront.ReadS3Requests).
func ReadS3Requests(path string) ([]S3Request, error) { return awsfront.ReadS3Requests(path) }
