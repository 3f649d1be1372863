package awsfront

import (
	"net/url"
	"strings"
)

// PolicyRequests are the authorization checks a logged S3 request needs:
// one per key for DeleteObjects, else one (see IAMAction).
func (r S3Request) PolicyRequests() ([]PolicyRequest, bool) {
	action, cond, ok := r.IAMAction()
	if !ok {
		return nil, false
	}
	if r.Key == "" && action == "s3:DeleteObject" {
		out := make([]PolicyRequest, 0, len(r.Keys))
		for _, k := range r.Keys {
			out = append(out, PolicyRequest{Action: action, Bucket: r.Bucket, Object: k})
		}
		return out, len(out) > 0
	}
	return []PolicyRequest{{Action: action, Bucket: r.Bucket, Object: r.Key, Conditions: cond}}, true
}

// IAMAction is the IAM action that authorizes a logged S3 request, and the
// conditions a policy engine needs (s3:prefix for listings), as the Amazon
// S3 API Reference states under "Permissions" for each operation:
// ListObjects(V2) and HeadBucket need s3:ListBucket (the prefix= parameter
// is the s3:prefix condition key); GetObject and HeadObject s3:GetObject;
// PutObject, CreateMultipartUpload, UploadPart and CompleteMultipartUpload
// s3:PutObject; DeleteObject and DeleteObjects s3:DeleteObject;
// AbortMultipartUpload s3:AbortMultipartUpload; ListMultipartUploads
// s3:ListBucketMultipartUploads; ListParts s3:ListMultipartUploadParts;
// GetBucketLocation s3:GetBucketLocation. A copy (x-amz-copy-source) is
// not logged apart: it is a PutObject on the target. ok is false for an
// operation this table does not know, which a test must treat as a failure.
func (r S3Request) IAMAction() (action string, conditions map[string][]string, ok bool) {
	q, _ := url.ParseQuery(r.Query)
	has := func(k string) bool { _, ok := q[k]; return ok }
	if r.Key == "" { // bucket-level
		switch {
		case r.Method == "GET" && has("location"):
			return "s3:GetBucketLocation", nil, true
		case r.Method == "GET" && has("uploads"):
			return "s3:ListBucketMultipartUploads", nil, true
		case r.Method == "POST" && has("delete"):
			return "s3:DeleteObject", nil, true
		case r.Method == "GET" && (len(q) == 0 || has("list-type") || has("prefix") || has("delimiter") || has("max-keys") || has("marker")):
			return "s3:ListBucket", map[string][]string{"prefix": {q.Get("prefix")}}, true
		case r.Method == "HEAD" && len(q) == 0:
			return "s3:ListBucket", nil, true
		}
		return "", nil, false
	}
	switch {
	case r.Method == "GET" && has("uploadId"):
		return "s3:ListMultipartUploadParts", nil, true
	case r.Method == "DELETE" && has("uploadId"):
		return "s3:AbortMultipartUpload", nil, true
	case (r.Method == "POST" && (has("uploads") || has("uploadId"))) || (r.Method == "PUT" && (len(q) == 0 || has("partNumber"))):
		return "s3:PutObject", nil, true
	case (r.Method == "GET" || r.Method == "HEAD") && !strings.Contains(r.Query, "tagging") && !has("acl"):
		return "s3:GetObject", nil, true
	case r.Method == "DELETE" && len(q) == 0:
		return "s3:DeleteObject", nil, true
	}
	return "", nil, false
}

// PolicyRequest is one request for the independent policy engine
// (tools/policycheck, MinIO's IAM policy evaluation): an IAM action on a
// bucket or object, with condition values keyed as MinIO names them (e.g.
// "prefix" for s3:prefix).
type PolicyRequest struct {
	Action     string              `json:"action"`
	Bucket     string              `json:"bucket"`
	Object     string              `json:"object"`
	Conditions map[string][]string `json:"conditions,omitempty"`
}
