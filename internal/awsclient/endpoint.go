package awsclient

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Endpoint is the URL the client of service ("S3", "IAM", "EKS", "STS")
// sends to: the configured endpoint (aws.endpoint, AWS_ENDPOINT_URL,
// AWS_ENDPOINT_URL_<SERVICE>, all of which the SDK folds into the client's
// BaseEndpoint), else the service's regional AWS endpoint. It is for
// messages: a call that got no answer names where it went.
func (c *Clients) Endpoint(service string) string {
	var base *string
	switch service {
	case "S3":
		base = c.S3.Options().BaseEndpoint
	case "IAM":
		base = c.IAM.Options().BaseEndpoint
	case "EKS":
		base = c.EKS.Options().BaseEndpoint
	case "STS":
		base = c.STS.Options().BaseEndpoint
	}
	if b := aws.ToString(base); b != "" {
		return b
	}
	if service == "IAM" {
		return "the AWS IAM endpoint"
	}
	return fmt.Sprintf("the AWS %s endpoint in %s", service, c.Config.Region)
}
