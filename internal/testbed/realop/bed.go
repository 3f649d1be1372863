package realop

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
)

// Bed is what the runner needs of the test bed (package testbed gives it
// from its Env, its operator files and its PKI).
type Bed struct {
	// KubeHost is the API server's URL, Kubeconfig the test bed's kubeconfig.
	KubeHost, Kubeconfig string
	// HelmDir is the operator's Helm chart (testbed.OperatorFilesDir's helm/).
	HelmDir string
	// IssueCert creates a CA named caName and issues one certificate from
	// it (tmpl), written as PEM to caFile, certFile and keyFile.
	IssueCert func(caName string, tmpl *x509.Certificate, caFile, certFile, keyFile string) error
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
