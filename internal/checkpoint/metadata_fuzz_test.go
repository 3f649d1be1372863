package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadMetadata: whatever the bytes, ReadMetadata returns a result or a
// *MetadataError inside the input, never panics, and what it returns holds
// together.
//
//	go test ./internal/checkpoint -run=^$ -fuzz=FuzzReadMetadata -fuzztime=150s
func FuzzReadMetadata(f *testing.F) {
	for _, name := range metadataFixtures {
		b, err := os.ReadFile(filepath.Join("testdata", name, "_metadata"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, n := range []int{0, 3, 8, 16, 17, 100, len(b) / 2, len(b) - 700, len(b) - 1} {
			f.Add(b[:n])
		}
	}
	for _, v := range []int32{2, 3, 4, 5, 6} {
		f.Add(synthetic(v, incrementalV2))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const dir = "s3://b/dir"
		m, err := ReadMetadata(bytes.NewReader(b), dir+"/_metadata")
		if err != nil {
			var me *MetadataError
			if !errors.As(err, &me) {
				t.Fatalf("not a *MetadataError: %v", err)
			}
			if me.Offset < 0 || me.Offset > int64(len(b)) {
				t.Fatalf("offset %d outside the %d bytes: %v", me.Offset, len(b), err)
			}
			return
		}
		if m.Version < 2 || m.Version > 6 || m.CheckpointID < 0 {
			t.Fatalf("version %d, checkpoint %d accepted", m.Version, m.CheckpointID)
		}
		if (m.Version >= 4) != (m.Properties != nil) {
			t.Fatalf("version %d with properties %+v", m.Version, m.Properties)
		}
		files := 0
		for _, op := range m.Operators {
			if op.Parallelism < 0 || op.Parallelism > op.MaxParallelism || len(op.Subtasks) > int(op.Parallelism) {
				t.Fatalf("operator %+v accepted", op)
			}
			for _, st := range op.Subtasks {
				files += st.Files
			}
		}
		if files != len(m.Files) {
			t.Fatalf("subtasks count %d files, the metadata lists %d", files, len(m.Files))
		}
		for _, f := range m.Files {
			if f.URI == "" || f.Operator == "" || f.Subtask < 0 {
				t.Fatalf("file %+v", f)
			}
			if f.Kind == FileRelative && (!strings.HasPrefix(f.URI, dir+"/") || badRelativePath(f.Path) != "") {
				t.Fatalf("relative file %+v resolved outside %s", f, dir)
			}
		}
	})
}
