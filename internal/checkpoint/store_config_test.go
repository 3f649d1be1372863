package checkpoint

import "testing"

func TestStoreOf(t *testing.T) {
	cases := []struct {
		name        string
		cfg         map[string]string
		bucket, dir string
		ok          bool
	}{
		{"none", nil, "", "", false},
		{"current key", map[string]string{"execution.checkpointing.dir": "s3://b/flink/cp"}, "b", "flink/cp", true},
		{"deprecated key", map[string]string{"state.checkpoints.dir": "s3a://b/cp/"}, "b", "cp", true},
		{"current key wins", map[string]string{"execution.checkpointing.dir": "s3://new/cp", "state.checkpoints.dir": "s3://old/cp"}, "new", "cp", true},
		{"not s3", map[string]string{"execution.checkpointing.dir": "file:///tmp/cp"}, "", "", false},
		{"no directory", map[string]string{"execution.checkpointing.dir": "s3://b"}, "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, d, ok := StoreOf(c.cfg)
			if b != c.bucket || d != c.dir || ok != c.ok {
				t.Errorf("StoreOf = %q, %q, %v; want %q, %q, %v", b, d, ok, c.bucket, c.dir, c.ok)
			}
		})
	}
}
