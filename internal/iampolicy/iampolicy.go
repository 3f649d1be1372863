// Package iampolicy builds the IAM documents of a Flink state role: the trust
// policy for IRSA or EKS Pod Identity, and a least-privilege permission
// policy on state stores (bucket + prefix). It does not import Terraform.
package iampolicy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
)

// MaxRoleInlinePolicySize is IAM's limit on the aggregate size of a role's
// inline policies, counted in characters without white space.
const MaxRoleInlinePolicySize = 10240

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one IAM statement. Field order is the order AWS shows.
type Statement struct {
	Sid       string                    `json:"Sid,omitempty"`
	Effect    string                    `json:"Effect"`
	Principal map[string]string         `json:"Principal,omitempty"`
	Action    []string                  `json:"Action"`
	Resource  []string                  `json:"Resource,omitempty"`
	Condition map[string]map[string]any `json:"Condition,omitempty"`
}

// JSON renders the document compactly (its length is then IAM's size).
func (d Document) JSON() string {
	b, _ := json.Marshal(d)
	return string(b)
}

// Size is the document's size as IAM counts it: characters without white space.
func Size(doc string) int {
	n := 0
	for _, r := range doc {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// ObjectActions are what Flink does to state files: write checkpoint and
// savepoint files (multipart for large ones), read them on restore, delete
// subsumed checkpoints and disposed savepoints.
var ObjectActions = []string{
	"s3:GetObject",
	"s3:PutObject",
	"s3:DeleteObject",
	"s3:AbortMultipartUpload",
	"s3:ListMultipartUploadParts",
}

// BucketActions are the bucket-level calls the S3 filesystems make that
// take no prefix.
var BucketActions = []string{"s3:GetBucketLocation"}

// ListActions are the listings, each granted only under a store's prefix
// (s3:prefix). S3A lists a directory with prefix "key/" and delimiter "/"
// (hadoop-aws S3AFileSystem.s3GetFileStatus: maybeAddTrailingSlash(key),
// then createListObjectsRequest(key, "/", 1); innerListStatus likewise
// appends "/"), so the bare prefix is never a listing Flink needs, and
// admitting it would list flink/app10/... to the role of flink/app1.
//
// s3:ListBucketMultipartUploads is not granted at all: s3:prefix is not a
// condition key of that action (the IAM engine of tools/policycheck refuses
// "unsupported condition keys [s3:prefix] for s3:ListBucketMultipartUploads"),
// so it could only be granted bucket-wide. Flink does not need it: its
// writers abort their own uploads by ID (s3:AbortMultipartUpload, granted
// on the prefix), and S3A lists uploads only to purge them at start-up with
// fs.s3a.multipart.purge (default false), bucket-wide.
var ListActions = []string{"s3:ListBucket"}

// Permissions is the least-privilege permission policy for the stores:
// listing only under each prefix (s3:prefix "prefix/" or "prefix/*", never
// the bare prefix or a bare wildcard, so "app1" does not reach "app10"),
// object actions on the prefix's objects only, and with KMS keys,
// GenerateDataKey and Decrypt only when called through S3 in the key's region.
func Permissions(partition string, stores []store.Store, kmsKeyARNs []string) (Document, error) {
	if len(stores) == 0 {
		return Document{}, fmt.Errorf("at least one state store is required")
	}
	if partition == "" {
		partition = "aws"
	}
	doc := Document{Version: "2012-10-17"}
	seen := map[string]bool{}
	for i, s := range stores {
		if seen[s.ID()] {
			return Document{}, fmt.Errorf("state store %s is listed twice", s.ID())
		}
		seen[s.ID()] = true
		bucketARN := fmt.Sprintf("arn:%s:s3:::%s", partition, s.Bucket)
		p := s.Prefix
		doc.Statement = append(doc.Statement,
			Statement{
				Sid:      fmt.Sprintf("ListStateStore%d", i),
				Effect:   "Allow",
				Action:   ListActions,
				Resource: []string{bucketARN},
				Condition: map[string]map[string]any{
					"StringLike": {"s3:prefix": []string{p + "/", p + "/*"}},
				},
			},
			Statement{
				Sid:      fmt.Sprintf("StateStoreObjects%d", i),
				Effect:   "Allow",
				Action:   ObjectActions,
				Resource: []string{bucketARN + "/" + p, bucketARN + "/" + p + "/", bucketARN + "/" + p + "/*"},
			},
			Statement{
				Sid:      fmt.Sprintf("StateStoreBucket%d", i),
				Effect:   "Allow",
				Action:   BucketActions,
				Resource: []string{bucketARN},
			},
		)
	}
	for i, k := range kmsKeyARNs {
		if msg := ValidateKMSKeyARN(k); msg != "" {
			return Document{}, fmt.Errorf("%q %s", k, msg)
		}
		key, _ := ParseKMSARN(k)
		doc.Statement = append(doc.Statement, Statement{
			Sid:      fmt.Sprintf("StateKMS%d", i),
			Effect:   "Allow",
			Action:   []string{"kms:Decrypt", "kms:GenerateDataKey"},
			Resource: []string{k},
			Condition: map[string]map[string]any{
				"StringEquals": {"kms:ViaService": "s3." + key.Region + ".amazonaws.com"},
			},
		})
	}
	if n := Size(doc.JSON()); n > MaxRoleInlinePolicySize {
		return doc, fmt.Errorf("the permission policy for %d stores is %d characters, over IAM's %d-character limit for a role's inline policies: "+
			"split the stores across roles", len(stores), n, MaxRoleInlinePolicySize)
	}
	return doc, nil
}

// ValidateOIDCProviderARN returns what is wrong with an OIDC provider ARN, or "".
func ValidateOIDCProviderARN(arn string) string {
	issuer, ok := oidcIssuer(arn)
	if !ok {
		return "must be an IAM OIDC provider ARN (arn:aws:iam::ACCOUNT:oidc-provider/ISSUER), e.g. the cluster's oidc.eks.REGION.amazonaws.com/id/ID"
	}
	if strings.HasPrefix(issuer, "https://") || strings.HasSuffix(issuer, "/") {
		return "must name the issuer without https:// and without a trailing slash"
	}
	return ""
}

// IRSATrust lets exactly one ServiceAccount assume the role through the
// cluster's OIDC provider.
func IRSATrust(oidcProviderARN, namespace, serviceAccount string) (Document, error) {
	if msg := ValidateOIDCProviderARN(oidcProviderARN); msg != "" {
		return Document{}, fmt.Errorf("oidc_provider_arn %s", msg)
	}
	issuer, _ := oidcIssuer(oidcProviderARN)
	return Document{Version: "2012-10-17", Statement: []Statement{{
		Effect:    "Allow",
		Principal: map[string]string{"Federated": oidcProviderARN},
		Action:    []string{"sts:AssumeRoleWithWebIdentity"},
		Condition: map[string]map[string]any{"StringEquals": {
			issuer + ":sub": "system:serviceaccount:" + namespace + ":" + serviceAccount,
			issuer + ":aud": "sts.amazonaws.com",
		}},
	}}}, nil
}

// Pod Identity session tags that EKS sets when it assumes a role for a pod.
const (
	TagNamespace      = "kubernetes-namespace"
	TagServiceAccount = "kubernetes-service-account"
	TagClusterName    = "eks-cluster-name"
)

// PodIdentityPrincipal is the service principal EKS Pod Identity assumes a
// role as. AWS documents the one name for every partition, not one built
// from the partition's DNS suffix (amazonaws.com.cn in aws-cn, per the SDK's
// internal/endpoints/awsrulesfn/partitions.json): the trust policy of
// "Create IAM role with trust policy required by EKS Pod Identity" names
// pods.eks.amazonaws.com in the global EKS User Guide
// (docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html) and in the
// China Regions' (docs.amazonaws.cn/en_us/eks/latest/userguide/pod-id-role.html),
// and "Amazon EKS in AWS GovCloud (US)" (docs.aws.amazon.com/govcloud-us/
// latest/UserGuide/govcloud-eks.html) lists no Pod Identity difference.
const PodIdentityPrincipal = "pods.eks.amazonaws.com"

// PodIdentityTrust lets the EKS Pod Identity service assume the role and tag
// the session, for the given namespace and ServiceAccount (and cluster, when
// named) only.
func PodIdentityTrust(namespace, serviceAccount, clusterName string) Document {
	cond := map[string]any{
		"aws:RequestTag/" + TagNamespace:      namespace,
		"aws:RequestTag/" + TagServiceAccount: serviceAccount,
	}
	if clusterName != "" {
		cond["aws:RequestTag/"+TagClusterName] = clusterName
	}
	return Document{Version: "2012-10-17", Statement: []Statement{{
		Effect:    "Allow",
		Principal: map[string]string{"Service": PodIdentityPrincipal},
		Action:    []string{"sts:AssumeRole", "sts:TagSession"},
		Condition: map[string]map[string]any{"StringEquals": cond},
	}}}
}

// Equivalent tells whether two policy JSON documents mean the same (IAM
// returns documents re-ordered, and single-element arrays may come back as
// plain strings).
func Equivalent(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	cx, _ := json.Marshal(normalize(x))
	cy, _ := json.Marshal(normalize(y))
	return string(cx) == string(cy)
}

// normalize turns single-element arrays into their element and sorts arrays
// of strings, recursively (map keys are sorted by json.Marshal).
func normalize(v any) any {
	switch t := v.(type) {
	case []any:
		if len(t) == 1 {
			return normalize(t[0])
		}
		out := make([]any, len(t))
		var strs []string
		for i, e := range t {
			out[i] = normalize(e)
			if s, ok := out[i].(string); ok {
				strs = append(strs, s)
			}
		}
		if len(strs) == len(out) {
			sort.Strings(strs)
			for i, s := range strs {
				out[i] = s
			}
		}
		return out
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	default:
		return v
	}
}
