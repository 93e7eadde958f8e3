package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// node is one process's protoactor actor system with remote started on
// a loopback (or chosen) address, every stream and call authenticated.
// A serving member's node is a Proto.Actor cluster member too (cl).
type node struct {
	sys  *actor.ActorSystem
	rem  *remote.Remote
	addr string           // the address remote listens on (host:port)
	tls  *nodeTLS         // nil: plaintext (tls.go)
	cl   *cluster.Cluster // nil: not a cluster member (a session's node)
}

// startNode listens on listen (host:port; port 0 picks one).
func startNode(listen, token string, t *nodeTLS, logger *slog.Logger) (*node, error) {
	return startNodeWith(listen, t, logger, serverOptions(token, t, nil, nil), dialOptions(token, t), nil)
}

// startNodeWith starts a node with these gRPC options; with a provider
// the node joins a cluster through it (cluster.go), whose start starts
// the remote.
func startNodeWith(listen string, t *nodeTLS, logger *slog.Logger, sopts []grpc.ServerOption, dopts []grpc.DialOption, p cluster.ClusterProvider) (n *node, err error) {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("remote: listen address %q is not host:port", listen)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("remote: listen address %q has no valid port", listen)
	}
	if host == "" {
		// An empty host would bind every interface: say so explicitly.
		return nil, fmt.Errorf("remote: listen address %q names no host (use 127.0.0.1, or 0.0.0.0 to mean every interface)", listen)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger.With("lib", "protoactor") }))
	cfg := remote.Configure(host, port, remote.WithServerOptions(sopts...), remote.WithDialOptions(dopts...))
	// A peer that cannot be reached is given up on after one attempt
	// (protoactor waits 2 s between attempts, in its endpoint writer).
	cfg.MaxRetryCount = 1
	var c *cluster.Cluster
	defer func() {
		// protoactor's Start (and the cluster's) panics when it cannot
		// listen or join.
		if r := recover(); r != nil {
			if c != nil && c.Remote != nil {
				c.Remote.Shutdown(false)
			}
			sys.Shutdown()
			n, err = nil, fmt.Errorf("remote: cannot listen on %s: %v", listen, r)
		}
	}()
	if p == nil {
		rem := remote.NewRemote(sys, cfg)
		rem.Start()
		return &node{sys: sys, rem: rem, addr: sys.Address(), tls: t}, nil
	}
	c = cluster.New(sys, cluster.Configure(clusterName, p, disthash.New(), cfg))
	c.StartMember()
	return &node{sys: sys, rem: c.Remote, addr: sys.Address(), tls: t, cl: c}, nil
}

// streamWindow is the flow-control window of every stream and connection
// between members and sessions, in bytes. Set, it is static: gRPC then
// sends no bandwidth-estimation pings, which otherwise cost a ping, a
// window update and the ping's answer for nearly every message, as a
// session's messages come one or a few at a time (docs/performance.md).
// 1 MiB is more than the 64 KiB gRPC starts with, so a large result
// waits for fewer window updates than before the estimator grew it.
const streamWindow = 1 << 20

// dialOptions are the options of every connection to a member or a
// session process: TLS when configured, token on every stream and call,
// the static window.
func dialOptions(token string, t *nodeTLS) []grpc.DialOption {
	return dialOptionsWith(tokenCreds(token), t)
}

// dialOptionsWith are dialOptions with other per-call credentials (a
// member's: cluster_auth.go).
func dialOptionsWith(creds credentials.PerRPCCredentials, t *nodeTLS) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(t.clientCreds()), grpc.WithPerRPCCredentials(creds),
		grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(streamWindow)}
}

// send posts a wire message to pid (local or remote).
func (n *node) send(pid *actor.PID, m any) error {
	v, err := encode(m)
	if err != nil {
		return err
	}
	n.sys.Root.Send(pid, v)
	return nil
}

// stop ends the remote server and the actor system.
func (n *node) stop() {
	if n.cl != nil {
		// The provider first (a no-op when the member left already): a
		// non-graceful cluster shutdown does not stop it.
		_ = n.cl.Config.ClusterProvider.Shutdown(false)
		n.cl.Shutdown(false) // the actor system, then the remote
		return
	}
	n.rem.Shutdown(false)
	n.sys.Shutdown()
}

// preflight asks the member at addr whether it accepts token, so a wrong
// or missing token is a clear error at once (protoactor itself would
// only drop the messages).
func preflight(ctx context.Context, addr, token string, t *nodeTLS) error {
	conn, err := grpc.DialContext(ctx, addr, grpc.WithTransportCredentials(t.clientCreds()), grpc.WithPerRPCCredentials(tokenCreds(token)))
	if err != nil {
		return fmt.Errorf("remote: %s: %w", addr, err)
	}
	defer conn.Close()
	_, err = remote.NewRemotingClient(conn).ListProcesses(ctx, &remote.ListProcessesRequest{}, grpc.WaitForReady(false))
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.Unauthenticated:
		return fmt.Errorf("%w at %s: %s (is the token file the one `runtime serve` wrote for this address?)", ErrUnauthenticated, addr, status.Convert(err).Message())
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("remote: no shared runtime answered at %s in time", addr)
	}
	msg := status.Convert(err).Message()
	if hint := tlsHint(t, msg); hint != "" {
		return fmt.Errorf("remote: the shared runtime at %s refused the connection: %s (%s)", addr, msg, hint)
	}
	return fmt.Errorf("remote: cannot reach a shared runtime at %s: %s", addr, msg)
}

// wireMessage unwraps what an actor received: a wire message, nil for
// anything that is not one (protoactor's own messages).
func wireMessage(m any, logger *slog.Logger) any {
	v, ok := m.(*wrapperspb.BytesValue)
	if !ok {
		return nil
	}
	if tap := wireTapForTest; tap != nil {
		tap(v.GetValue())
	}
	msg, err := decode(v)
	if err != nil {
		logger.Warn("remote: refused a message", "err", err)
		return nil
	}
	return msg
}

// wireTapForTest, when set (by tests only), sees every wire message a
// process receives.
var wireTapForTest func([]byte)

// inlineProps runs an actor inline on the goroutine that posts to it (a
// gRPC reader, a call's goroutine, a timer), as the runtime's own actors
// do: these actors never block, and it saves a goroutine hand-off per
// message.
func inlineProps(p actor.Producer, opts ...actor.PropsOption) *actor.Props {
	return actor.PropsFromProducer(p, append([]actor.PropsOption{actor.WithDispatcher(actor.NewSynchronizedDispatcher(300))}, opts...)...)
}
