package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Mutual TLS, for members reachable from other machines. Every
// connection between a session process and its member is mutual TLS
// when the member serves it: the session dials the member (verifying the
// member's certificate against ClientTLS.CAFile, by the address's host,
// and presenting its own certificate), and the member dials back the
// session's node (presenting its certificate, and verifying the
// session's against ServerTLS.ClientCAFile: the same principal that
// connected in). A session's node in turn requires the member's
// certificate to chain to CAFile. The token is still required on every
// stream and call: TLS says which machines may connect; the token says
// which of the user's processes may attach.

// ServerTLS are a member's TLS files (PEM).
type ServerTLS struct {
	// CertFile and KeyFile are the member's certificate and key, for the
	// host sessions dial (and, as a client, for dialling them back).
	CertFile, KeyFile string
	// ClientCAFile holds the CA certificates a session's certificate
	// must be signed by.
	ClientCAFile string
}

// ClientTLS are an attaching process's TLS files (PEM).
type ClientTLS struct {
	// CAFile holds the CA certificates the member's certificate must be
	// signed by.
	CAFile string
	// CertFile and KeyFile are this process's certificate and key.
	CertFile, KeyFile string
}

// nodeTLS is one node's two sides: as a gRPC server and as a client.
// nil means plaintext.
type nodeTLS struct {
	server *tls.Config
	client *tls.Config
}

// ErrTLSRequired refuses a non-loopback listen address without TLS
// (ServeOptions.Plaintext allows it).
var ErrTLSRequired = errors.New("remote: a listen address other than loopback needs TLS (or an explicit allowance of plaintext)")

// CheckListen refuses to listen beyond loopback in plaintext unless
// allowed.
func CheckListen(listen string, secured, allowPlaintext bool) error {
	if secured || allowPlaintext {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("remote: listen address %q is not host:port", listen)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrTLSRequired, listen)
}

// load reads a member's files.
func (o *ServerTLS) load() (*nodeTLS, error) {
	if o == nil {
		return nil, nil
	}
	cert, pool, err := loadPair(o.CertFile, o.KeyFile, o.ClientCAFile)
	if err != nil {
		return nil, err
	}
	return &nodeTLS{
		// Sessions connecting in: a certificate from the client CA.
		server: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool},
		// Dialling a session's node back: it presents its client
		// certificate, checked against the same CA, whatever its names.
		client: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
			InsecureSkipVerify: true, VerifyPeerCertificate: verifyChain(pool, x509.ExtKeyUsageClientAuth)},
	}, nil
}

// load reads an attaching process's files.
func (o *ClientTLS) load() (*nodeTLS, error) {
	if o == nil {
		return nil, nil
	}
	cert, pool, err := loadPair(o.CertFile, o.KeyFile, o.CAFile)
	if err != nil {
		return nil, err
	}
	return &nodeTLS{
		// The member dialling back presents its server certificate.
		server: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
			ClientAuth: tls.RequireAnyClientCert, VerifyPeerCertificate: verifyChain(pool, x509.ExtKeyUsageServerAuth)},
		// Dialling the member: its certificate names the host dialled.
		client: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool},
	}, nil
}

func loadPair(certFile, keyFile, caFile string) (tls.Certificate, *x509.CertPool, error) {
	if certFile == "" || keyFile == "" || caFile == "" {
		return tls.Certificate{}, nil, errors.New("remote: TLS needs a certificate, its key and a CA file")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("remote: TLS certificate: %w", err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("remote: TLS CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("remote: TLS CA file %s holds no PEM certificate", caFile)
	}
	return cert, pool, nil
}

// verifyChain checks that the peer's certificate chains to roots for
// usage (no host name: the peer is who holds a certificate of that CA).
func verifyChain(roots *x509.CertPool, usage x509.ExtKeyUsage) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("remote: the peer sent no TLS certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, b := range raw {
			c, err := x509.ParseCertificate(b)
			if err != nil {
				return fmt.Errorf("remote: the peer's TLS certificate: %w", err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
}

// serverCreds and clientCreds are the node's transport credentials.
func (t *nodeTLS) serverCreds() credentials.TransportCredentials {
	if t == nil {
		return insecure.NewCredentials()
	}
	return credentials.NewTLS(t.server)
}

func (t *nodeTLS) clientCreds() credentials.TransportCredentials {
	if t == nil {
		return insecure.NewCredentials()
	}
	return credentials.NewTLS(t.client)
}

// tlsHint explains a failed connection that TLS (or its absence) may
// have caused; "" when it looks like something else.
func tlsHint(t *nodeTLS, msg string) string {
	switch {
	case t == nil && strings.Contains(msg, "server preface"):
		return "it may serve mutual TLS: attach with a CA file, a client certificate and its key"
	case t != nil && strings.Contains(msg, "x509:"):
		return "mutual TLS failed: the member's certificate must be signed by the CA file given here, for the host dialled"
	case t != nil && strings.Contains(msg, "tls:"),
		// Under TLS 1.3 a member refusing the client's certificate may
		// close the connection while the client is already writing.
		t != nil && (strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "EOF")):
		return "mutual TLS failed: the member takes only client certificates signed by the CA it trusts"
	}
	return ""
}
