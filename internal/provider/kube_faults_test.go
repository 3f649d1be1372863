package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/kube"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// kubeFaultProxy puts a testbed.FaultProxy in front of the test bed's API
// server and returns it with a provider block that reaches the cluster
// only through it, so the test can make the API server unreachable while
// terraform runs. The test's own clients (testKube, the fake operator) go
// straight to the API server.
func kubeFaultProxy(t *testing.T) (*testbed.FaultProxy, string) {
	t.Helper()
	if testTarget != "testbed" {
		t.Skip("fault injection needs the local test bed")
	}
	root, err := testbed.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	env, err := testbed.Load(root)
	if err != nil {
		t.Fatalf("loading the test bed's env: %v", err)
	}
	p, err := testbed.NewFaultProxy(env.KubeHost)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.KubeconfigVia(p.URL("https"), kubeconfig); err != nil {
		t.Fatal(err)
	}
	return p, fmt.Sprintf(`
provider "flinkstate" {
  kubernetes {
    config_path = %q
  }
}
`, kubeconfig)
}

// stopOnceTerraformMovesOn stops the API server (through p) for d, once
// terraform has sent its next request after the object in obj existed, so
// the fault hits the wait and never cuts the create's own response (a lost
// create response is another scenario).
func stopOnceTerraformMovesOn(t *testing.T, p *testbed.FaultProxy, d time.Duration) {
	n := p.ClientBytes()
	if !p.WaitClientBytesAfter(n, 30*time.Second) {
		t.Errorf("terraform sent nothing after the create")
		return
	}
	t.Logf("fault: API server unreachable for %s", d)
	p.StopFor(d)
}

// uidOf records the UID of a live object into *uid, or checks it is still *uid.
func uidOf(t *testing.T, get func() (*unstructured.Unstructured, error), uid *ktypes.UID) func(*terraform.State) error {
	return func(*terraform.State) error {
		obj, err := get()
		if err != nil {
			return err
		}
		if *uid == "" {
			*uid = obj.GetUID()
			return nil
		}
		if obj.GetUID() != *uid {
			return fmt.Errorf("%s %s/%s was replaced: UID %s, was %s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), obj.GetUID(), *uid)
		}
		return nil
	}
}

// setDeploymentStatus plays the operator: it writes status for the current generation.
func setDeploymentStatus(t *testing.T, ns, name string, status map[string]any) {
	t.Helper()
	r := testKube(t).Dynamic.Resource(kube.FlinkDeploymentGVR).Namespace(ns)
	obj, err := r.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status["observedGeneration"] = obj.GetGeneration()
	obj.Object["status"] = status
	if _, err := r.UpdateStatus(context.Background(), obj, metav1.UpdateOptions{FieldManager: "flink-kubernetes-operator"}); err != nil {
		t.Fatalf("writing status: %v", err)
	}
}
