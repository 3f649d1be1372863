package flinkdeploy

import "testing"

// Only specs that render the same are the same; an unknown spec (nil)
// never is, and wait_for is no part of it.
func TestSameSpec(t *testing.T) {
	a, b := Spec{Image: "flink:2.2.1", FlinkVersion: "2.2.1"}, Spec{Image: "flink:2.2.1", FlinkVersion: "2.2.1"}
	other := Spec{Image: "flink:2.2.0", FlinkVersion: "2.2.1"}
	for name, c := range map[string]struct {
		d, o Desired
		same bool
	}{
		"equal":           {Desired{Spec: &a, WaitFor: "deployed"}, Desired{Spec: &b, WaitFor: "none"}, true},
		"another image":   {Desired{Spec: &a}, Desired{Spec: &other}, false},
		"planned unknown": {Desired{Spec: &a}, Desired{}, false},
		"prior unknown":   {Desired{}, Desired{Spec: &b}, false},
	} {
		if got := c.d.SameSpec(c.o); got != c.same {
			t.Errorf("%s: SameSpec = %v, want %v", name, got, c.same)
		}
	}
}
