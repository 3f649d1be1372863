//go:build tools

// Package tools pins the kube-apiserver command for the test bed.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
