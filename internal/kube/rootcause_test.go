package kube

import "testing"

func TestLastCause(t *testing.T) {
	for _, tc := range []struct {
		name, log, want string
		found           bool
	}{
		{name: "the innermost cause of the last trace", found: true,
			log: "2026-12-02 10:00:00,000 INFO  org.apache.flink.runtime.entrypoint.ClusterEntrypoint [] - Starting\n" +
				"2026-12-02 10:00:01,000 ERROR org.apache.flink.runtime.entrypoint.ClusterEntrypoint [] - Fatal error occurred in the cluster entrypoint.\n" +
				"java.util.concurrent.CompletionException: org.apache.flink.util.FlinkRuntimeException: Could not execute application.\n" +
				"\tat java.base/java.util.concurrent.CompletableFuture.encodeThrowable(Unknown Source)\n" +
				"Caused by: org.apache.flink.util.FlinkRuntimeException: Could not execute application.\n" +
				"\tat org.apache.flink.client.deployment.application.ApplicationDispatcherBootstrap.lambda$runApplicationAsync$2(ApplicationDispatcherBootstrap.java:313)\n" +
				"\t... 4 more\n" +
				"Caused by: java.lang.ClassNotFoundException: com.example.NoSuchJob\n" +
				"\tat java.base/java.net.URLClassLoader.findClass(Unknown Source)\n" +
				"\t... 9 more\n" +
				"2026-12-02 10:00:01,100 INFO  org.apache.flink.runtime.blob.BlobServer [] - Stopped BLOB server\n",
			want: "java.lang.ClassNotFoundException: com.example.NoSuchJob"},
		{name: "an exception without a cause", found: true,
			log:  "x\norg.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy\n\tat org.apache.flink.runtime.executiongraph.failover.ExecutionFailureHandler.handleFailure(ExecutionFailureHandler.java:219)\n",
			want: "org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy"},
		{name: "the later of two traces", found: true,
			log: "java.io.IOException: first\n\tat a.B.c(B.java:1)\nCaused by: java.lang.IllegalStateException: old\n\tat a.B.c(B.java:1)\n" +
				"java.lang.RuntimeException: second\n\tat a.B.c(B.java:1)\nCaused by: java.lang.IllegalStateException: The maximum parallelism (8) of the restored state is lower than the configured parallelism (12).\n\tat a.B.c(B.java:1)\n",
			want: "java.lang.IllegalStateException: The maximum parallelism (8) of the restored state is lower than the configured parallelism (12)."},
		{name: "an exception's name in a log message is no trace",
			log: "2026-12-02 INFO x [] - retrying after java.net.ConnectException\nplain line\n"},
		{name: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found := LastCause(tc.log)
			if got != tc.want || found != tc.found {
				t.Errorf("LastCause = %q, %v; want %q, %v", got, found, tc.want, tc.found)
			}
		})
	}
}
