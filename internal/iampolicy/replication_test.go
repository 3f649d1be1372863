package iampolicy

import (
	"slices"
	"strings"
	"testing"
)

func TestReplicationTrust(t *testing.T) {
	st := ReplicationTrust().Statement[0]
	if st.Principal["Service"] != "s3.amazonaws.com" || !slices.Equal(st.Action, []string{"sts:AssumeRole"}) || len(st.Condition) != 0 {
		t.Fatalf("trust statement %+v, want only s3.amazonaws.com assuming the role", st)
	}
}

func TestReplicationPermissionsShape(t *testing.T) {
	doc, err := ReplicationPermissions("aws-cn", "src", "dst", []string{"flink/orders", "flink/payments"}, false)
	if err != nil {
		t.Fatal(err)
	}
	js := doc.JSON()
	for _, forbidden := range []string{`"*"`, `"s3:*"`, `arn:aws-cn:s3:::src/*"`, `arn:aws-cn:s3:::dst/*"`, "s3:ReplicateDelete", "arn:aws:"} {
		if strings.Contains(js, forbidden) {
			t.Errorf("policy contains %s: %s", forbidden, js)
		}
	}
	want := []string{`arn:aws-cn:s3:::src/flink/orders/*`, `arn:aws-cn:s3:::dst/flink/payments/*`, `"Resource":["arn:aws-cn:s3:::src"]`}
	for _, w := range want {
		if !strings.Contains(js, w) {
			t.Errorf("policy lacks %s: %s", w, js)
		}
	}
	withDeletes, _ := ReplicationPermissions("aws", "src", "dst", []string{"p"}, true)
	if d := withDeletes.Statement[2]; !slices.Contains(d.Action, "s3:ReplicateDelete") || d.Resource[0] != "arn:aws:s3:::dst/p/*" {
		t.Errorf("destination statement with delete markers %+v", d)
	}
	for _, bad := range [][]string{nil, {""}, {"/p"}, {"p/"}, {"p", "p"}} {
		if _, err := ReplicationPermissions("aws", "src", "dst", bad, false); err == nil {
			t.Errorf("prefixes %q accepted", bad)
		}
	}
}

// The replication role's least privilege, judged by MinIO's IAM policy
// engine: what S3 replication does for the state prefixes is allowed;
// other prefixes (the sibling app10 included), other buckets, writes
// outside replication and, without delete-marker replication, deletes are
// denied. MinIO does not know s3:GetObjectVersionAcl, so that one action is
// left out of the document it judges (its place is checked above).
func TestReplicationPermissionsLeastPrivilegeTable(t *testing.T) {
	doc, err := ReplicationPermissions("aws", "acme-state", "acme-state-dr", []string{"flink/app1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Statement {
		doc.Statement[i].Action = slices.DeleteFunc(slices.Clone(doc.Statement[i].Action), func(a string) bool { return a == "s3:GetObjectVersionAcl" })
	}
	const src, dst = "acme-state", "acme-state-dr"
	key := "flink/app1/checkpoints/9f3c/chk-4/_metadata"
	table := []policyRequest{
		{"read the replication configuration", "s3:GetReplicationConfiguration", src, "", nil, true},
		{"list the source bucket", "s3:ListBucket", src, "", nil, true},
		{"read a source version for replication", "s3:GetObjectVersionForReplication", src, key, nil, true},
		{"read a source version's tags", "s3:GetObjectVersionTagging", src, key, nil, true},
		{"replicate an object", "s3:ReplicateObject", dst, key, nil, true},
		{"replicate its tags", "s3:ReplicateTags", dst, key, nil, true},
		{"replicate a delete marker (off)", "s3:ReplicateDelete", dst, key, nil, false},
		{"sibling app10: read for replication", "s3:GetObjectVersionForReplication", src, "flink/app10/checkpoints/x/_metadata", nil, false},
		{"sibling app10: replicate", "s3:ReplicateObject", dst, "flink/app10/checkpoints/x/_metadata", nil, false},
		{"outside the prefixes: read", "s3:GetObjectVersionForReplication", src, "other/file", nil, false},
		{"the store's bare key", "s3:ReplicateObject", dst, "flink/app1", nil, false},
		{"replicate into the source", "s3:ReplicateObject", src, key, nil, false},
		{"read from the destination", "s3:GetObjectVersionForReplication", dst, key, nil, false},
		{"another bucket", "s3:ReplicateObject", "other-bucket", key, nil, false},
		{"plain read of a source object", "s3:GetObject", src, key, nil, false},
		{"plain write to the destination", "s3:PutObject", dst, key, nil, false},
		{"delete in the destination", "s3:DeleteObject", dst, key, nil, false},
		{"list the destination", "s3:ListBucket", dst, "", nil, false},
		{"change the replication configuration", "s3:PutReplicationConfiguration", src, "", nil, false},
	}
	got := evaluateWithMinIO(t, doc.JSON(), table)
	for i, r := range table {
		if got[i] != r.wantAllow {
			t.Errorf("%s (%s %s/%s): allowed=%v, want %v", r.name, r.action, r.bucket, r.object, got[i], r.wantAllow)
		}
	}
	withDeletes, err := ReplicationPermissions("aws", src, dst, []string{"flink/app1"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range withDeletes.Statement {
		withDeletes.Statement[i].Action = slices.DeleteFunc(slices.Clone(withDeletes.Statement[i].Action), func(a string) bool { return a == "s3:GetObjectVersionAcl" })
	}
	del := []policyRequest{
		{"replicate a delete marker (on)", "s3:ReplicateDelete", dst, key, nil, true},
		{"replicate a delete marker outside the prefix", "s3:ReplicateDelete", dst, "flink/app10/x", nil, false},
	}
	for i, ok := range evaluateWithMinIO(t, withDeletes.JSON(), del) {
		if ok != del[i].wantAllow {
			t.Errorf("%s: allowed=%v, want %v", del[i].name, ok, del[i].wantAllow)
		}
	}
}
