package iampolicy

import (
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws/arn"
)

// Partitions. An ARN is arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE,
// and "a partition is a group of AWS Regions. Each AWS account is scoped to
// one partition" (IAM User Guide, "Amazon Resource Names (ARNs)"; aws,
// aws-cn, aws-us-gov). "Partitions have independent instances of AWS
// Identity and Access Management (IAM) and provide a hard boundary between
// Regions in different partitions ... You cannot use IAM credentials from
// one partition to interact with resources in a different partition" (AWS
// whitepaper "AWS Fault Isolation Boundaries", "Partitions"). So every ARN a
// role, a bucket or an association names must be in the partition of the
// provider's region, where the provider builds its own ARNs (the bucket's,
// the permission policy's): a trust naming an aws-cn OIDC provider beside a
// permission policy on arn:aws:s3::: grants nothing that can be used
// together, and AWS accepts such documents without complaint.

// NamedARN is an ARN and the attribute that gave it ("kms_key_arns[0]").
type NamedARN struct {
	Attr, ARN string
}

// ARNPartition returns the partition of an ARN, or "" when s is not one.
func ARNPartition(s string) string {
	a, err := arn.Parse(s)
	if err != nil || !partitionRE.MatchString(a.Partition) {
		return ""
	}
	return a.Partition
}

// SamePartition checks that the ARNs of one resource share a partition: it
// returns the index of the first ARN whose partition differs from the
// first one's, and that first one's index (the reference); -1, -1 when
// they agree. ARNs that do not parse are skipped: their own check names
// them.
func SamePartition(arns []NamedARN) (i, ref int) {
	ref = -1
	for i, a := range arns {
		p := ARNPartition(a.ARN)
		switch {
		case p == "":
		case ref < 0:
			ref = i
		case p != ARNPartition(arns[ref].ARN):
			return i, ref
		}
	}
	return -1, -1
}

// OutsidePartition tells whether an ARN is in another partition than the
// given one (that of the provider's region), and which. An ARN that does
// not parse, or an unknown partition (""), is not outside.
func OutsidePartition(s, partition string) (got string, outside bool) {
	got = ARNPartition(s)
	return got, got != "" && partition != "" && got != partition
}

// eksIssuerRE reads the region of an EKS cluster's OIDC issuer, as the
// cluster shows it (EKS User Guide, "Create an IAM OIDC provider for your
// cluster": oidc.eks.REGION.amazonaws.com/id/ID; .amazonaws.com.cn in
// China).
var eksIssuerRE = regexp.MustCompile(`^oidc\.eks\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?/id/`)

// OIDCIssuerRegion is the region an EKS OIDC provider ARN's issuer names,
// or "" for another issuer.
func OIDCIssuerRegion(oidcProviderARN string) string {
	issuer, ok := oidcIssuer(oidcProviderARN)
	if !ok {
		return ""
	}
	if m := eksIssuerRE.FindStringSubmatch(issuer); m != nil {
		return m[1]
	}
	return ""
}
