package provider

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

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
	_, env := loadTestbed(t)
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

// stopAPIServerDuringWait keeps the operator down until terraform has
// created the object (exists) and moved on to waiting, makes the API server
// unreachable for d, then lets the operator work: the wait has to ride out
// the fault to see the object ready. The returned func waits for the fault
// to be over (call it from the step's Check).
func stopAPIServerDuringWait(t *testing.T, p *testbed.FaultProxy, op *testbed.Operator, d time.Duration, exists func() bool) func() error {
	op.SetFaults(func(f *testbed.Faults) { f.Down = true })
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(3 * time.Minute)
		for !exists() {
			if time.Now().After(deadline) {
				op.SetFaults(func(f *testbed.Faults) { f.Down = false })
				done <- fmt.Errorf("terraform did not create the object")
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		stopOnceTerraformMovesOn(t, p, d)
		op.SetFaults(func(f *testbed.Faults) { f.Down = false })
		done <- nil
	}()
	var once sync.Once
	var err error
	wait := func() error {
		once.Do(func() { err = <-done })
		return err
	}
	t.Cleanup(func() { _ = wait() })
	return wait
}
