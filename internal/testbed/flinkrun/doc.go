// Package flinkrun is the Flink runner and the node stand-in. The runner
// runs real Flink 2.2.1 (built from tools/flink) on this machine: a
// JobManager and a TaskManager JVM per cluster with a job's
// flinkConfiguration, reaching S3 and STS through the AWS front as a pod in
// EKS would (IRSA or Pod Identity credentials, the regional endpoints), and
// says which Flink versions know which keys (flinkkeys.go). The node
// stand-in (Node) stands in for a cluster's kubelet: the test bed has
// none, so it runs the pods of the JobManager Deployments the real
// operator creates as real Flink processes and reports their status as the
// kubelet would; PodIdentityAgent stands in for EKS's Pod Identity Agent.
// What it needs of the test bed comes in a Bed (package testbed's
// Env.FlinkBed).
package flinkrun
