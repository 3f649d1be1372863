// Command testbed starts (up), stops (down) or builds the tools of (build) the
// local acceptance test bed: etcd + kube-apiserver with the Flink operator's
// CRDs, and the kumo AWS emulator (LocalStack with FLINKSTATE_TESTBED_AWS=
// localstack). `up` leaves them running in the background and writes
// .testbed/env; calling it again reuses a healthy test bed of the same AWS
// backend.
// `prereqs` creates in it what a real EKS cluster would already have for
// examples/complete (the namespace, the IAM OIDC provider) and prints the
// OIDC provider's ARN. `operator` plays the Flink operator's part for the
// demo (a model of its rules: it writes the status the operator would
// report) and runs each job as real Flink 2.2.1 (FLINKSTATE_DEMO_FLINK=model
// for placeholder files instead); with the operator's jars
// (FLINKSTATE_OPERATOR_DIR) it runs the real operator 1.15.0 instead, its
// pods on the node stand-in as real Flink 2.2.1.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: testbed up|down|build|prereqs|operator|tool NAME")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	root, err := testbed.FindRoot()
	if err != nil {
		fail(err)
	}
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "testbed: "+f+"\n", a...) }
	switch os.Args[1] {
	case "build":
		// The services' tools and real Flink (Maven) build side by side.
		flinkErr := make(chan error, 1)
		go func() { _, err := testbed.BuildFlink(ctx, root, logf); flinkErr <- err }()
		if _, err := testbed.BuildTools(ctx, root, logf); err != nil {
			fail(err)
		}
		if err := <-flinkErr; err != nil {
			fail(err)
		}
	case "up":
		start := time.Now()
		env, started, err := testbed.Up(ctx, root, logf)
		if err != nil {
			fail(err)
		}
		envFile, _ := filepath.Rel(root, filepath.Join(testbed.StateDir(root), "env"))
		if started {
			logf("started in %s", time.Since(start).Round(100*time.Millisecond))
		} else {
			logf("already running")
		}
		fmt.Printf("kube-apiserver %s\nAWS emulator   %s (%s)\nuse it:        . %s\n", env.KubeHost, env.AWSEndpoint, env.AWSBackend, envFile)
	case "prereqs":
		// What a real cluster would have: the namespace and the IAM OIDC provider.
		env, err := testbed.Load(root)
		if err != nil {
			fail(fmt.Errorf("no test bed running (make testbed-up): %w", err))
		}
		arn, err := testbed.Prereqs(ctx, env, "data-processing")
		if err != nil {
			fail(err)
		}
		fmt.Println(arn)
	case "operator":
		// Plays the Flink operator for make demo in the data-processing
		// namespace, with real Flink running the jobs, until interrupted.
		env, err := testbed.Load(root)
		if err != nil {
			fail(fmt.Errorf("no test bed running (make testbed-up): %w", err))
		}
		// With the operator's jars (FLINKSTATE_OPERATOR_DIR), the real
		// operator 1.15.0 and the node stand-in instead of the model.
		if _, jarsErr := testbed.OperatorDir(); jarsErr == nil {
			err = testbed.DemoRealOperator(ctx, root, env, "data-processing", logf)
		} else if os.Getenv(testbed.OperatorDirEnv) != "" {
			err = jarsErr
		} else {
			err = testbed.DemoOperator(ctx, env, "data-processing", logf)
		}
		if err != nil {
			fail(err)
		}
	case "tool":
		// Builds (once, cached) a pinned tool from tools/ and prints its
		// path; localstack: installs it into a virtualenv, prints its python.
		if len(os.Args) != 3 {
			fail(fmt.Errorf("usage: testbed tool NAME"))
		}
		p, err := testbed.Tool(ctx, root, os.Args[2])
		if err != nil {
			fail(err)
		}
		fmt.Println(p)
	case "down":
		if err := testbed.Down(root); err != nil {
			fail(err)
		}
		logf("stopped, data removed")
	default:
		fmt.Fprintln(os.Stderr, "usage: testbed up|down|build|prereqs|operator")
		os.Exit(2)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testbed:", err)
	os.Exit(1)
}
