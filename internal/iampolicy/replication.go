package iampolicy

import (
	"fmt"
	"strings"
)

// The role S3 assumes to replicate a state bucket's prefixes to another
// bucket (S3 User Guide, "Setting up permissions for live replication",
// step 2, "Creating an IAM role for Amazon S3 to assume").

// ReplicationPrincipal is the service principal S3 replication assumes a
// role as (same page: the trust policy names s3.amazonaws.com).
const ReplicationPrincipal = "s3.amazonaws.com"

// ReplicationTrust lets S3 assume the role, and nothing else.
func ReplicationTrust() Document {
	return Document{Version: "2012-10-17", Statement: []Statement{{
		Effect:    "Allow",
		Principal: map[string]string{"Service": ReplicationPrincipal},
		Action:    []string{"sts:AssumeRole"},
	}}}
}

// Replication actions (S3 User Guide, "Setting up permissions for live
// replication"; Service Authorization Reference, "Actions defined by Amazon
// S3"): on the source bucket, reading its replication configuration and
// listing it; on the source objects, reading each version with its ACL and
// tags for replication; on the destination objects, writing replicas and
// their tags, and delete markers only when they replicate
// (s3:ReplicateDelete, same page: needed "if delete marker replication is
// enabled").
var (
	ReplicationSourceBucketActions = []string{"s3:GetReplicationConfiguration", "s3:ListBucket"}
	ReplicationSourceObjectActions = []string{"s3:GetObjectVersionForReplication", "s3:GetObjectVersionAcl", "s3:GetObjectVersionTagging"}
	ReplicationDestinationActions  = []string{"s3:ReplicateObject", "s3:ReplicateTags"}
	ReplicationDeleteAction        = "s3:ReplicateDelete"
)

// ReplicationRulePrefix is the key prefix a state prefix's replication rule
// filters on: the prefix and "/", so "flink/app1" does not reach
// "flink/app10" (as the state role's s3:prefix, Permissions).
func ReplicationRulePrefix(prefix string) string { return prefix + "/" }

// ValidateReplicationPrefix returns what is wrong with a state prefix to
// replicate, or "": not empty, no leading or trailing "/" (the rule adds
// it), like a state store's prefix.
func ValidateReplicationPrefix(p string) string {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return `must be a state store's prefix, not empty and without a leading or trailing "/" (e.g. flink/orders)`
	}
	return ""
}

// ReplicationPermissions is the least-privilege policy of the replication
// role: the source bucket's configuration and listing, the source prefixes'
// versions, and the destination prefixes' replicas, in the partition of the
// provider's region.
func ReplicationPermissions(partition, source, destination string, prefixes []string, deleteMarkers bool) (Document, error) {
	if len(prefixes) == 0 {
		return Document{}, fmt.Errorf("at least one prefix is required")
	}
	if partition == "" {
		partition = "aws"
	}
	src := fmt.Sprintf("arn:%s:s3:::%s", partition, source)
	dst := fmt.Sprintf("arn:%s:s3:::%s", partition, destination)
	var srcObjects, dstObjects []string
	seen := map[string]bool{}
	for _, p := range prefixes {
		if msg := ValidateReplicationPrefix(p); msg != "" {
			return Document{}, fmt.Errorf("prefix %q %s", p, msg)
		}
		if seen[p] {
			return Document{}, fmt.Errorf("prefix %q is listed twice", p)
		}
		seen[p] = true
		srcObjects = append(srcObjects, src+"/"+ReplicationRulePrefix(p)+"*")
		dstObjects = append(dstObjects, dst+"/"+ReplicationRulePrefix(p)+"*")
	}
	dstActions := append([]string(nil), ReplicationDestinationActions...)
	if deleteMarkers {
		dstActions = append(dstActions, ReplicationDeleteAction)
	}
	doc := Document{Version: "2012-10-17", Statement: []Statement{
		{Sid: "SourceBucket", Effect: "Allow", Action: ReplicationSourceBucketActions, Resource: []string{src}},
		{Sid: "SourcePrefixes", Effect: "Allow", Action: ReplicationSourceObjectActions, Resource: srcObjects},
		{Sid: "DestinationPrefixes", Effect: "Allow", Action: dstActions, Resource: dstObjects},
	}}
	if n := Size(doc.JSON()); n > MaxRoleInlinePolicySize {
		return doc, fmt.Errorf("the replication policy for %d prefixes is %d characters, over IAM's %d-character limit for a role's inline policies", len(prefixes), n, MaxRoleInlinePolicySize)
	}
	return doc, nil
}
