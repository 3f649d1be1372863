package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// deploymentMoveRequest is Terraform's request for a moved block from a
// flinkstate_deployment (its stored attributes and private data) to
// flinkstate_blue_green_deployment.
func deploymentMoveRequest(t *testing.T, provider string) *tfprotov6.MoveResourceStateRequest {
	t.Helper()
	private, err := json.Marshal(map[string][]byte{privateUID: []byte(`"5d1c2a64-uid"`)})
	if err != nil {
		t.Fatal(err)
	}
	return &tfprotov6.MoveResourceStateRequest{
		SourceProviderAddress: provider,
		SourceTypeName:        "flinkstate_deployment",
		SourceState: &tfprotov6.RawState{JSON: []byte(`{"id": "flink/orders", "namespace": "flink", "name": "orders", "image": "flink:2.2.1-java17",
			"flink_version": "2.2.1", "job_id": "6ecfa5c3aa70ee32e5c0745e52090607", "job_state": "RUNNING", "final_savepoint": true}`)},
		SourcePrivate:  private,
		TargetTypeName: "flinkstate_blue_green_deployment",
	}
}

// The move keeps the deployment's attributes and the old job's, and marks
// the instance with the FlinkDeployment it hands over from (its UID from
// flinkstate_deployment's private state); the next plan without the
// refresh is refused, as after every move.
func TestMoveState_deploymentToBlueGreen(t *testing.T) {
	srv := newMoveServer(t)
	m, err := srv.MoveResourceState(context.Background(), deploymentMoveRequest(t, "registry.terraform.io/flinkstate/flinkstate"))
	if err != nil || hasError(m.Diagnostics) {
		t.Fatalf("move: %v %s", err, diagText(m.Diagnostics))
	}
	v := stateValue(t, "flinkstate_blue_green_deployment", m.TargetState)
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"namespace": "flink", "name": "orders", "image": "flink:2.2.1-java17",
		"job_id": "6ecfa5c3aa70ee32e5c0745e52090607", "job_state": "RUNNING", "active_deployment_name": "orders"} {
		var got string
		if err := attrs[k].As(&got); err != nil || got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if !attrs["blue_green_state"].IsNull() {
		t.Errorf("blue_green_state %s, want null before the handover", attrs["blue_green_state"])
	}
	var mv bgMove
	if err := json.Unmarshal([]byte(privateKeys(t, m.TargetPrivate)[privateBGMove]), &mv); err != nil {
		t.Fatalf("private %s: %v", m.TargetPrivate, err)
	}
	if mv != (bgMove{Namespace: "flink", Name: "orders", UID: "5d1c2a64-uid"}) {
		t.Errorf("move mark %+v", mv)
	}
	if !strings.Contains(string(m.TargetPrivate), privateMoved) {
		t.Errorf("private %s: no %q mark (a plan without refresh would not be refused)", m.TargetPrivate, privateMoved)
	}
}

// A flinkstate_deployment of another provider is not this provider's, and
// not moved.
func TestMoveState_deploymentOfAnotherProviderRefused(t *testing.T) {
	m, err := newMoveServer(t).MoveResourceState(context.Background(), deploymentMoveRequest(t, "registry.terraform.io/acme/notflink"))
	if err != nil {
		t.Fatal(err)
	}
	if !hasError(m.Diagnostics) {
		t.Errorf("moved from another provider: %s", m.TargetState)
	}
}
