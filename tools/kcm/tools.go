//go:build tools

// Package tools pins kube-controller-manager for the real operator's test
// bed (its garbage collector): the same Kubernetes release as tools/kube
// (TestKubeControllerManagerPinMatchesAPIServer), in a module of its own so
// that pinning it does not change the cache key, and the cold build, of
// kube-apiserver and etcd.
package tools

import _ "k8s.io/kubernetes/cmd/kube-controller-manager"
