package flinkconf

import "testing"

func TestSavepointFormatFor(t *testing.T) {
	for _, c := range []struct {
		backend, requested, want string
		ok                       bool
	}{
		{"rocksdb", "", "CANONICAL", true},
		{"rocksdb", "NATIVE", "NATIVE", true},
		{"hashmap", "CANONICAL", "CANONICAL", true},
		{"", "", "CANONICAL", true},
		{"forst", "", "NATIVE", true},
		{"forst", "NATIVE", "NATIVE", true},
		{"forst", "CANONICAL", "NATIVE", false},
		{"ForSt", "CANONICAL", "NATIVE", false},
	} {
		got, ok := SavepointFormatFor(c.backend, c.requested)
		if got != c.want || ok != c.ok {
			t.Errorf("SavepointFormatFor(%q, %q) = %q, %v; want %q, %v", c.backend, c.requested, got, ok, c.want, c.ok)
		}
	}
}
