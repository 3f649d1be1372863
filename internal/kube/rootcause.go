package kube

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// RootCause is what Flink logged as the reason a job's JobManager exited
// or its job failed: the last "Caused by" of the JobManager container's
// log (or the last exception, when it has no cause), and the pod it was
// read from.
type RootCause struct {
	Pod, Cause string
	// Previous: read from the container's previous run (it exited and was
	// started again, or waits in back-off).
	Previous bool
}

// rootCauseTail is how much of the log is read: Flink prints a failure's
// stack trace, its causes last, just before the process exits
// (ClusterEntrypoint.onFatalError / runClusterEntrypoint), and the
// JobMaster logs each task failure with its cause (ExecutionGraph
// "switched from ... to FAILED"), so the end of the log holds the newest.
const rootCauseTail = int64(2000)

// rootCauseDeadline bounds the reads (pods list and two log reads).
const rootCauseDeadline = 20 * time.Second

// JobManagerRootCause reads Flink's reason from the log of the newest
// JobManager pod of the FlinkDeployment ns/name, through the API server's
// pods/log (which proxies to the node's kubelet). Flink's native and
// standalone Kubernetes integrations both label the JobManager pods
// app=<name>, component=jobmanager (Flink KubernetesUtils
// .getJobManagerSelectors; flink-kubernetes-standalone
// StandaloneKubernetesUtils.getJobManagerSelectors) and name the container
// flink-main-container (Constants.MAIN_CONTAINER_NAME). ok is false when
// no pod or no exception was found; err is a failed read (a runner without
// the pods/log permission gets IsForbidden).
func JobManagerRootCause(ctx context.Context, cfg *rest.Config, ns, name string) (rc RootCause, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, rootCauseDeadline)
	defer cancel()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return rc, false, err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name + ",component=jobmanager"})
	if err != nil || len(pods.Items) == 0 {
		return rc, false, err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	pod := pods.Items[0]
	rc.Pod = pod.Name
	// The current run first (a container in back-off: its last run), then
	// the one before it.
	for _, previous := range []bool{false, true} {
		tail := rootCauseTail
		b, err := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "flink-main-container", TailLines: &tail, Previous: previous}).DoRaw(ctx)
		if err != nil {
			if apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) {
				// No such run (kubelet getContainerLogs: 400 for a
				// previous run that does not exist or a container that
				// waits to start).
				continue
			}
			return rc, false, err
		}
		if cause, found := LastCause(string(b)); found {
			rc.Cause, rc.Previous = cause, previous
			return rc, true, nil
		}
	}
	return rc, false, nil
}

// exceptionLine is the first line of a Java stack trace as
// Throwable.printStackTrace writes it: the class (a name ending in
// Exception or Error, or Throwable) and its message.
var exceptionLine = regexp.MustCompile(`^(?:Caused by: )?((?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)(?:: .*)?)$`)

// LastCause is the root cause of the last stack trace in a log: its last
// "Caused by:" line (Throwable.printStackTrace prints the causes after the
// exception, the innermost last), or the exception itself when it has no
// cause.
func LastCause(log string) (string, bool) {
	lines := strings.Split(strings.ReplaceAll(log, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], " \t")
		m := exceptionLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// A stack trace's header line is followed by "\tat " frames (or
		// "\t... n more").
		if i+1 < len(lines) && strings.HasPrefix(strings.TrimLeft(lines[i+1], " \t"), "at ") || strings.HasPrefix(l, "Caused by: ") {
			return m[1], true
		}
	}
	return "", false
}

// Describe says where the cause was read, for a wait's error.
func (rc RootCause) Describe() string {
	run := "the JobManager's log"
	if rc.Previous {
		run = "the JobManager's log of its previous run"
	}
	return fmt.Sprintf("Flink's reason (the last cause in %s, pod %s): %s", run, rc.Pod, rc.Cause)
}
