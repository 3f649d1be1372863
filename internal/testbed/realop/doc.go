// Package realop is the real-operator runner: it runs the real Flink
// Kubernetes Operator 1.15.0 from jars you bring (FLINKSTATE_OPERATOR_DIR)
// on the test bed, as the operator's Helm chart runs it in a cluster — the
// operator's controller JVM (StartRealOperator) and its admission webhook
// (StartRealWebhook, in a network namespace of its own, registered as the
// chart registers it). It stands in for the chart's Deployment and Service
// on a test bed with no kubelet and no pod network; what the operator does
// is its own. The differential tests (package testbed) hold the operator
// model to it.
package realop
