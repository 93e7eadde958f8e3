package remote

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Two credentials reach a member's gRPC server. Its own token (token.go)
// admits a session: such a stream may address only the gateway and the
// session actors under it, so a session cannot speak to the cluster's
// actors (the membership, gossip, placement) and cannot pose as a member.
// The cluster token, one secret shared by every member of a cluster,
// admits a member: its streams may address any actor. A member's node
// sends the cluster token to the addresses it takes for members' (the
// seeds, every member it heard from or was told of, every member that
// connected with the cluster token) and its own token to every other
// address (the sessions' nodes, which know only that one).

// clusterTokenName is the cluster token file's name in TokenDir.
const clusterTokenName = "cluster.token"

// DefaultClusterTokenFile is the cluster token's default place:
// TokenDir()/cluster.token. `runtime serve` creates it (mode 0600) when it
// is missing; members on other machines need a copy of it.
func DefaultClusterTokenFile() (string, error) {
	dir, err := TokenDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, clusterTokenName), nil
}

// clusterToken reads the cluster token at path, creating it (a new
// random token, mode 0600) when there is none. Two members creating it at
// once agree: only one creation succeeds and the other reads it.
func clusterToken(path string) (string, error) {
	if path == "" {
		var err error
		if path, err = DefaultClusterTokenFile(); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		tok, err := newToken()
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("remote: cluster token directory: %w", err)
		}
		// Written whole before it appears under its name (a member reading
		// it meanwhile sees none or all of it), never replacing one.
		tmp, err := os.CreateTemp(filepath.Dir(path), ".cluster-token-*")
		if err != nil {
			return "", fmt.Errorf("remote: cluster token file: %w", err)
		}
		_, werr := tmp.WriteString(tok + "\n")
		if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Close()); err != nil {
			_ = os.Remove(tmp.Name())
			return "", fmt.Errorf("remote: cluster token file: %w", err)
		}
		err = os.Link(tmp.Name(), path)
		_ = os.Remove(tmp.Name())
		if err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("remote: cluster token file: %w", err)
		}
	}
	return readToken(path)
}

// role is what a stream's credential admits.
type role int

const (
	roleSession role = iota // the member's own token
	roleMember              // the cluster token
)

// memberAuth is a member's side of the cluster credential.
type memberAuth struct {
	token string
	// connected is told the address of every member that connects with
	// the cluster token.
	connected func(addr string)
	// ready is closed once the member serves sessions (its gateway
	// runs); until then a session's stream or call waits for it (nil:
	// ready from the start).
	ready <-chan struct{}
}

// checkRole admits a context whose metadata carries the token (a session)
// or the cluster token (a member).
func checkRole(ctx context.Context, token string, m *memberAuth) (role, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	got := md.Get(tokenHeader)
	if len(got) == 1 {
		if subtle.ConstantTimeCompare([]byte(got[0]), []byte(token)) == 1 {
			if m != nil && m.ready != nil {
				// The port answers before the gateway runs (protoactor
				// listens first): a session that came that early waits.
				select {
				case <-m.ready:
				case <-ctx.Done():
					return 0, status.Error(codes.Unavailable, "the member is still starting")
				}
			}
			return roleSession, nil
		}
		if m != nil && subtle.ConstantTimeCompare([]byte(got[0]), []byte(m.token)) == 1 {
			return roleMember, nil
		}
	}
	return 0, status.Error(codes.Unauthenticated, refusal)
}

// sessionStream is a stream admitted with the member's own token: it may
// address the gateway and its session actors only.
type sessionStream struct{ grpc.ServerStream }

// errNotSessions refuses a session's message to another actor.
var errNotSessions = status.Error(codes.PermissionDenied, "mcprt: a session may address only the gateway and its session actor")

func (s sessionStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if rm, ok := m.(*remote.RemoteMessage); ok {
		for _, t := range rm.GetMessageBatch().GetTargets() {
			if id := t.GetId(); id != GatewayName && !strings.HasPrefix(id, GatewayName+"/") {
				return errNotSessions
			}
		}
	}
	return nil
}

// memberStream is a stream admitted with the cluster token: its
// connect request says where the member listens.
type memberStream struct {
	grpc.ServerStream
	connected func(addr string)
}

func (s memberStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if rm, ok := m.(*remote.RemoteMessage); ok {
		if sc := rm.GetConnectRequest().GetServerConnection(); sc != nil && sc.GetAddress() != "" {
			s.connected(sc.GetAddress())
		}
	}
	return nil
}

// memberCreds sends the cluster token to members and the member's own
// token to everyone else.
type memberCreds struct {
	token, cluster string
	isMember       func(addr string) bool
}

func (c memberCreds) GetRequestMetadata(_ context.Context, uri ...string) (map[string]string, error) {
	if len(uri) > 0 && c.isMember(authority(uri[0])) {
		return map[string]string{tokenHeader: c.cluster}, nil
	}
	return map[string]string{tokenHeader: c.token}, nil
}

func (memberCreds) RequireTransportSecurity() bool { return false }

// authority is the host:port of the address gRPC gives per-RPC
// credentials ("https://host:port/service"; it leaves out port 443).
func authority(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return u.Host
}
