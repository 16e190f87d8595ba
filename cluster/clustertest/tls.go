package clustertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// TLS is a certificate authority of its own and the certificates it signed
// for a test: one for the servers (127.0.0.1, ::1 and localhost) and one for
// a client. Options.TLS with it starts servers that speak TLS only, to
// clients, to each other on the cluster bus and to their replicas, and that
// require a client certificate the authority signed (mutual TLS).
type TLS struct {
	CAFile                string // PEM of the authority's certificate
	ServerCert, ServerKey string // PEM files of the servers' certificate and key
	ClientCert, ClientKey string // PEM files of the client's certificate and key
	ServerNames           []string
	client                *tls.Config
}

// NewTLS makes an authority and its certificates, valid for a day, as
// files in dir.
func NewTLS(dir string) (*TLS, error) {
	t := &TLS{
		CAFile:      filepath.Join(dir, "ca.pem"),
		ServerCert:  filepath.Join(dir, "server.pem"),
		ServerKey:   filepath.Join(dir, "server-key.pem"),
		ClientCert:  filepath.Join(dir, "client.pem"),
		ClientKey:   filepath.Join(dir, "client-key.pem"),
		ServerNames: []string{"localhost"},
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "atomledger test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(t.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, err
	}
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, certFile, keyFile string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    ca.NotBefore,
			NotAfter:     ca.NotAfter,
			KeyUsage:     x509.KeyUsageDigitalSignature,
			// Redis uses the server's certificate for its outgoing links too
			// (the cluster bus, replication): both usages.
			ExtKeyUsage: []x509.ExtKeyUsage{usage, x509.ExtKeyUsageClientAuth},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = t.ServerNames
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyFile, "PRIVATE KEY", keyDER)
	}
	if err := leaf(2, "redis", x509.ExtKeyUsageServerAuth, t.ServerCert, t.ServerKey); err != nil {
		return nil, err
	}
	if err := leaf(3, "client", x509.ExtKeyUsageClientAuth, t.ClientCert, t.ClientKey); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	t.client = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return t, nil
}

// ClientConfig is a client's TLS configuration: the authority as its only
// root, the client certificate. Each call returns a new copy.
func (t *TLS) ClientConfig() *tls.Config { return t.client.Clone() }

// serverConfig are the redis.conf lines of a server on port: TLS on it and
// no plain port, TLS on the cluster bus and replication links too.
func (t *TLS) serverConfig(port int) []string {
	return []string{
		"port 0",
		"tls-port " + strconv.Itoa(port),
		"tls-cert-file " + t.ServerCert,
		"tls-key-file " + t.ServerKey,
		"tls-ca-cert-file " + t.CAFile,
		"tls-auth-clients yes",
		"tls-cluster yes",
		"tls-replication yes",
	}
}

func writePEM(path, kind string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", kind, err)
	}
	return nil
}
