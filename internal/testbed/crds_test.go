package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The test bed reads the operator's four CRDs from ../shared beside the
// repository root unless FLINKSTATE_OPERATOR_FILES names another folder.
func TestOperatorFilesDir_defaultIsSharedBesideTheRepository(t *testing.T) {
	t.Setenv(OperatorFilesEnv, "")
	if got, want := OperatorFilesDir("/x/main"), "/x/shared/testbed/flink-operator-1.15.0"; got != want {
		t.Fatalf("OperatorFilesDir = %q, want %q", got, want)
	}
	t.Setenv(OperatorFilesEnv, "/elsewhere")
	if got := OperatorFilesDir("/x/main"); got != "/elsewhere" {
		t.Fatalf("OperatorFilesDir with %s set = %q", OperatorFilesEnv, got)
	}
}

// A folder missing one of the four CRDs stops the test bed before anything
// is built or started, naming the folder and the missing file.
func TestUp_missingCRDFailsAtOnceNamingThePath(t *testing.T) {
	files := t.TempDir()
	crds := filepath.Join(files, "crds")
	if err := os.MkdirAll(crds, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range OperatorCRDFiles[1:] {
		if err := os.WriteFile(filepath.Join(crds, f), []byte("kind: CustomResourceDefinition\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(OperatorFilesEnv, files)
	t.Setenv("FLINKSTATE_TESTBED_DIR", t.TempDir())
	t.Setenv("FLINKSTATE_TESTBED_AWS", "")
	_, started, err := Up(context.Background(), t.TempDir(), nil)
	if err == nil || started {
		t.Fatalf("Up with a CRD missing: started=%v err=%v, want an error and nothing started", started, err)
	}
	for _, want := range []string{crds, OperatorCRDFiles[0], OperatorFilesEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// The shared folder this checkout is laid beside holds all four CRDs and
// the operator's examples.
func TestOperatorFiles_presentInShared(t *testing.T) {
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := readCRDs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("read %d CRDs, want 4", len(got))
	}
	if _, err := OperatorExamplesDir(root); err != nil {
		t.Fatal(err)
	}
}
