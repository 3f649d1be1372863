package provider

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// providerApp is the app id the provider's AWS SDK clients put in their
// User-Agent (meta.userAgent, config.WithAppID).
const providerApp = "terraform-provider-flinkstate/"

// s3Operation names the S3 API operation of a request the test bed's AWS
// front logged, as the AWS SDK for Go v2 names it (the keys of
// awsOperationActions): by method, whether it names a key, and the
// subresource in its query (the S3 API reference's request syntax of each
// operation). "" for a request it cannot name.
func s3Operation(r testbed.S3Request) string {
	q, _ := url.ParseQuery(r.Query)
	has := func(k string) bool { _, ok := q[k]; return ok }
	if r.Key != "" {
		switch r.Method {
		case "GET":
			return "s3.GetObject"
		case "HEAD":
			return "s3.HeadObject"
		case "PUT":
			return "s3.PutObject"
		case "DELETE":
			return "s3.DeleteObject"
		}
		return ""
	}
	if r.Bucket == "" {
		return ""
	}
	verb := map[string]string{"GET": "Get", "PUT": "Put", "DELETE": "Delete"}[r.Method]
	for _, sub := range []struct{ query, name string }{
		{"versioning", "BucketVersioning"}, {"encryption", "BucketEncryption"}, {"policy", "BucketPolicy"},
		{"publicAccessBlock", "PublicAccessBlock"}, {"tagging", "BucketTagging"}, {"replication", "BucketReplication"},
	} {
		if has(sub.query) {
			if verb == "" {
				return ""
			}
			return "s3." + verb + sub.name
		}
	}
	switch {
	case has("lifecycle") && r.Method == "DELETE":
		return "s3.DeleteBucketLifecycle"
	case has("lifecycle") && verb != "":
		return "s3." + verb + "BucketLifecycleConfiguration"
	case has("location") && r.Method == "GET":
		return "s3.GetBucketLocation"
	case has("versions") && r.Method == "GET":
		return "s3.ListObjectVersions"
	case has("delete") && r.Method == "POST":
		return "s3.DeleteObjects"
	case r.Method == "GET" && q.Get("list-type") == "2":
		return "s3.ListObjectsV2"
	case r.Method == "HEAD":
		return "s3.HeadBucket"
	case r.Method == "PUT" && r.Query == "":
		return "s3.CreateBucket"
	case r.Method == "DELETE" && r.Query == "":
		return "s3.DeleteBucket"
	}
	return ""
}

// recordS3Log adds to c the S3 operations the provider made that the test
// bed's AWS front logged (FLINKSTATE_S3_REQUEST_LOG): the requests whose
// User-Agent names the provider's app id, from this process and from
// provider processes terraform started itself. Without a test bed log
// (external targets) it adds nothing.
func (c *apiCalls) recordS3Log() error {
	path := os.Getenv("FLINKSTATE_S3_REQUEST_LOG")
	if path == "" {
		return nil
	}
	reqs, err := testbed.ReadS3Requests(path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range reqs {
		if !strings.HasPrefix(r.App, providerApp) {
			continue
		}
		op := s3Operation(r)
		if op == "" {
			op = "s3.(" + r.Method + " " + strings.Trim(r.Bucket+"/"+r.Key, "/") + "?" + r.Query + ")"
		}
		c.aws[op] = true
	}
	return nil
}

func TestS3Operation(t *testing.T) {
	for _, tc := range []struct {
		r    testbed.S3Request
		want string
	}{
		{testbed.S3Request{Method: "GET", Bucket: "b", Key: "flink/x/_metadata", Query: "x-id=GetObject"}, "s3.GetObject"},
		{testbed.S3Request{Method: "HEAD", Bucket: "b", Key: "k"}, "s3.HeadObject"},
		{testbed.S3Request{Method: "PUT", Bucket: "b", Key: "k", Query: "x-id=PutObject"}, "s3.PutObject"},
		{testbed.S3Request{Method: "DELETE", Bucket: "b", Key: "k"}, "s3.DeleteObject"},
		{testbed.S3Request{Method: "POST", Bucket: "b", Query: "delete="}, "s3.DeleteObjects"},
		{testbed.S3Request{Method: "GET", Bucket: "b", Query: "list-type=2&prefix=flink%2F"}, "s3.ListObjectsV2"},
		{testbed.S3Request{Method: "GET", Bucket: "b", Query: "versions=&prefix=x"}, "s3.ListObjectVersions"},
		{testbed.S3Request{Method: "HEAD", Bucket: "b"}, "s3.HeadBucket"},
		{testbed.S3Request{Method: "PUT", Bucket: "b"}, "s3.CreateBucket"},
		{testbed.S3Request{Method: "DELETE", Bucket: "b"}, "s3.DeleteBucket"},
		{testbed.S3Request{Method: "GET", Bucket: "b", Query: "location="}, "s3.GetBucketLocation"},
		{testbed.S3Request{Method: "PUT", Bucket: "b", Query: "encryption="}, "s3.PutBucketEncryption"},
		{testbed.S3Request{Method: "GET", Bucket: "b", Query: "publicAccessBlock="}, "s3.GetPublicAccessBlock"},
		{testbed.S3Request{Method: "DELETE", Bucket: "b", Query: "lifecycle="}, "s3.DeleteBucketLifecycle"},
		{testbed.S3Request{Method: "PUT", Bucket: "b", Query: "lifecycle="}, "s3.PutBucketLifecycleConfiguration"},
		{testbed.S3Request{Method: "DELETE", Bucket: "b", Query: "replication="}, "s3.DeleteBucketReplication"},
		{testbed.S3Request{Method: "GET", Bucket: "b", Query: "acl="}, ""},
	} {
		if got := s3Operation(tc.r); got != tc.want {
			t.Errorf("s3Operation(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// An S3 request of the provider in the front's log that no documented
// policy covers fails the check; other clients' requests are not read.
func TestRunnerPermissions_s3LogUncoveredIsReported(t *testing.T) {
	log := filepath.Join(t.TempDir(), "s3.log")
	lines := []string{
		`{"method":"GET","bucket":"b","query":"acl=","app":"terraform-provider-flinkstate/dev"}`,
		`{"method":"GET","bucket":"b","key":"k","app":"terraform-provider-flinkstate/dev"}`,
		`{"method":"PUT","bucket":"b","query":"acl="}`,
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLINKSTATE_S3_REQUEST_LOG", log)
	c := &apiCalls{aws: map[string]bool{}, kube: map[kubeRequest]bool{}}
	if err := c.recordS3Log(); err != nil {
		t.Fatal(err)
	}
	got := c.uncovered()
	want := []string{"AWS operation s3.(GET b?acl=) has no IAM action in awsOperationActions"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("uncovered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
