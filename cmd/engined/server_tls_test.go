package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
)

// authority makes a certificate authority with a server certificate for
// 127.0.0.1, and gives the pool that trusts it.
func authority(t *testing.T) (*clustertest.TLS, *x509.CertPool) {
	t.Helper()
	tc, err := clustertest.NewTLS(t.TempDir())
	require.NoError(t, err)
	return tc, tc.ClientConfig().RootCAs
}

// copyFile copies the file at from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

// TestServe_TLSRenewedOnSIGHUP serves HTTPS, renews the certificate files
// and sends SIGHUP: new connections get the new certificate, without a
// restart. Files that cannot be read keep the certificate in use. TLS
// older than 1.2 is refused.
func TestServe_TLSRenewedOnSIGHUP(t *testing.T) {
	needRedis(t)
	t.Parallel()
	oldCA, oldPool := authority(t)
	newCA, newPool := authority(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	copyFile(t, oldCA.ServerCert, certFile)
	copyFile(t, oldCA.ServerKey, keyFile)
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", strings.Join(testCluster.Addrs(), ","),
			"--tokens", "t1", "--tls-cert", certFile, "--tls-key", keyFile}
	})
	d.url, d.token = "https://"+addr, "t1"
	// A new connection for every request: each sees the certificate of the moment.
	trusting := func(pool *x509.CertPool, maxVersion uint16) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: maxVersion}}}
	}
	d.client = trusting(oldPool, 0)
	d.waitHealthy(t)
	get := func(client *http.Client) error {
		resp, err := client.Get(d.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	require.NoError(t, get(trusting(oldPool, 0)))
	require.Error(t, get(trusting(newPool, 0)), "the new authority signed nothing served yet")
	require.Error(t, get(trusting(oldPool, tls.VersionTLS11)), "TLS 1.1 is refused")

	t.Run("a renewed certificate is served after SIGHUP", func(t *testing.T) {
		copyFile(t, newCA.ServerCert, certFile)
		copyFile(t, newCA.ServerKey, keyFile)
		d.hangUp(t, "the HTTPS certificate was read again")
		assert.NoError(t, get(trusting(newPool, 0)))
		assert.Error(t, get(trusting(oldPool, 0)))
	})
	t.Run("files that cannot be read keep the certificate in use", func(t *testing.T) {
		require.NoError(t, os.WriteFile(keyFile, []byte("not a key"), 0o600))
		d.hangUp(t, "the HTTPS certificate stays the one in use")
		assert.NoError(t, get(trusting(newPool, 0)))
	})
	assert.True(t, d.running(), "SIGHUP does not end the daemon")
	assert.Equal(t, 0, d.stop(t))
}

// hangUp sends SIGHUP and waits until the daemon logs logged once more.
func (d *daemon) hangUp(t *testing.T, logged string) {
	t.Helper()
	before := strings.Count(d.stderr.String(), logged)
	d.signal(t, syscall.SIGHUP)
	require.Eventually(t, func() bool { return strings.Count(d.stderr.String(), logged) > before }, time.Minute, 10*time.Millisecond,
		"the daemon logs %q", logged)
}
