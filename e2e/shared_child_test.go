package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	ossignal "os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/remote"
)

// Environment variables that turn the test binary into a serving member
// or an attached session (sharedChildIfRequested, from TestMain).
const (
	envServeConfig = "MCPRT_E2E_SERVE_CONFIG" // serve this configuration file
	envAttachAddr  = "MCPRT_E2E_ATTACH"       // attach here and call hang
	envServePeer   = "MCPRT_E2E_SERVE_PEER"   // with envServeConfig: members to join, "ADDR ..."
	envCluster     = "MCPRT_E2E_CLUSTER"      // with envServeConfig: the cluster token file
	envListen      = "MCPRT_E2E_LISTEN"       // the member's or the session's listening address
	// with envAttachAddr: "SERVER EVENT" to subscribe typed before the call
	envAttachSubscribe = "MCPRT_E2E_ATTACH_SUBSCRIBE"
)

// sharedChildIfRequested runs the member or the session child and exits
// when the environment asks for one.
func sharedChildIfRequested() {
	switch {
	case os.Getenv(envServeConfig) != "":
		os.Exit(serveChild(os.Getenv(envServeConfig)))
	case os.Getenv(envAttachAddr) != "":
		os.Exit(attachChild(os.Getenv(envAttachAddr)))
	}
}

// serveChild is `runtime serve`: it prints "LISTEN <addr>" and serves
// until stdin ends or a signal arrives.
func serveChild(cfg string) int {
	ctx, stop := ossignal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// The partition tests listen on a veth pair of their own: plaintext
	// there is explicit.
	opts := remote.ServeOptions{Asks: remote.Asks{Elicit: true, Roots: true}, Listen: os.Getenv(envListen), Plaintext: true}
	for _, addr := range strings.Fields(os.Getenv(envServePeer)) {
		opts.Peers = append(opts.Peers, remote.Peer{Addr: addr})
	}
	opts.ClusterTokenFile = os.Getenv(envCluster)
	srv := remote.NewServer(opts)
	rt, err := mcprt.Start(ctx, mcprt.Options{ConfigPath: cfg, Host: srv.Host(), Client: srv.ClientHooks(), AgentDir: filepath.Dir(cfg)})
	if err != nil {
		fmt.Println("start:", err)
		return 1
	}
	defer rt.Close()
	if err := srv.Serve(rt); err != nil {
		fmt.Println("serve:", err)
		return 1
	}
	fmt.Println("LISTEN " + srv.Addr())
	go func() {
		_, _ = os.Stdin.Read(make([]byte, 1))
		stop()
	}()
	<-ctx.Done()
	_ = srv.Close()
	return 0
}

// attachChild attaches, says so, and calls hang until it is killed.
func attachChild(addr string) int {
	s, err := remote.Attach(context.Background(), addr, remote.AttachOptions{Listen: os.Getenv(envListen), Plaintext: true})
	if err != nil {
		fmt.Println("attach:", err)
		return 1
	}
	if spec := os.Getenv(envAttachSubscribe); spec != "" { // a typed subscription first
		server, event, _ := strings.Cut(spec, " ")
		if _, err := s.Subscribe(context.Background(), server, event, nil, func(mcprt.Delivery) {}); err != nil {
			fmt.Println("subscribe:", err)
			return 1
		}
	}
	fmt.Println("LISTEN attached")
	t, _ := s.Tool(mcprt.MCPToolName)
	r := t.Execute(context.Background(), json.RawMessage(`{"tool":"hang","args":{}}`))
	fmt.Println("hang returned:", r.Text)
	return 0
}
