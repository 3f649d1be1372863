package deployop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkdeploy"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
)

// resS3 is an in-memory bucket (key -> body; nil answers every call with
// err), answering ListObjectsV2 (prefix, delimiter, one page), HeadObject
// and GetObject, and counting the calls.
type resS3 struct {
	bucket  string
	objects map[string][]byte
	err     error
	calls   int
}

func (s *resS3) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	if s.calls++; s.err != nil {
		return nil, s.err
	}
	prefix, delim := aws.ToString(in.Prefix), aws.ToString(in.Delimiter)
	out := &s3.ListObjectsV2Output{IsTruncated: aws.Bool(false)}
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) || aws.ToString(in.Bucket) != s.bucket {
			continue
		}
		if j := strings.Index(k[len(prefix):], delim); delim != "" && j >= 0 {
			if cp := k[:len(prefix)+j+1]; !seen[cp] {
				seen[cp] = true
				out.CommonPrefixes = append(out.CommonPrefixes, s3types.CommonPrefix{Prefix: aws.String(cp)})
			}
			continue
		}
		out.Contents = append(out.Contents, s3types.Object{Key: aws.String(k), Size: aws.Int64(int64(len(s.objects[k]))),
			LastModified: aws.Time(time.Now())})
	}
	return out, nil
}

func (s *resS3) HeadObject(_ context.Context, in *s3.HeadObjectInput, _ ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	if s.calls++; s.err != nil {
		return nil, s.err
	}
	o, ok := s.objects[aws.ToString(in.Key)]
	if !ok || aws.ToString(in.Bucket) != s.bucket {
		return nil, &s3types.NotFound{}
	}
	return &s3.HeadObjectOutput{ContentLength: aws.Int64(int64(len(o))), LastModified: aws.Time(time.Now())}, nil
}

func (s *resS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if s.calls++; s.err != nil {
		return nil, s.err
	}
	o, ok := s.objects[aws.ToString(in.Key)]
	if !ok || aws.ToString(in.Bucket) != s.bucket {
		return nil, &s3types.NoSuchKey{}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(o)), ContentLength: aws.Int64(int64(len(o)))}, nil
}

// resSavepoint is the canonical savepoint real Flink 2.2.1 wrote
// (internal/checkpoint/testdata/canonical-savepoint), in bucket bkt under
// sp/: complete, its state file zeros of its recorded size.
const resSavepoint = "s3://bkt/sp"

func resSavepointS3(t *testing.T) *resS3 {
	t.Helper()
	dir := filepath.Join("..", "checkpoint", "testdata", "canonical-savepoint")
	meta, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(dir, "objects.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := &resS3{bucket: "bkt", objects: map[string][]byte{"sp/_metadata": meta}}
	for _, l := range strings.Split(string(list), "\n") {
		var name string
		var size int
		if i := strings.LastIndex(l, " "); l != "" && !strings.HasPrefix(l, "#") && i > 0 && l[:i] != "_metadata" {
			name = l[:i]
			for _, c := range l[i+1:] {
				size = size*10 + int(c-'0')
			}
			s.objects["sp/"+name] = make([]byte, size)
		}
	}
	return s
}

// resEnv is an Env on the bucket s and the Kubernetes API dyn (nil: their
// set-up fails), recording the bound of the AWS calls and wording their
// errors "worded: <err>".
func resEnv(s *resS3, dyn dynamic.Interface, bound *time.Duration) Env {
	return Env{
		Kube: func() (dynamic.Interface, error) {
			if dyn == nil {
				return nil, errors.New("no kubeconfig")
			}
			return dyn, nil
		},
		S3: func(context.Context) (checkpoint.S3Reader, error) {
			if s == nil {
				return nil, errors.New("no credentials")
			}
			return s, nil
		},
		Bound: func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
			*bound = d
			return context.WithTimeout(ctx, d)
		},
		Words: func(_ context.Context, err error) string { return "worded: " + err.Error() },
	}
}

// resDyn is a fake Kubernetes API holding objs, listing FlinkDeployments
// and FlinkStateSnapshots.
func resDyn(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kube.FlinkDeploymentGVR: "FlinkDeploymentList", kube.FlinkStateSnapshotGVR: "FlinkStateSnapshotList",
		kube.ConfigMapGVR: "ConfigMapList", kube.EventGVR: "EventList",
	}, objs...)
}

// resSnapshot is FlinkStateSnapshot ns/name of deployment, a savepoint at
// path.
func resSnapshot(name, deployment, path string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec": map[string]any{"jobReference": map[string]any{"kind": "FlinkDeployment", "name": deployment},
			"savepoint": map[string]any{"path": ""}},
		"status": map[string]any{"state": "COMPLETED", "path": path},
	}}
}

func resTarget(path string) RestoreTarget {
	return RestoreTarget{Subject: "FlinkDeployment ns/orders", Namespace: "ns", Name: "orders", Path: path, Check: true, Timeout: 7 * time.Second,
		Fate: func(context.Context, string, string, string) (string, time.Time, error) {
			return "none", time.Time{}, nil
		}}
}

// A path of the wrong form is refused before S3 is asked; one the
// operation does not restore from (Check false) is not read at all.
func TestRestoreTargetVerify_formOnly(t *testing.T) {
	var bound time.Duration
	s := resSavepointS3(t)
	fs, halt := resTarget("/tmp/sp").Verify(context.Background(), resEnv(s, resDyn(), &bound))
	if halt != nil || len(fs) != 1 || fs[0].Severity != flinkconf.Error || fs[0].Summary != "Invalid restore path" || s.calls != 0 {
		t.Errorf("bad form: %+v, %+v, %d S3 calls", fs, halt, s.calls)
	}
	unchecked := resTarget(resSavepoint)
	unchecked.Check = false
	if fs, halt := unchecked.Verify(context.Background(), resEnv(s, resDyn(), &bound)); fs != nil || halt != nil || s.calls != 0 {
		t.Errorf("not checked: %+v, %+v, %d S3 calls", fs, halt, s.calls)
	}
	unknown := resTarget("")
	unknown.Unknown, unknown.Check = true, false
	if fs, halt := unknown.Verify(context.Background(), resEnv(s, resDyn(), &bound)); fs != nil || halt != nil {
		t.Errorf("unknown: %+v, %+v", fs, halt)
	}
}

// A path S3 shows is no completed snapshot is refused on
// job.initial_savepoint_path, read within the operation's timeout; a
// client that cannot be set up stops the operation in the problem form.
func TestRestoreTargetVerify_refusals(t *testing.T) {
	var bound time.Duration
	fs, halt := resTarget("s3://bkt/nothing").Verify(context.Background(), resEnv(resSavepointS3(t), resDyn(), &bound))
	if halt != nil || len(fs) != 1 || fs[0].Summary != "Restore target is not a completed snapshot" ||
		strings.Join(fs[0].Path, ".") != "job.initial_savepoint_path" || !strings.HasPrefix(fs[0].Detail, "FlinkDeployment ns/orders was not changed") {
		t.Errorf("no metadata: %+v, %+v", fs, halt)
	}
	if bound != 7*time.Second {
		t.Errorf("AWS calls bound by %s, want the timeout", bound)
	}
	fs, halt = resTarget(resSavepoint).Verify(context.Background(), resEnv(&resS3{bucket: "bkt", err: errors.New("refused")}, resDyn(), &bound))
	if halt != nil || len(fs) != 1 || fs[0].Summary != "Restore target could not be checked" || !strings.Contains(fs[0].Detail, "worded: ") {
		t.Errorf("S3 down: %+v, %+v", fs, halt)
	}
	_, halt = resTarget(resSavepoint).Verify(context.Background(), resEnv(nil, resDyn(), &bound))
	if halt == nil || halt.Object != "the AWS clients" || halt.Verb != "Setting up" || halt.Detail != "no credentials" {
		t.Errorf("no AWS: %+v", halt)
	}
	_, halt = resTarget(resSavepoint).Verify(context.Background(), resEnv(resSavepointS3(t), nil, &bound))
	if halt == nil || halt.Object != "the Kubernetes client" || halt.Verb != "Setting up" || halt.Detail != "no kubeconfig" {
		t.Errorf("no Kubernetes: %+v", halt)
	}
}

// A complete savepoint is checked against the savepoint history cleanup:
// one of its FlinkStateSnapshots disposed at the next observe refuses the
// restore; one disposed later warns; none, or a fate that keeps it, says
// nothing.
func TestRestoreTargetVerify_disposal(t *testing.T) {
	var bound time.Duration
	dyn := resDyn(resSnapshot("orders-upgrade-1", "old-orders", resSavepoint+"/"), resSnapshot("other", "old-orders", "s3://bkt/other"))
	for name, c := range map[string]struct {
		fate     string
		after    time.Time
		severity flinkconf.Severity
		summary  string
	}{
		"due now":   {"delete_and_dispose", time.Time{}, flinkconf.Error, "Restore path about to be disposed"},
		"due later": {"delete_and_dispose", time.Now().Add(time.Hour), flinkconf.Warning, "Restore path will be disposed"},
		"kept":      {"delete", time.Time{}, 0, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var asked []string
			target := resTarget(resSavepoint)
			target.Fate = func(_ context.Context, ns, deployment, snapshot string) (string, time.Time, error) {
				asked = append(asked, ns+"/"+deployment+"/"+snapshot)
				return c.fate, c.after, nil
			}
			fs, halt := target.Verify(context.Background(), resEnv(resSavepointS3(t), dyn, &bound))
			if halt != nil || strings.Join(asked, ",") != "ns/old-orders/orders-upgrade-1" {
				t.Fatalf("halt %+v, fates asked %v", halt, asked)
			}
			if c.summary == "" {
				if len(fs) != 0 {
					t.Errorf("kept: %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != c.severity || fs[0].Summary != c.summary || !strings.Contains(fs[0].Detail, "orders-upgrade-1") {
				t.Errorf("%+v", fs)
			}
		})
	}
	fs, halt := resTarget(resSavepoint).Verify(context.Background(), resEnv(resSavepointS3(t), resDyn(), &bound))
	if fs != nil || halt != nil {
		t.Errorf("no snapshot at the path: %+v, %+v", fs, halt)
	}
}

// A carried final savepoint that could not be restored stops the create in
// the problem form on the deployment; a complete one lets it go on.
func TestVerifyCarried(t *testing.T) {
	var bound time.Duration
	ctx := context.Background()
	if halt := VerifyCarried(ctx, resEnv(resSavepointS3(t), nil, &bound), "FlinkDeployment ns/orders", resSavepoint, time.Minute); halt != nil {
		t.Errorf("complete: %+v", halt)
	}
	halt := VerifyCarried(ctx, resEnv(resSavepointS3(t), nil, &bound), "FlinkDeployment ns/orders", "s3://bkt/gone", time.Minute)
	if halt == nil || halt.Object != "FlinkDeployment ns/orders" || halt.Verb != "Creating" || halt.Detail == "" || halt.Advice == "" || bound != time.Minute {
		t.Errorf("not a snapshot: %+v (bound %s)", halt, bound)
	}
	if halt := VerifyCarried(ctx, resEnv(nil, nil, &bound), "FlinkDeployment ns/orders", resSavepoint, time.Minute); halt == nil ||
		halt.Object != "the AWS clients" {
		t.Errorf("no AWS: %+v", halt)
	}
}

// The timeout's form: a positive Go duration.
func TestCheckTimeout(t *testing.T) {
	for s, ok := range map[string]bool{"10m": true, "1h30m": true, "90": false, "-1m": false, "0s": false, "soon": false} {
		if msg := CheckTimeout(s); (msg == "") != ok {
			t.Errorf("%q: %q", s, msg)
		}
	}
}

// resRunning is FlinkDeployment ns/orders with its job in state job.
func resRunning(job string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"namespace": "ns", "name": "orders", "uid": "uid-1", "generation": int64(3)},
		"spec":     map[string]any{"image": "flink:2.2.1"},
		"status":   map[string]any{"lifecycleState": "STABLE", "jobStatus": map[string]any{"state": job, "jobId": "j1"}},
	}}
}

// resCompletes makes each FlinkStateSnapshot created on dyn COMPLETED at
// s3://bkt/sp/<its name>.
func resCompletes(dyn *dynfake.FakeDynamicClient) {
	dyn.PrependReactor("create", "flinkstatesnapshots", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		obj.SetName(obj.GetGenerateName() + "x1")
		obj.Object["status"] = map[string]any{"state": "COMPLETED", "path": "s3://bkt/sp/" + obj.GetName(), "failures": int64(0)}
		return true, obj, dyn.Tracker().Create(kube.FlinkStateSnapshotGVR, obj, a.GetNamespace())
	})
}

func resUpgrade(timeout string) UpgradeSavepoint {
	job := flinkdeploy.Desired{HasJob: true, UpgradeMode: "savepoint", SavepointFirst: true, Spec: &flinkdeploy.Spec{Image: "flink:2.2.1"}}
	planned := job
	planned.Spec = &flinkdeploy.Spec{Image: "flink:2.2.1-b"}
	return UpgradeSavepoint{Namespace: "ns", Name: "orders", Prior: job, Planned: planned, Backend: "forst", FormatType: "CANONICAL", Timeout: timeout}
}

// The savepoint before an upgrade of a running job is a new
// FlinkStateSnapshot in the format the running job's backend takes (ForSt:
// NATIVE), for the new spec; its path is returned once COMPLETED.
func TestUpgradeSavepointTake(t *testing.T) {
	defer func(p time.Duration) { savepointPoll = p }(savepointPoll)
	savepointPoll = time.Millisecond
	dyn := resDyn(resRunning("RUNNING"))
	resCompletes(dyn)
	u := resUpgrade("1m")
	p, fs := u.Take(context.Background(), dyn)
	if p != "s3://bkt/sp/orders-upgrade-x1" || len(fs) != 0 {
		t.Fatalf("%q, %+v", p, fs)
	}
	sp, err := dyn.Resource(kube.FlinkStateSnapshotGVR).Namespace("ns").Get(context.Background(), "orders-upgrade-x1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	format, _, _ := unstructured.NestedString(sp.Object, "spec", "savepoint", "formatType")
	if format != "NATIVE" || sp.GetAnnotations()[kube.ForSpecAnnotation] != u.Planned.Spec.Hash() {
		t.Errorf("format %q, annotations %v", format, sp.GetAnnotations())
	}
}

// No savepoint is taken when the update does not change the job, or the
// job is suspended; a timeout that is no duration is an error on
// savepoint_before_upgrade.timeout. Neither touches the API.
func TestUpgradeSavepointTake_none(t *testing.T) {
	dyn := resDyn(resRunning("RUNNING"))
	u := resUpgrade("")
	u.Planned = u.Prior
	if p, fs := u.Take(context.Background(), dyn); p != "" || fs != nil {
		t.Errorf("no change: %q, %+v", p, fs)
	}
	u = resUpgrade("")
	u.Prior.JobState = flinkdeploy.JobSuspended
	if p, fs := u.Take(context.Background(), dyn); p != "" || fs != nil {
		t.Errorf("suspended: %q, %+v", p, fs)
	}
	p, fs := resUpgrade("soon").Take(context.Background(), dyn)
	if p != "" || len(fs) != 1 || fs[0].Severity != flinkconf.Error || strings.Join(fs[0].Path, ".") != "savepoint_before_upgrade.timeout" ||
		fs[0].Summary != "Invalid timeout" || !strings.Contains(fs[0].Detail, `"soon"`) {
		t.Errorf("bad timeout: %q, %+v", p, fs)
	}
	if n := len(dyn.Actions()); n != 0 {
		t.Errorf("%d API calls", n)
	}
}

// Flink's refusal of state for an operator the new code lacks names that
// operator from the snapshot's _metadata; any other cause, or a snapshot
// that cannot be read, adds nothing.
func TestNamedOperator(t *testing.T) {
	var bound time.Duration
	env := resEnv(resSavepointS3(t), nil, &bound)
	cause := "Failed to rollback to checkpoint/savepoint " + resSavepoint + ". Cannot map checkpoint/savepoint state for operator " +
		"ffffffffffffffffffffffffffffffff to the new program, because the operator is not available in the new program."
	if got := NamedOperator(context.Background(), env, cause); got != "" {
		t.Errorf("an ID the snapshot lacks: %q", got)
	}
	const keyed = "b71731f1c0df9c3076c4a455334d0ad6" // uid "count" in the recorded jobs
	named := NamedOperator(context.Background(), env, strings.Replace(cause, "ffffffffffffffffffffffffffffffff", keyed, 1))
	if !strings.HasPrefix(named, ". In "+resSavepoint+` that is the operator "KeyedProcess" (uid "count", ID `+keyed+")") || bound != kube.RequestTimeout {
		t.Errorf("a known ID: %q (bound %s)", named, bound)
	}
	gone := NamedOperator(context.Background(), env, strings.Replace(strings.Replace(cause, "ffffffffffffffffffffffffffffffff", keyed, 1), resSavepoint, "s3://bkt/gone", 1))
	if gone != "" {
		t.Errorf("an unreadable snapshot: %q", gone)
	}
	if got := NamedOperator(context.Background(), env, "java.lang.OutOfMemoryError"); got != "" {
		t.Errorf("another cause: %q", got)
	}
}
