package provider

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
)

// Restoring only from a complete checkpoint (and, in the data sources'
// tests, the latest complete checkpoint and the orphan report), on a
// checkpoint real Flink 2.2.1 wrote:
// internal/checkpoint/testdata/incremental-rocksdb-checkpoint (RocksDB,
// incremental; its one state file outside _metadata is a shared .sst file).
//
// Its _metadata names that file by absolute URI, in the bucket and prefix
// it was recorded in (a bucket of the recording run, fixtures-<hex>, not a
// placeholder: the reader resolves nothing, it checks the URI as written,
// and internal/checkpoint's tests serve their fake S3 under that bucket).
// Here the checkpoint must live in a bucket of each test's own (not the
// shared fixture bucket: test processes running at the same time on one
// test bed create and delete that one under each other), so realCheckpoint
// relocates it: the recorded "<bucket>/<base>" before /checkpoints/<job-id>/
// is replaced, everywhere in the file, by "<test bucket>/<prefix>" of the
// same length. Java's writeUTF strings are length-prefixed, so a
// replacement of equal length leaves every length in the file right; the
// result is read back with the reader before use.

const realCheckpointFixture = "incremental-rocksdb-checkpoint"

type realCheckpoint struct {
	bucket, prefix, jobID string
	meta                  []byte           // _metadata, relocated
	files                 map[string]int64 // keys of the files it references (relocated), with their sizes
}

func (r *realCheckpoint) jobDir() string { return r.prefix + "/checkpoints/" + r.jobID }

// chk is s3://<bucket>/<prefix>/checkpoints/<job>/chk-n.
func (r *realCheckpoint) chk(n int) string {
	return fmt.Sprintf("s3://%s/%s/chk-%d", r.bucket, r.jobDir(), n)
}

// uri is s3://<bucket>/<key>.
func (r *realCheckpoint) uri(key string) string { return "s3://" + r.bucket + "/" + key }

func (r *realCheckpoint) sharedKey() string {
	for k := range r.files {
		return k
	}
	return ""
}

// loadRealCheckpoint reads the fixture and relocates it under a random
// prefix of a new bucket (removed when the test ends).
func loadRealCheckpoint(t *testing.T) *realCheckpoint {
	t.Helper()
	dir := filepath.Join("..", "checkpoint", "testdata", realCheckpointFixture)
	meta, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(dir, "objects.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "# snapshot: s3://BUCKET/<base>/checkpoints/<job-id>/chk-3", and the
	// objects under the job directory: "<key relative to it> <size>".
	var base, jobID string
	sizes := map[string]int64{}
	for _, l := range strings.Split(string(list), "\n") {
		switch {
		case strings.HasPrefix(l, "# snapshot: s3://BUCKET/"):
			p := strings.Split(strings.TrimPrefix(l, "# snapshot: s3://BUCKET/"), "/checkpoints/")
			if len(p) == 2 {
				base = p[0]
				jobID, _, _ = strings.Cut(p[1], "/")
			}
		case l == "" || strings.HasPrefix(l, "#"):
		default:
			i := strings.LastIndex(l, " ")
			n, err := strconv.ParseInt(l[i+1:], 10, 64)
			if err != nil {
				t.Fatalf("objects.txt line %q: %v", l, err)
			}
			sizes[l[:i]] = n
		}
	}
	recorded, err := checkpoint.ReadMetadata(bytes.NewReader(meta), "")
	if err != nil || len(recorded.Files) == 0 || base == "" || !checkpoint.ValidJobID(jobID) {
		t.Fatalf("fixture %s: base %q, job %q, files %v, %v", realCheckpointFixture, base, jobID, recorded, err)
	}
	bucket, _, _ := checkpoint.ParseS3URI(recorded.Files[0].URI)
	old := bucket + "/" + base
	to := testCheckpointBucket(t)
	n := len(old) - len(to+"/")
	if n < 8 {
		t.Fatalf("the fixture's %q is too short to relocate into %s", old, to)
	}
	b := make([]byte, n)
	_, _ = rand.Read(b)
	prefix := "real-" + hex.EncodeToString(b)[:n-5]
	if bytes.Count(meta, []byte(bucket)) != bytes.Count(meta, []byte(old+"/checkpoints/"+jobID+"/")) {
		t.Fatalf("the fixture names %s other than under %s/checkpoints/%s/: relocating it would leave those", bucket, old, jobID)
	}
	r := &realCheckpoint{bucket: to, prefix: prefix, jobID: jobID, files: map[string]int64{},
		meta: bytes.ReplaceAll(meta, []byte(old+"/"), []byte(to+"/"+prefix+"/"))}
	m, err := checkpoint.ReadMetadata(bytes.NewReader(r.meta), r.chk(3))
	if err != nil {
		t.Fatalf("the relocated fixture: %v", err)
	}
	for _, u := range m.FileURIs() {
		b, key, _ := strings.Cut(strings.TrimPrefix(u, "s3://"), "/")
		rel, ok := strings.CutPrefix(key, r.jobDir()+"/")
		if size, listed := sizes[rel]; b != to || !ok || !listed {
			t.Fatalf("the relocated fixture references %s, not a file objects.txt lists under the job directory", u)
		} else {
			r.files[key] = size
		}
	}
	if len(r.files) != 1 || !strings.HasPrefix(r.sharedKey(), r.jobDir()+"/shared/") {
		t.Fatalf("the fixture should reference one shared file, not %v", r.files)
	}
	return r
}

// withSharedFile is the _metadata naming another shared file in place of
// its own (a UUID of the same length): a checkpoint like the recorded one
// whose shared file is another, here never written.
func (r *realCheckpoint) withSharedFile(t *testing.T, name string) []byte {
	t.Helper()
	own := filepath.Base(r.sharedKey())
	if len(name) != len(own) {
		t.Fatalf("shared file name %q: must be as long as %q", name, own)
	}
	return bytes.ReplaceAll(r.meta, []byte("/shared/"+own), []byte("/shared/"+name))
}

func putBytes(t *testing.T, bucket, key string, body []byte) {
	t.Helper()
	if _, err := testAWS(t).S3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// plant writes the files the checkpoint references (of their recorded
// sizes) and then, as Flink does, its _metadata at chk-n.
func (r *realCheckpoint) plant(t *testing.T, n int) {
	t.Helper()
	for k, size := range r.files {
		r.put(t, k, make([]byte, size))
	}
	r.put(t, fmt.Sprintf("%s/chk-%d/_metadata", r.jobDir(), n), r.meta)
}

func (r *realCheckpoint) put(t *testing.T, key string, body []byte) {
	t.Helper()
	putBytes(t, r.bucket, key, body)
}

func (r *realCheckpoint) delete(t *testing.T, key string) {
	t.Helper()
	if _, err := testAWS(t).S3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
}

// A FlinkDeployment is not created from a checkpoint whose shared file was
// deleted: the apply fails naming the file, and no FlinkDeployment exists.
func TestAccDeployment_restoreFromIncompleteCheckpointRefused(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	cp.delete(t, cp.sharedKey())
	cfg := restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", cp.chk(3)), `  wait_for = "running"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ExpectError: errorRE("Restore target is incomplete", "initial_savepoint_path", "was not changed", cp.chk(3)+" is incomplete",
					"1 of the 1 files", cp.uri(cp.sharedKey()), "complete = true"),
			},
			{
				PreConfig: func() {
					if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
						t.Fatalf("FlinkDeployment %s/orders after a refused restore: %v (want it not to exist)", ns, err)
					}
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// The same checkpoint with its shared file there is restored from: the
// relocated recording of real Flink reads as complete.
func TestAccDeployment_restoreFromCompleteRealCheckpoint(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	path := cp.chk(3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", path), `  wait_for = "running"`),
			Check:  checkRestoredFrom(t, ns, &path),
		}},
	})
}

// An existing deployment is not redeployed from a checkpoint whose shared
// file was deleted: the apply fails naming the file and the spec stays as
// it was (same generation, no restore path, no nonce).
func TestAccDeployment_redeployFromIncompleteCheckpointRefused(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	cp := loadRealCheckpoint(t)
	cp.plant(t, 3)
	cp.delete(t, cp.sharedKey())
	wait := `  wait_for = "running"`
	var generation int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", "", wait),
				Check: func(*terraform.State) error {
					obj, err := getDeployment(t, ns, "orders")
					if err == nil {
						generation = obj.GetGeneration()
					}
					return err
				},
			},
			{
				Config: restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", cp.chk(3)), wait),
				ExpectError: errorRE("Restore target is incomplete", "initial_savepoint_path", "FlinkDeployment "+ns+"/orders was not changed",
					cp.uri(cp.sharedKey())),
			},
			{
				PreConfig: func() {
					obj, err := getDeployment(t, ns, "orders")
					if err != nil {
						t.Fatal(err)
					}
					p, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath")
					_, hasNonce, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "job", "savepointRedeployNonce")
					if obj.GetGeneration() != generation || p != "" || hasNonce {
						t.Fatalf("deployment changed by a refused redeploy: generation %d (was %d), initialSavepointPath %q, nonce set %t",
							obj.GetGeneration(), generation, p, hasNonce)
					}
				},
				Config:   restoreConfig(ns, cp.prefix, "flink:2.2.1-java17", "", wait),
				PlanOnly: true,
			},
		},
	})
}

// A _metadata the reader does not know (here: a format version Flink 2.2
// does not read) is refused, fail closed, with the reader's message.
func TestAccDeployment_restoreFromUnreadableMetadataRefused(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	startOperator(t, ns)
	prefix := randName("unread-")
	bucket := testCheckpointBucket(t)
	target := "s3://" + bucket + "/" + prefix + "/savepoints/savepoint-2d6fb8-0a1b2c3d4e5f"
	// Flink's magic number, then version 7.
	putBytes(t, bucket, prefix+"/savepoints/savepoint-2d6fb8-0a1b2c3d4e5f/_metadata", []byte{0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1})
	cfg := restoreConfig(ns, prefix, "flink:2.2.1-java17", fmt.Sprintf("initial_savepoint_path = %q", target), `  wait_for = "running"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      cfg,
				ExpectError: errorRE("Restore target cannot be read", "initial_savepoint_path", "was not changed", target+"/_metadata", "version 7 not supported"),
			},
			{
				PreConfig: func() {
					if _, err := getDeployment(t, ns, "orders"); !apierrors.IsNotFound(err) {
						t.Fatalf("FlinkDeployment %s/orders after a refused restore: %v (want it not to exist)", ns, err)
					}
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
