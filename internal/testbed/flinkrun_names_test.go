package testbed

import "github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/flinkrun"

// The Flink runner's and node stand-in's names (package flinkrun) under the
// names this package's tests were written with.

const (
	jobManagerSelector  = flinkrun.JobManagerSelector
	taskManagerSelector = flinkrun.TaskManagerSelector
	standaloneType      = flinkrun.StandaloneType
	NodeName            = flinkrun.NodeName
)

var (
	podsGVR       = flinkrun.PodsGVR
	podReady      = flinkrun.PodReady
	poll          = flinkrun.Poll
	KnowsVersion  = flinkrun.KnowsVersion
	JarHasClass   = flinkrun.JarHasClass
	BundledAWSSDK = flinkrun.BundledAWSSDK
)
