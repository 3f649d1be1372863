package flinkrun

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A JobManager whose process exits before its REST API answers (here a
// shell that prints the end of Flink's startup failure and exits 1, as
// ClusterEntrypoint.runClusterEntrypoint does) is ErrJobManagerExited,
// named with the log's last exception and its causes, not a REST API that
// never answered.
func TestWaitREST_jobManagerExited(t *testing.T) {
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := mkdirs(dir, "log"); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "log", "jobmanager.log")
	trace := strings.Join([]string{
		"12:00:00,000 ERROR org.apache.flink.runtime.entrypoint.ClusterEntrypoint - Could not start cluster entrypoint StandaloneApplicationClusterEntryPoint.",
		"org.apache.flink.runtime.entrypoint.ClusterEntrypointException: Failed to initialize the cluster entrypoint StandaloneApplicationClusterEntryPoint.",
		"\tat org.apache.flink.runtime.entrypoint.ClusterEntrypoint.startCluster(ClusterEntrypoint.java:269)",
		"Caused by: org.apache.flink.util.FlinkException: Could not create the ha services from the instantiated HighAvailabilityServicesFactory org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory.",
		"\tat org.apache.flink.runtime.highavailability.HighAvailabilityServicesUtils.createHighAvailabilityServices(HighAvailabilityServicesUtils.java:141)",
		"\t... 4 more",
		"Caused by: java.net.SocketException: Connection reset by peer",
		"\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:330)",
		"\t... 30 more",
	}, "\n")
	pid, err := spawnWithEnv("/bin/sh", []string{"-c", `printf '%s\n' "$TRACE"; exit 1`}, []string{"TRACE=" + trace}, log)
	if err != nil {
		t.Fatal(err)
	}
	c := &FlinkCluster{Dir: dir, RESTURL: "http://127.0.0.1:" + strconv.Itoa(ports[0]), pids: []int{pid}}
	err = c.waitREST(context.Background())
	if !errors.Is(err, ErrJobManagerExited) {
		t.Fatalf("waitREST: %v; want ErrJobManagerExited", err)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	for _, want := range []string{"Failed to initialize the cluster entrypoint", "KubernetesHaServicesFactory", "Connection reset by peer"} {
		if !strings.Contains(first, want) {
			t.Errorf("the error's first line %q does not name %q", first, want)
		}
	}
}
