package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/deployop"
)

// privateMap is private state as the framework keeps it: bytes by key.
type privateMap map[string][]byte

func (p privateMap) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}
func (p privateMap) SetKey(_ context.Context, key string, v []byte) diag.Diagnostics {
	if len(v) == 0 {
		delete(p, key)
	} else {
		p[key] = v
	}
	return nil
}

// Private state written by earlier versions loads field by field (its keys
// and their JSON strings are the contract), and saving what was loaded
// writes the same keys back.
func TestDeploymentPrivateKeys(t *testing.T) {
	written := privateMap{
		"uid": []byte(`"u-1"`), "wait_pending": []byte(`"the apply did not finish waiting"`),
		"restore_pending": []byte(`"from:s3://b/sp-1"`), "unwritten": []byte(`"mode,backend"`), "adopt": []byte(`"pending"`),
		"replace_from": []byte(`"ns/old"`), "carry_to": []byte(`"ns/new"`), "carried": []byte(`"s3://b/final"`),
		"recorded_savepoint": []byte(`"s3://b/sp-0"`), "final_savepoint_failed": []byte(`"boom"`),
	}
	var diags diag.Diagnostics
	got := loadDeploymentPrivate(context.Background(), written, &diags)
	want := &deploymentPrivate{
		Marks: deployop.Marks{UID: "u-1", WaitPending: "the apply did not finish waiting", Restoring: true, RestoreFrom: "s3://b/sp-1",
			Carried: "s3://b/final"},
		Unwritten: []string{"mode", "backend"}, Adopt: true, ReplaceFrom: "ns/old", CarryTo: "ns/new",
		RecordedSavepoint: "s3://b/sp-0", FinalFailed: "boom",
	}
	if diags.HasError() || !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v (%v), want %+v", got, diags, want)
	}
	saved := privateMap{}
	got.save(context.Background(), saved, &diags)
	if diags.HasError() || !reflect.DeepEqual(saved, written) {
		t.Errorf("saved %q, want %q", saved, written)
	}
	// Cleared marks remove their keys (the UID stays: Read records it).
	got.WaitDone()
	got.forgetImport()
	got.save(context.Background(), saved, &diags)
	for _, k := range []string{"wait_pending", "restore_pending", "unwritten", "adopt"} {
		if _, ok := saved[k]; ok {
			t.Errorf("key %s kept after it was cleared", k)
		}
	}
	if string(saved["uid"]) != `"u-1"` {
		t.Errorf("uid %s", saved["uid"])
	}
}
