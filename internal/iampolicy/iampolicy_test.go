package iampolicy

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/store"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

func TestIRSATrust(t *testing.T) {
	arn := "arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC123"
	doc, err := IRSATrust(arn, "data-processing", "flink-orders")
	if err != nil {
		t.Fatal(err)
	}
	st := doc.Statement[0]
	if st.Principal["Federated"] != arn || st.Action[0] != "sts:AssumeRoleWithWebIdentity" || len(st.Action) != 1 {
		t.Fatalf("statement %+v", st)
	}
	eq := st.Condition["StringEquals"]
	if eq["oidc.eks.eu-west-1.amazonaws.com/id/ABC123:sub"] != "system:serviceaccount:data-processing:flink-orders" ||
		eq["oidc.eks.eu-west-1.amazonaws.com/id/ABC123:aud"] != "sts.amazonaws.com" || len(eq) != 2 {
		t.Fatalf("conditions %v", eq)
	}
	if _, ok := st.Condition["StringLike"]; ok {
		t.Fatal("the subject must be matched exactly (StringEquals), never with StringLike")
	}
	for _, bad := range []string{"arn:aws:iam::123456789012:role/x", "oidc.eks.eu-west-1.amazonaws.com/id/ABC",
		"arn:aws:iam::123456789012:oidc-provider/https://oidc.eks.eu-west-1.amazonaws.com/id/ABC"} {
		if _, err := IRSATrust(bad, "ns", "sa"); err == nil || !strings.Contains(err.Error(), "oidc_provider_arn") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func TestPodIdentityTrust(t *testing.T) {
	st := PodIdentityTrust("data-processing", "flink-orders", "prod").Statement[0]
	if st.Principal["Service"] != "pods.eks.amazonaws.com" || strings.Join(st.Action, ",") != "sts:AssumeRole,sts:TagSession" {
		t.Fatalf("statement %+v", st)
	}
	eq := st.Condition["StringEquals"]
	if eq["aws:RequestTag/kubernetes-namespace"] != "data-processing" || eq["aws:RequestTag/kubernetes-service-account"] != "flink-orders" ||
		eq["aws:RequestTag/eks-cluster-name"] != "prod" {
		t.Fatalf("conditions %v", eq)
	}
	if _, ok := PodIdentityTrust("ns", "sa", "").Statement[0].Condition["StringEquals"]["aws:RequestTag/eks-cluster-name"]; ok {
		t.Fatal("no cluster condition when no cluster is named")
	}
}

func TestPermissionsShape(t *testing.T) {
	doc, err := Permissions("aws", []store.Store{{Bucket: "b", Prefix: "flink/app1"}}, []string{"arn:aws:kms:eu-west-1:123456789012:key/k1"})
	if err != nil {
		t.Fatal(err)
	}
	js := doc.JSON()
	for _, forbidden := range []string{`"s3:*"`, `"*"`, `"Resource":["arn:aws:s3:::b/*"]`, "s3:prefix\":\"*"} {
		if strings.Contains(js, forbidden) {
			t.Errorf("policy contains %s: %s", forbidden, js)
		}
	}
	kms := doc.Statement[len(doc.Statement)-1]
	if kms.Condition["StringEquals"]["kms:ViaService"] != "s3.eu-west-1.amazonaws.com" || kms.Resource[0] != "arn:aws:kms:eu-west-1:123456789012:key/k1" {
		t.Fatalf("kms statement %+v", kms)
	}
	if _, err := Permissions("aws", nil, nil); err == nil {
		t.Error("no stores accepted")
	}
	if _, err := Permissions("aws", []store.Store{{Bucket: "b", Prefix: "p"}, {Bucket: "b", Prefix: "p"}}, nil); err == nil {
		t.Error("duplicate store accepted")
	}
	if _, err := Permissions("aws", []store.Store{{Bucket: "b", Prefix: "p"}}, []string{"alias/x"}); err == nil {
		t.Error("non-ARN KMS key accepted")
	}
}

func TestPermissionsSizeLimit(t *testing.T) {
	var stores []store.Store
	for i := 0; ; i++ {
		stores = append(stores, store.Store{Bucket: "acme-flink-state", Prefix: fmt.Sprintf("flink/application-%03d", i)})
		doc, err := Permissions("aws", stores, nil)
		if err != nil {
			if !strings.Contains(err.Error(), "10240") || Size(doc.JSON()) <= MaxRoleInlinePolicySize {
				t.Fatalf("error %v at size %d", err, Size(doc.JSON()))
			}
			if i < 5 {
				t.Fatalf("limit reached after only %d stores", i+1)
			}
			return
		}
		if i > 200 {
			t.Fatal("no size error even at 200 stores")
		}
	}
}

func TestEquivalent(t *testing.T) {
	a := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject"],"Resource":["x","y"]}]}`
	b := `{"Statement":{"Resource":["y","x"],"Action":"s3:GetObject","Effect":"Allow"},"Version":"2012-10-17"}`
	if !Equivalent(a, b) {
		t.Error("equivalent spellings compare different")
	}
	if Equivalent(a, strings.Replace(a, "GetObject", "PutObject", 1)) {
		t.Error("different actions compare equal")
	}
}

// policyRequest is one S3 request Flink (or an attacker) might make.
type policyRequest struct {
	name      string
	action    string
	bucket    string
	object    string
	prefix    *string // s3:prefix of a ListBucket; nil: no prefix parameter
	wantAllow bool
}

func strp(s string) *string { return &s }

// The least-privilege table, evaluated by MinIO's IAM policy engine (not by
// this project's code): every Flink operation under the store is allowed;
// the sibling app10, the parent prefix, another bucket and a bucket-wide
// listing are denied.
func TestPermissionsLeastPrivilegeTable(t *testing.T) {
	doc, err := Permissions("aws", []store.Store{{Bucket: "acme-flink-state", Prefix: "flink/app1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const b = "acme-flink-state"
	job := "flink/app1/checkpoints/9f3c2a8d7e6b5a4c3d2e1f0a9b8c7d6e"
	table := []policyRequest{
		// Flink's own operations under the store
		{"list job dirs under checkpoints", "s3:ListBucket", b, "", strp("flink/app1/checkpoints/"), true},
		{"list chk-N dirs of a job", "s3:ListBucket", b, "", strp(job + "/"), true},
		{"list the store itself", "s3:ListBucket", b, "", strp("flink/app1/"), true},
		// S3A's getFileStatus probe of the store root: HEAD p, HEAD p/, then LIST "p/" with delimiter "/".
		{"S3A probe: head the store root key", "s3:GetObject", b, "flink/app1", nil, true},
		{"S3A probe: head the store root dir marker", "s3:GetObject", b, "flink/app1/", nil, true},
		{"S3A probe: list the store root as a dir", "s3:ListBucket", b, "", strp("flink/app1/"), true},
		{"put _metadata", "s3:PutObject", b, job + "/chk-10/_metadata", nil, true},
		{"get _metadata on restore", "s3:GetObject", b, job + "/chk-10/_metadata", nil, true},
		{"delete a subsumed checkpoint", "s3:DeleteObject", b, job + "/chk-7/_metadata", nil, true},
		{"put a shared SST file", "s3:PutObject", b, job + "/shared/0a1b2c3d-sst", nil, true},
		{"get a shared SST file", "s3:GetObject", b, job + "/shared/0a1b2c3d-sst", nil, true},
		{"delete a shared file", "s3:DeleteObject", b, job + "/shared/0a1b2c3d-sst", nil, true},
		{"write a savepoint", "s3:PutObject", b, "flink/app1/savepoints/savepoint-1a2b3c-0123456789ab/_metadata", nil, true},
		{"write HA metadata", "s3:PutObject", b, "flink/app1/ha/orders/completedCheckpoint7f", nil, true},
		{"abort a multipart upload", "s3:AbortMultipartUpload", b, job + "/shared/big-sst", nil, true},
		{"list parts of a multipart upload", "s3:ListMultipartUploadParts", b, job + "/shared/big-sst", nil, true},
		{"bucket location", "s3:GetBucketLocation", b, "", nil, true},
		// What real Flink 2.2.1's S3A (hadoop-aws 3.3.4) asked for, read from the
		// test bed's request log of TestAccRealFlink_irsaCheckpointsRestore:
		// getFileStatus probes (HEAD key, then LIST "key/" max-keys=2), mkdirs
		// markers, multipart uploads of _metadata (s3:PutObject), and the
		// DeleteObjects of parent markers after each write.
		{"S3A probe: head a checkpoint dir as a key", "s3:GetObject", b, job + "/chk-10", nil, true},
		{"S3A probe: list _metadata as a dir", "s3:ListBucket", b, "", strp(job + "/chk-10/_metadata/"), true},
		{"S3A probe: head the checkpoints dir as a key", "s3:GetObject", b, "flink/app1/checkpoints", nil, true},
		{"S3A mkdirs: put a chk-N/ marker", "s3:PutObject", b, job + "/chk-10/", nil, true},
		{"S3A mkdirs: put a shared/ marker", "s3:PutObject", b, job + "/shared/", nil, true},
		{"S3A after a write: delete the job dir marker", "s3:DeleteObject", b, job + "/", nil, true},
		{"S3A after a write: delete the store's own marker", "s3:DeleteObject", b, "flink/app1/", nil, true},
		// Denied, and harmless: S3A deletes every parent's marker up to the root
		// in one DeleteObjects and ignores its failure
		// (S3AFileSystem.deleteUnnecessaryFakeDirectories); S3 refuses that key
		// alone and deletes the rest. The run above saw it denied and Flink go on.
		{"S3A after a write: delete the marker above the store", "s3:DeleteObject", b, "flink/", nil, false},
		// Everything else
		{"sibling app10: list", "s3:ListBucket", b, "", strp("flink/app10/"), false},
		{"sibling app10: list without slash", "s3:ListBucket", b, "", strp("flink/app10"), false},
		// The bare prefix would list flink/app10/... key names too.
		{"bare store prefix: list (leaks the sibling app10's names)", "s3:ListBucket", b, "", strp("flink/app1"), false},
		{"bare store prefix with wildcard-like tail", "s3:ListBucket", b, "", strp("flink/app1*"), false},
		// Not scopable to a prefix (s3:prefix is no condition key of it), so not granted: it would list app10's uploads.
		{"multipart uploads of the whole bucket", "s3:ListBucketMultipartUploads", b, "", nil, false},
		{"multipart uploads with the store's prefix", "s3:ListBucketMultipartUploads", b, "", strp("flink/app1/"), false},
		{"sibling app10: get", "s3:GetObject", b, "flink/app10/checkpoints/x/chk-1/_metadata", nil, false},
		{"sibling app10: put", "s3:PutObject", b, "flink/app10/checkpoints/x/chk-1/_metadata", nil, false},
		{"sibling app10: delete", "s3:DeleteObject", b, "flink/app10/savepoints/s/_metadata", nil, false},
		{"parent prefix: list", "s3:ListBucket", b, "", strp("flink/"), false},
		{"parent prefix: get an object beside the store", "s3:GetObject", b, "flink/other.txt", nil, false},
		{"bucket-wide list without prefix", "s3:ListBucket", b, "", nil, false},
		{"bucket-wide list with empty prefix", "s3:ListBucket", b, "", strp(""), false},
		{"another bucket: get", "s3:GetObject", "other-bucket", "flink/app1/checkpoints/x/chk-1/_metadata", nil, false},
		{"another bucket: list", "s3:ListBucket", "other-bucket", "", strp("flink/app1/"), false},
		{"bucket policy change", "s3:PutBucketPolicy", b, "", nil, false},
		{"bucket delete", "s3:DeleteBucket", b, "", nil, false},
		{"object ACL change", "s3:PutObjectAcl", b, job + "/chk-10/_metadata", nil, false},
	}
	got := evaluateWithMinIO(t, doc.JSON(), table)
	t.Logf("%-45s %-30s %-8s %s", "request", "action", "want", "MinIO says")
	for i, r := range table {
		verdict := map[bool]string{true: "allow", false: "deny"}
		t.Logf("%-45s %-30s %-8s %s", r.name, r.action, verdict[r.wantAllow], verdict[got[i]])
		if got[i] != r.wantAllow {
			t.Errorf("%s (%s %s/%s prefix=%v): allowed=%v, want %v", r.name, r.action, r.bucket, r.object, r.prefix, got[i], r.wantAllow)
		}
	}
}

func evaluateWithMinIO(t *testing.T, policy string, table []policyRequest) []bool {
	t.Helper()
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	reqs := make([]testbed.PolicyRequest, 0, len(table))
	for _, r := range table {
		q := testbed.PolicyRequest{Action: r.action, Bucket: r.bucket, Object: r.object}
		if r.prefix != nil {
			q.Conditions = map[string][]string{"prefix": {*r.prefix}}
		}
		reqs = append(reqs, q)
	}
	res, err := testbed.EvaluatePolicy(ctx, root, policy, reqs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestParseRoundTrip(t *testing.T) {
	arn := "arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC123"
	irsa, _ := IRSATrust(arn, "data-processing", "flink-orders")
	// IAM hands documents back URL-encoded.
	got := ParseTrust(url.QueryEscape(irsa.JSON()))
	if got != (Trust{Kind: "irsa", OIDCProviderARN: arn, Namespace: "data-processing", ServiceAccount: "flink-orders"}) {
		t.Errorf("irsa: %+v", got)
	}
	got = ParseTrust(PodIdentityTrust("ns", "sa", "prod").JSON())
	if got != (Trust{Kind: "pod_identity", Namespace: "ns", ServiceAccount: "sa", ClusterName: "prod"}) {
		t.Errorf("pod identity: %+v", got)
	}
	if ParseTrust(`{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`).Kind != "" {
		t.Error("a foreign trust policy was recognised")
	}
	perm, err := Permissions("aws", []store.Store{{Bucket: "b1", Prefix: "flink/app1"}, {Bucket: "b2", Prefix: "x"}}, []string{"arn:aws:kms:eu-west-1:123456789012:key/k"})
	if err != nil {
		t.Fatal(err)
	}
	stores, keys := ParseGrants(url.QueryEscape(perm.JSON()))
	if strings.Join(stores, ",") != "b1/flink/app1,b2/x" || strings.Join(keys, ",") != "arn:aws:kms:eu-west-1:123456789012:key/k" {
		t.Errorf("grants: %v %v", stores, keys)
	}
}
