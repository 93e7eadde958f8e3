package remote

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// A member serving mutual TLS: a session with a client certificate of
// its CA and the token attaches and calls a tool; one without a
// certificate, with another CA's, without TLS, or with a wrong token is
// refused with an error that says why, and no session starts.
func TestMutualTLS(t *testing.T) {
	ca := testkit.NewCA(t, "member-ca")
	srvCert, srvKey := ca.Issue(t, "member", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.Issue(t, "session", x509.ExtKeyUsageClientAuth)
	other := testkit.NewCA(t, "other-ca")
	otherCert, otherKey := other.Issue(t, "stranger", x509.ExtKeyUsageClientAuth)

	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)},
		ServeOptions{TLS: &ServerTLS{CertFile: srvCert, KeyFile: srvKey, ClientCAFile: ca.File}})
	good := &ClientTLS{CAFile: ca.File, CertFile: cliCert, KeyFile: cliKey}
	s := r.attach(t, AttachOptions{TLS: good})
	ctx := testkit.Ctx(t)
	res, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "over tls"})
	if err != nil {
		t.Fatalf("call over mutual TLS: %v", err)
	}
	if b, _ := json.Marshal(res.Content); res.IsError || !strings.Contains(string(b), "over tls") {
		t.Fatalf("call over mutual TLS answered %s", b)
	}
	if n := s.link.conn.RemoteAddr().Network(); n != "tcp" {
		t.Errorf("the link of a TLS session is on %s; want the port (TLS checks certificates there)", n)
	}
	if _, err := os.Stat(socketOf(r.srv.TokenFile())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a member serving TLS made a Unix socket: %v", err)
	}
	_ = s.Close()
	testkit.Poll(ctx, t, "the session detached", func() bool { return r.srv.Sessions() == 0 })

	// A TLS connection that presents no certificate is refused by the
	// member's handshake, token or not.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(mustRead(t, ca.File))
	conn, err := grpc.Dial(r.srv.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})),
		grpc.WithPerRPCCredentials(tokenCreds(r.srv.token)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.NewRemotingClient(conn).ListProcesses(ctx, &remote.ListProcessesRequest{})
	conn.Close()
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a TLS connection without a client certificate: %v", err)
	}
	badToken := filepath.Join(t.TempDir(), "bad.token")
	if err := os.WriteFile(badToken, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts AttachOptions
		want string
	}{
		{"no TLS", AttachOptions{TokenFile: r.srv.TokenFile()}, "mutual TLS"},
		{"another CA's certificate", AttachOptions{TokenFile: r.srv.TokenFile(), TLS: &ClientTLS{CAFile: ca.File, CertFile: otherCert, KeyFile: otherKey}}, "client certificates"},
		{"the member not trusted", AttachOptions{TokenFile: r.srv.TokenFile(), TLS: &ClientTLS{CAFile: other.File, CertFile: cliCert, KeyFile: cliKey}}, "member's certificate"},
		{"a wrong token", AttachOptions{TokenFile: badToken, TLS: good}, "token"},
	} {
		_, err := Attach(ctx, r.srv.Addr(), c.opts)
		if err == nil {
			t.Errorf("%s: attached", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error about the %s", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
	}
	if n := r.srv.Sessions(); n != 0 {
		t.Errorf("%d sessions after refused attaches", n)
	}
}

// Beyond loopback, a member and a session listen only with TLS or an
// explicit allowance of plaintext.
func TestPlaintextOnlyOnLoopback(t *testing.T) {
	srv := NewServer(ServeOptions{Listen: "0.0.0.0:0", TokenFile: filepath.Join(t.TempDir(), "t")})
	if err := srv.Serve(nil); !errors.Is(err, ErrTLSRequired) {
		t.Errorf("serve on 0.0.0.0 without TLS: %v", err)
	}
	for _, l := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := CheckListen(l, false, false); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	for _, l := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:1"} {
		if err := CheckListen(l, false, false); !errors.Is(err, ErrTLSRequired) {
			t.Errorf("%s without TLS: %v", l, err)
		}
		if CheckListen(l, true, false) != nil || CheckListen(l, false, true) != nil {
			t.Errorf("%s with TLS or Plaintext refused", l)
		}
	}
	if _, err := Attach(testkit.Ctx(t), "127.0.0.1:1", AttachOptions{TokenFile: writeTok(t), Listen: "0.0.0.0:0"}); !errors.Is(err, ErrTLSRequired) {
		t.Errorf("attach listening on 0.0.0.0 without TLS: %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTok(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "t.token")
	if err := os.WriteFile(p, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
