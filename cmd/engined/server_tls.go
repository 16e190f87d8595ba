package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
)

// certHolder is the daemon's HTTPS certificate, read again on SIGHUP: a
// renewed certificate takes effect for new connections without a restart.
type certHolder struct {
	certFile, keyFile string // "" for a certificate made in memory (engined dev --tls)
	cert              atomic.Pointer[tls.Certificate]
}

// loadCert reads --tls-cert and --tls-key; both empty means plain HTTP (a
// nil holder).
func loadCert(certFile, keyFile string) (*certHolder, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	h := &certHolder{certFile: certFile, keyFile: keyFile}
	if err := h.reload(); err != nil {
		return nil, err
	}
	return h, nil
}

// reload reads the files again. On an error the certificate in use stays.
func (h *certHolder) reload() error {
	if h.certFile == "" {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(h.certFile, h.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert, --tls-key: %w", err)
	}
	h.cert.Store(&pair)
	return nil
}

// config is the server's TLS configuration: TLS 1.2 or newer, the
// certificate of the moment.
func (h *certHolder) config() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return h.cert.Load(), nil },
	}
}
