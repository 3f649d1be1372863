package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A descriptor the test process inherited without close-on-exec (here one
// opened that way) does not reach a process Spawn starts: a lock
// held through it (flock FILE go test …) must end with the test, not live
// on in a daemon such as kube-controller-manager.
func TestSpawnKeepsInheritedDescriptors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// A spawn before the descriptor exists (in `make test`, the test bed's
	// own daemons come first): the descriptor must still be kept out of
	// the next one.
	if _, err := Spawn(sh, []string{"-c", "true"}, os.Environ(), filepath.Join(t.TempDir(), "log")); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(t.TempDir(), "lock")
	fd, err := syscall.Open(lock, syscall.O_CREAT|syscall.O_RDWR, 0o644) // no O_CLOEXEC, as flock(1) opens it
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	out := filepath.Join(t.TempDir(), "fds")
	pid, err := Spawn(sh, []string{"-c", "ls -l /proc/$$/fd > " + out}, os.Environ(), filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for i := 0; i < 100 && (len(b) == 0 || Alive(pid)); i++ {
		b, _ = os.ReadFile(out)
		time.Sleep(50 * time.Millisecond)
	}
	if len(b) == 0 {
		t.Fatal("the spawned shell listed no descriptors")
	}
	if strings.Contains(string(b), lock) {
		t.Fatalf("the spawned process holds the inherited descriptor of %s:\n%s", lock, b)
	}
}
