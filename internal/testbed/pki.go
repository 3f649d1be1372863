package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/testbed/flinkrun"
)

// testCA is a certificate authority of the test bed's own.
type testCA struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

func newTestCA(cn string) (*testCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &testCA{cert: cert, der: der, key: key}, nil
}

// issue signs a leaf certificate from tmpl (serial and validity are set
// here) and returns its DER and its key's DER.
func (ca *testCA) issue(tmpl *x509.Certificate) (der, keyDER []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(2))
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(30*24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err = x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err = x509.MarshalECPrivateKey(key)
	return der, keyDER, err
}

type pemFile struct {
	path, typ string
	der       []byte
}

func writePEMs(files ...pemFile) error {
	for _, f := range files {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writeCAAndLeaf creates a CA named caName and issues one certificate from
// it (tmpl), written as <name>-ca.crt, <name>.crt and <name>.key in pki.
func writeCAAndLeaf(pki, name, caName string, tmpl *x509.Certificate) (caFile, certFile, keyFile string, err error) {
	ca, err := newTestCA(caName)
	if err != nil {
		return "", "", "", err
	}
	der, keyDER, err := ca.issue(tmpl)
	if err != nil {
		return "", "", "", err
	}
	caFile = filepath.Join(pki, name+"-ca.crt")
	certFile = filepath.Join(pki, name+".crt")
	keyFile = filepath.Join(pki, name+".key")
	return caFile, certFile, keyFile, writePEMs(
		pemFile{caFile, "CERTIFICATE", ca.der}, pemFile{certFile, "CERTIFICATE", der}, pemFile{keyFile, "EC PRIVATE KEY", keyDER})
}

// writeClientCA creates the CA kube-apiserver trusts for client
// certificates (--client-ca-file) and issues one client certificate from
// it. The API server takes the user from the certificate's CommonName and
// the groups from its Organization (Kubernetes docs, "Authenticating",
// X509 client certificates); system:masters makes it an administrator, like
// the static token. It returns the CA file and the client certificate and
// key files.
func writeClientCA(pki string) (caFile, certFile, keyFile string, err error) {
	return writeCAAndLeaf(pki, "client", "testbed-client-ca", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "testbed-cert-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// writeKubeletCA creates the CA kube-apiserver verifies kubelets' serving
// certificates with (--kubelet-certificate-authority) and the serving
// certificate of the node stand-in's log endpoint (flinkrun.ServeKubelet),
// for the address the API server dials: the Node's InternalIP, 127.0.0.1.
func writeKubeletCA(pki string) (caFile, certFile, keyFile string, err error) {
	return writeCAAndLeaf(pki, "kubelet", "testbed-kubelet-ca", &x509.Certificate{
		Subject:     pkix.Name{CommonName: flinkrun.NodeName},
		DNSNames:    []string{flinkrun.NodeName},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// writeServingCA creates a CA and a serving certificate from it for the
// given DNS names: what the test bed's TLS listener for AWS host names
// presents, and the CA the Flink JVMs trust for it. It returns the CA file
// and the certificate and key files.
func writeServingCA(pki string, names []string) (caFile, certFile, keyFile string, err error) {
	return writeCAAndLeaf(pki, "aws", "testbed-aws-ca", &x509.Certificate{
		Subject:     pkix.Name{CommonName: names[0]},
		DNSNames:    names,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// issueCertFiles creates a CA named caName and issues one certificate from
// it (tmpl), written as PEM to caFile, certFile and keyFile (realop.Bed's
// IssueCert).
func issueCertFiles(caName string, tmpl *x509.Certificate, caFile, certFile, keyFile string) error {
	ca, err := newTestCA(caName)
	if err != nil {
		return err
	}
	der, keyDER, err := ca.issue(tmpl)
	if err != nil {
		return err
	}
	return writePEMs(pemFile{caFile, "CERTIFICATE", ca.der}, pemFile{certFile, "CERTIFICATE", der}, pemFile{keyFile, "EC PRIVATE KEY", keyDER})
}
