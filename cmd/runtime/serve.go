package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// serveCmd runs the runtime as a shared member (docs/shared.md): the
// configuration's servers run here once, and sessions attach with
// --attach ADDR.
func serveCmd(g *globals) *cobra.Command {
	var listen, clientCA, clusterToken string
	var plaintext bool
	var sessionSubs, sessionCalls int
	var peerAddrs []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "share this configuration's servers with sessions that attach (runtime --attach ADDR ...)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.attach != "" {
				return usage("serve cannot --attach")
			}
			if g.json {
				return usage("serve has no --json form: it runs until stopped")
			}
			if host, _, err := net.SplitHostPort(listen); err != nil || host == "" {
				return usage("--listen needs host:port, e.g. --listen 127.0.0.1:7373")
			}
			if g.tls.listen != "" {
				return usage("--attach-listen goes with --attach")
			}
			tlsOpts, err := g.tls.server(clientCA)
			if err != nil {
				return err
			}
			if err := remote.CheckListen(listen, tlsOpts != nil, plaintext); err != nil {
				return usage("%s: serve beyond loopback with --tls-cert, --tls-key and --tls-client-ca, or say --plaintext (the token then crosses the network in clear)", err.Error())
			}
			g.serving = true
			o, err := g.options()
			if err != nil {
				return err
			}
			// What servers ask goes to the session whose call caused it
			// (docs/shared.md), answered by that session's --elicitation,
			// --sampling and --root; sampling is offered only when serve
			// itself was given --sampling.
			var peers []remote.Peer
			for _, p := range peerAddrs {
				if host, _, err := net.SplitHostPort(p); err != nil || host == "" {
					return usage("--peer needs host:port, e.g. --peer 127.0.0.1:7374")
				}
				peers = append(peers, remote.Peer{Addr: p})
			}
			srv := remote.NewServer(remote.ServeOptions{Listen: listen, TLS: tlsOpts, Plaintext: plaintext, Logger: o.Logger, Peers: peers,
				ClusterTokenFile: clusterToken, PeerTLS: g.tls.peer(), SessionSubscriptions: sessionSubs, SessionCalls: sessionCalls,
				Asks: remote.Asks{Elicit: true, ElicitURL: true, Roots: true, Sample: o.Client.Sample != nil}})
			hooks := srv.ClientHooks()
			hooks.Progress = srv.Progress(o.Client.Progress) // a session's call's progress goes to it
			o.Client = hooks
			o.Host = bothHosts{srv.Host(), g.host(o)}
			rt, err := mcprt.Start(cmd.Context(), o)
			if err != nil {
				return usage("%s", err.Error())
			}
			defer g.closeRuntime(rt)
			if err := srv.Serve(rt); err != nil {
				return failed(err.Error())
			}
			fmt.Fprintf(g.stderr, "runtime serve: listening on %s (token file %s); attach with: runtime --attach %s ...\n", srv.Addr(), srv.TokenFile(), srv.Addr())
			<-cmd.Context().Done()
			if err := srv.Close(); err != nil {
				fmt.Fprintln(g.stderr, "runtime: warning: "+oneLine(err.Error()))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on (host:port; loopback unless you name another host, which needs TLS or --plaintext)")
	cmd.Flags().StringVar(&clientCA, "tls-client-ca", "", "serve mutual TLS: PEM file of the CA whose certificates sessions must present (with --tls-cert and --tls-key; the token is still required)")
	cmd.Flags().BoolVar(&plaintext, "plaintext", false, "allow a --listen address beyond loopback without TLS (anyone on the network path sees the token)")
	cmd.Flags().StringArrayVar(&peerAddrs, "peer", nil, "a member of the cluster to join (host:port, repeatable): sessions then reach every member's servers by name")
	cmd.Flags().StringVar(&clusterToken, "cluster-token", "", "the cluster token file every member of the cluster shares (default: cluster.token in the token directory, created when missing)")
	cmd.Flags().IntVar(&sessionSubs, "session-subscriptions", 0, "subscriptions one session may hold, events and typed (0: 25; negative: no limit)")
	cmd.Flags().IntVar(&sessionCalls, "session-calls", 0, "calls one session may have in flight (0: 64; negative: no limit)")
	return cmd
}

// bothHosts hands everything to two hosts.
type bothHosts [2]mcprt.Host

func (b bothHosts) Deliver(ctx context.Context, m messages.HostMessage) {
	for _, h := range b {
		h.Deliver(ctx, m)
	}
}

func (b bothHosts) Notify(ctx context.Context, n messages.Notice) {
	for _, h := range b {
		h.Notify(ctx, n)
	}
}

// toolRuntime is what the tool commands need: an embedded runtime or an
// attached session.
type toolRuntime interface {
	Tool(name string) (mcprt.Tool, bool)
	Tools() []mcprt.Tool
	Servers() []string
	Close() error
}

// withTools runs f with an attached session (--attach) or a runtime of
// its own.
func (g *globals) withTools(cmd *cobra.Command, f func(rt toolRuntime) error) error {
	return g.withEither(cmd, nil, func(rt cliRuntime) error { return f(rt) })
}

// attachSession attaches to the shared runtime named by --attach.
func (g *globals) attachSession(ctx context.Context, host mcprt.Host) (*remote.Session, error) {
	if g.config != "" || g.url != "" || g.stdio != "" {
		return nil, usage("--attach uses the serving runtime's configuration: leave out --config, --url and --stdio")
	}
	if host == nil {
		host = cliHost{w: g.stderr}
	}
	hooks, err := g.clientHooks()
	if err != nil {
		return nil, err
	}
	tlsOpts, err := g.tls.client()
	if err != nil {
		return nil, err
	}
	opts := remote.AttachOptions{Host: host, Client: hooks, TLS: tlsOpts, Listen: g.tls.listen}
	if g.verbose {
		opts.Logger = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := remote.Attach(ctx, g.attach, opts)
	if err != nil {
		return nil, failed(err.Error())
	}
	return s, nil
}
