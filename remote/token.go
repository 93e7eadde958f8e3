package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The credential: `runtime serve` writes a random token (32 bytes, hex)
// to a file of mode 0600 in a directory of mode 0700, named after the
// listening address, and removes it when it stops. Every gRPC stream and
// call between a member and its sessions carries it in the "mcprt-token"
// metadata (members of a cluster carry the cluster token instead:
// cluster_auth.go); a peer without it, or with another, is refused
// (codes.Unauthenticated) before protoactor reads anything. The token travels in clear over TCP: on
// loopback only the user's own processes see it; across machines the
// member serves mutual TLS (tls.go), and the token travels inside it.

// tokenHeader is the gRPC metadata key of the token.
const tokenHeader = "mcprt-token"

// EnvTokenDir overrides the directory of the token files.
const EnvTokenDir = "MCPRT_SHARED_DIR"

// ErrUnauthenticated is the error of an attach the serving process
// refused for its token.
var ErrUnauthenticated = errors.New("remote: the shared runtime refused the token")

// TokenDir is where token files live: $MCPRT_SHARED_DIR, else
// <user config dir>/mcprt/shared (~/.config/mcprt/shared on Linux).
func TokenDir() (string, error) {
	if d := os.Getenv(EnvTokenDir); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("remote: no user config directory for the token file: %w", err)
	}
	return filepath.Join(base, "mcprt", "shared"), nil
}

// DefaultTokenFile is the token file of the runtime serving at addr
// (host:port): TokenDir()/<host>_<port>.token.
func DefaultTokenFile(addr string) (string, error) {
	dir, err := TokenDir()
	if err != nil {
		return "", err
	}
	return TokenFileIn(dir, addr)
}

// TokenFileIn is the token file of the runtime serving at addr in dir.
func TokenFileIn(dir, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("remote: %q is not host:port", addr)
	}
	name := strings.NewReplacer(":", "_", "/", "_", "\\", "_").Replace(host) + "_" + port + ".token"
	return filepath.Join(dir, name), nil
}

// writeTokenValue writes tok to path (mode 0600, its directory 0700),
// replacing any older file.
func writeTokenValue(path, tok string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("remote: token directory: %w", err)
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("remote: token file: %w", err)
	}
	_, werr := f.WriteString(tok + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("remote: token file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("remote: token file: %w", err)
	}
	return nil
}

// readToken reads a token file, refusing one that others may read.
func readToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("remote: no token file %s (is `runtime serve` running at that address, as this user?): %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("remote: token file %s is readable by others (mode %v); refusing it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("remote: reading the token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("remote: token file %s is empty", path)
	}
	return tok, nil
}

// refusal is what an unauthenticated peer is told.
const refusal = "mcprt: this shared runtime refuses peers without its token"

// preflightMethod is the one unary call answered (with an empty list):
// Attach uses it to learn at once whether the token is accepted.
// protoactor's own unary handlers are never reached (they panic).
const preflightMethod = "/remote.Remoting/ListProcesses"

// serverOptions make a member's gRPC server refuse peers without token
// (or, with m, the cluster token: cluster_auth.go); its credentials hand
// links out of gRPC to accept (link_accept.go; nil: a session's node,
// which takes none).
func serverOptions(token string, t *nodeTLS, m *memberAuth, accept *atomic.Pointer[func(net.Conn)]) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.Creds(linkCreds{TransportCredentials: t.serverCreds(), accept: accept}),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(streamWindow),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			r, err := checkRole(ss.Context(), token, m)
			if err != nil {
				return err
			}
			switch {
			case m == nil: // a session's node: only its member has the token
				return h(srv, ss)
			case r == roleMember:
				return h(srv, memberStream{ss, m.connected})
			}
			return h(srv, sessionStream{ss})
		}),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
			if _, err := checkRole(ctx, token, m); err != nil {
				return nil, err
			}
			if info.FullMethod == preflightMethod {
				return &remote.ListProcessesResponse{}, nil
			}
			return nil, status.Error(codes.Unimplemented, "mcprt: not served")
		}),
	}
}

// tokenCreds sends the token with every stream and call.
type tokenCreds string

func (t tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{tokenHeader: string(t)}, nil
}

func (tokenCreds) RequireTransportSecurity() bool { return false }

// newToken makes a fresh random token (32 bytes, hex).
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("remote: making a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
