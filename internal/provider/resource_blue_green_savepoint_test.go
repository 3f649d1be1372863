package provider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// savepointThief is the test's own fault: as soon as the FlinkDeployment
// child of namespace ns names a job.initialSavepointPath, it takes every
// file of that savepoint but its _metadata out of S3 (as a lifecycle rule
// or a cleanup job would), keeping their contents for putBack.
type savepointThief struct {
	mu    sync.Mutex
	path  string
	taken map[string][]byte // key -> body
	err   error
}

func stealTransitionSavepoint(t *testing.T, ns, child string) *savepointThief {
	th := &savepointThief{taken: map[string][]byte{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			if obj, err := getDeployment(t, ns, child); err == nil {
				if p, _, _ := unstructured.NestedString(obj.Object, "spec", "job", "initialSavepointPath"); p != "" {
					th.take(ctx, t, p)
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return th
}

func (th *savepointThief) take(ctx context.Context, t *testing.T, p string) {
	th.mu.Lock()
	defer th.mu.Unlock()
	th.path = p
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(p, "s3://"), "/")
	c := testAWS(t).S3
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "/")})
	if err != nil {
		th.err = err
		return
	}
	for _, o := range out.Contents {
		key := aws.ToString(o.Key)
		if strings.HasSuffix(key, "/_metadata") {
			continue
		}
		got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
		if err != nil {
			th.err = err
			return
		}
		body, err := io.ReadAll(got.Body)
		_ = got.Body.Close()
		if err == nil {
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
		}
		if err != nil {
			th.err = err
			return
		}
		th.taken[key] = body
	}
}

// taken says which savepoint lost which files; an error when none.
func (th *savepointThief) check() (string, []string, error) {
	th.mu.Lock()
	defer th.mu.Unlock()
	var keys []string
	for k := range th.taken {
		keys = append(keys, k)
	}
	if th.err != nil || len(keys) == 0 {
		return "", nil, fmt.Errorf("no file of the transition savepoint %q was taken (%v)", th.path, th.err)
	}
	return th.path, keys, nil
}

func (th *savepointThief) putBack(t *testing.T) {
	th.mu.Lock()
	defer th.mu.Unlock()
	bucket, _, _ := strings.Cut(strings.TrimPrefix(th.path, "s3://"), "/")
	for k, body := range th.taken {
		if _, err := testAWS(t).S3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k),
			Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("putting %s back: %v", k, err)
		}
	}
}

// A transition whose savepoint lost a file after it completed (the test
// takes the files out as soon as green names it; the fault holds green's
// job before it runs, as a slow start would) ends the apply as soon as the
// wait checks the savepoint, naming the missing file and saying blue keeps
// running, not after the operator's abort_grace_period. The pending mark
// stays: with the files put back, the next apply waits again and ends in
// ACTIVE_GREEN.
func TestAccBlueGreen_incompleteTransitionSavepointEndsTheWait(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	var th *savepointThief
	var blueJob string
	next := blueGreenConfig(ns, "flink:2.2.1-java21", bgShortWait("update", "3m"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkBlueGreenGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:            blueGreenConfig(ns, "flink:2.2.1-java17", ""),
				ConfigStateChecks: []statecheck.StateCheck{recordAttr(bgAddr, "job_id", &blueJob)},
			},
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = true })
					th = stealTransitionSavepoint(t, ns, "orders-green")
				},
				Config: next,
				ExpectError: errorRE("FlinkDeployment "+ns+"/orders-green would start from s3://acme-flink-state/flink/orders/savepoints/savepoint-",
					"is incomplete: 1 of the 1 files its _metadata references are missing", "orders-blue keeps running (its job RUNNING)",
					"aborts the transition after abort_grace_period"),
			},
			{
				PreConfig: func() {
					p, keys, err := th.check()
					if err != nil {
						t.Fatal(err)
					}
					obj, err := getDeployment(t, ns, "orders-blue")
					if err != nil {
						t.Fatal(err)
					}
					if st := kube.ReadDeploymentStatus(obj); st.JobID != blueJob || st.JobState != "RUNNING" {
						t.Errorf("orders-blue after the refused transition: job %s %s, want %s RUNNING", st.JobID, st.JobState, blueJob)
					}
					t.Logf("put back %d file(s) of %s", len(keys), p)
					th.putBack(t)
					op.SetFaults(func(f *testbed.Faults) { f.JobNeverRuns = false })
				},
				Config: next,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bgAddr, tfjsonPath("blue_green_state"), knownString("ACTIVE_GREEN")),
					expectChildFrom(t, ns, "orders-green"),
				},
			},
		},
	})
}
