package awsfront

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// SecondRegion is the test bed's second AWS region (region B of a
// cross-region set-up): the emulator serves every region from one
// endpoint, and the front keeps each bucket in the region it was created
// in. .testbed/env exports it as FLINKSTATE_SECOND_REGION.
const SecondRegion = "us-west-2"

// testbedRegions are the regions the front's TLS listener answers for
// (awsHostNames): the test bed's own and the second one.
func testbedRegions(region string) []string {
	if region == SecondRegion {
		return []string{region}
	}
	return []string{region, SecondRegion}
}

// Bucket regions. kumo ignores CreateBucket's LocationConstraint and answers
// every GetBucketLocation with us-east-1 (kumo internal/service/s3/handlers.go:
// bucketTags, "kumo ignores the body's LocationConstraint", and
// serveBucketSubresourceStub). The front records each bucket's region from
// the CreateBucket it forwards, answers GetBucketLocation from that record,
// and refuses requests signed for another region, as S3 does.

// createBucketRegion reads the region a CreateBucket body asks for: no body
// or no LocationConstraint is us-east-1 (Amazon S3 API Reference,
// CreateBucket: "If you don't specify a Region, the bucket is created in the
// US East (N. Virginia) Region (us-east-1)"; the legacy "EU" is eu-west-1).
func createBucketRegion(body []byte) (string, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return "us-east-1", nil
	}
	var c struct {
		LocationConstraint string `xml:"LocationConstraint"`
	}
	if err := xml.Unmarshal(body, &c); err != nil {
		return "", err
	}
	switch c.LocationConstraint {
	case "":
		return "us-east-1", nil
	case "EU":
		return "eu-west-1", nil
	}
	return c.LocationConstraint, nil
}

// locationConstraintBody is GetBucketLocation's answer: us-east-1 buckets
// have an empty (null) LocationConstraint (Amazon S3 API Reference,
// GetBucketLocation: "Buckets in Region us-east-1 have a LocationConstraint
// of null").
func locationConstraintBody(region string) []byte {
	if region == "us-east-1" {
		region = ""
	}
	return []byte(xml.Header + `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + region + `</LocationConstraint>`)
}

// writeS3Error writes an S3 error response (Amazon S3 API Reference,
// "Error responses": an Error element with Code, Message, and the
// resource).
func writeS3Error(w http.ResponseWriter, status int, code, message, resource string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	type s3Error struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string   `xml:"Code"`
		Message  string   `xml:"Message"`
		Resource string   `xml:"Resource,omitempty"`
	}
	b, _ := xml.Marshal(s3Error{Code: code, Message: message, Resource: resource})
	_, _ = w.Write(append([]byte(xml.Header), b...))
}

// wrongRegion answers a request signed for a region other than its
// bucket's as S3 does: 400 AuthorizationHeaderMalformed naming the region
// expected, with the x-amz-bucket-region header (Amazon S3 API Reference,
// "Error responses": AuthorizationHeaderMalformed; S3 User Guide,
// "Making requests": a request must be signed for the bucket's Region).
func wrongRegion(w http.ResponseWriter, bucket, signed, want string) {
	w.Header().Set("x-amz-bucket-region", want)
	writeS3Error(w, http.StatusBadRequest, "AuthorizationHeaderMalformed",
		fmt.Sprintf("The authorization header is malformed; the region '%s' is wrong; expecting '%s'", signed, want), "/"+bucket)
}
