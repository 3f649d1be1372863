package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/awsclient"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/notfound"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// Test clients are built by the same code the provider uses, from the same
// environment the tests hand to terraform.

func testAWS(t *testing.T) *awsclient.Clients {
	t.Helper()
	c, err := awsclient.New(context.Background(), awsclient.Config{})
	if err != nil {
		t.Fatalf("AWS clients: %v", err)
	}
	return c
}

func testKube(t *testing.T) *kube.Client {
	t.Helper()
	c, err := kube.New(kube.Config{ConfigPath: os.Getenv("KUBECONFIG")})
	if err != nil {
		t.Fatalf("Kubernetes client: %v", err)
	}
	return c
}

// testTyped is a typed client of the same cluster: tests check what the
// provider wrote through a different client than the one it uses.
func testTyped(t *testing.T) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(testKube(t).REST)
	if err != nil {
		t.Fatalf("Kubernetes typed client: %v", err)
	}
	return c
}

// randName is a short random suffix that keeps parallel and repeated runs
// from colliding on the same names.
func randName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// testNamespace creates a namespace for one test. The test bed has no
// namespace controller, so namespaces are left behind rather than stuck in
// Terminating; their names are random.
func testNamespace(t *testing.T) string {
	t.Helper()
	ns := randName("acc-")
	_, err := testTyped(t).CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	return ns
}

// errorRE matches the parts in order, anywhere in terraform's output, each
// space allowed to be any run of white space (terraform wraps diagnostics).
func errorRE(parts ...string) *regexp.Regexp {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(p), " ", `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, ".*"))
}

func tfjsonPath(attr string) tfjsonpath.Path { return tfjsonpath.New(attr) }
func knownString(s string) knownvalue.Check  { return knownvalue.StringExact(s) }
func regexpMust(expr string) *regexp.Regexp  { return regexp.MustCompile(expr) }

// apiCheck is a state check that asks the real API (S3, IAM, EKS, the API
// server) rather than terraform's state: the ConfigStateChecks form of the
// checks that prove what the provider wrote.
type apiCheck func() error

func (c apiCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if err := c(); err != nil {
		resp.Error = err
	}
}

// expectAPI checks the real API after the step's apply. State checks run
// in order, so it may use values a recordAttr before it took from the state.
func expectAPI(check func() error) statecheck.StateCheck { return apiCheck(check) }

// recordAttr copies a string attribute out of the state into *dst (for a
// later check, step or import ID); an empty value fails the check.
func recordAttr(addr, attr string, dst *string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), knownvalue.StringFunc(func(v string) error {
		*dst = v
		if v == "" {
			return fmt.Errorf("%s.%s is empty", addr, attr)
		}
		return nil
	}))
}

// loadTestbed reads the env of the running test bed (TestMain started or
// found it).
func loadTestbed(t *testing.T) (root string, env testbed.Env) {
	t.Helper()
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	if env, err = testbed.Load(root); err != nil {
		t.Fatalf("loading the test bed's env: %v", err)
	}
	return root, env
}

// isNotFound tells whether an AWS call answered, typed, that its object
// does not exist (awsclient.NotFound), for tests that look at S3, IAM and
// EKS directly.
func isNotFound(err error) bool { return notfound.Is(awsclient.NotFound("object", err)) }
