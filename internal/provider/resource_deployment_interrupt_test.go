package provider

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

// interruptApply sends SIGINT (what Ctrl-C sends) to the terraform apply
// this test process runs, once ready() says the apply got far enough. Only
// for serial tests (resource.Test): Go runs no parallel test of the package
// beside a serial one, so the only terraform apply child is this test's.
func interruptApply(t *testing.T, ready func() bool) {
	t.Helper()
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for !ready() {
			if time.Now().After(deadline) {
				t.Errorf("the apply never got to the point of interruption")
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // well into the wait
		pid := childApply(t)
		if pid == 0 {
			t.Errorf("no terraform apply process to interrupt")
			return
		}
		if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
			t.Errorf("interrupting terraform (pid %d): %v", pid, err)
		}
	}()
}

// childApply finds the terraform apply process this test process started.
func childApply(t *testing.T) int {
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(self) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 1 && (strings.HasSuffix(args[0], "terraform") || strings.HasSuffix(args[0], "tofu")) {
			for _, a := range args[1:] {
				if a == "apply" {
					pid, _ := strconv.Atoi(filepath.Base(d))
					return pid
				}
			}
		}
	}
	return 0
}

// Ctrl-C while a create waits for the job: the run says it was interrupted
// (not a timeout, not an unreachable operator), the FlinkDeployment is kept,
// not tainted, and the next apply updates it (waits again) instead of
// replacing it.
func TestAccDeployment_interruptedCreateWait(t *testing.T) {
	skipUnlessAcc(t)
	ns := testNamespace(t)
	op := startOperator(t, ns)
	cfg := restoreConfig(ns, randName("interrupt-"), "flink:2.2.1-java17", "", `  wait_for = "running"`)
	rec := &diagRecorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					op.SetFaults(func(f *testbed.Faults) { f.Down = true })
					interruptApply(t, func() bool { _, err := getDeployment(t, ns, "orders"); return err == nil })
				},
				Config:      cfg,
				ExpectError: regexpMust(`execution halted|interrupted`),
			},
			{
				PreConfig: func() {
					// What terraform showed (a warning: the create is kept).
					rec.checkWarning(t, "ApplyResourceChange", "created but not ready yet", "interrupted", "into the wait (the run was cancelled",
						"is kept (not replaced)")
					if ds := rec.find("ApplyResourceChange", true, "is the Flink operator running"); len(ds) > 0 {
						t.Errorf("an interruption blamed on the operator: %v", ds)
					}
					op.SetFaults(func(f *testbed.Faults) { f.Down = false })
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(depAddr, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}
