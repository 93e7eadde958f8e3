package main

import (
	"github.com/spf13/cobra"

	"github.com/mcprt/mcprt/remote"
)

// tlsFlags are mutual TLS between a shared runtime and its sessions
// (docs/shared.md): --tls-ca, --tls-cert and --tls-key on the attaching
// side (with --attach), --tls-cert, --tls-key and --tls-client-ca on
// `serve`, whose --tls-ca is then for the other members of its cluster.
type tlsFlags struct {
	ca, cert, key string
	// listen is where an attaching process listens for the member's
	// messages (--attach-listen; default loopback): across machines, an
	// address of this machine the member can reach.
	listen string
}

func (t *tlsFlags) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&t.ca, "tls-ca", "", "with --attach: PEM file of the CA that signed the serving runtime's certificate (mutual TLS; with --tls-cert and --tls-key)")
	f.StringVar(&t.cert, "tls-cert", "", "with --attach or serve: PEM file of this process's TLS certificate")
	f.StringVar(&t.key, "tls-key", "", "with --attach or serve: PEM file of the key of --tls-cert")
	f.StringVar(&t.listen, "attach-listen", "", "with --attach: host:port of this machine where the serving runtime answers (default 127.0.0.1:0; beyond loopback it needs the --tls-* flags)")
}

func (t *tlsFlags) set() bool { return t.ca != "" || t.cert != "" || t.key != "" || t.listen != "" }

// client is the attaching side's TLS (nil: plaintext).
func (t *tlsFlags) client() (*remote.ClientTLS, error) {
	if t.ca == "" && t.cert == "" && t.key == "" {
		if t.listen != "" {
			if err := remote.CheckListen(t.listen, false, false); err != nil {
				return nil, usage("%s: --attach-listen beyond loopback needs --tls-ca, --tls-cert and --tls-key", err.Error())
			}
		}
		return nil, nil
	}
	if t.ca == "" || t.cert == "" || t.key == "" {
		return nil, usage("mutual TLS with --attach needs --tls-ca, --tls-cert and --tls-key")
	}
	return &remote.ClientTLS{CAFile: t.ca, CertFile: t.cert, KeyFile: t.key}, nil
}

// server is serve's TLS (nil: plaintext), clientCA from --tls-client-ca.
func (t *tlsFlags) server(clientCA string) (*remote.ServerTLS, error) {
	if t.cert == "" && t.key == "" && clientCA == "" {
		if t.ca != "" {
			return nil, usage("serve's --tls-ca is for the other members of its cluster and needs its own TLS: --tls-cert, --tls-key and --tls-client-ca")
		}
		return nil, nil
	}
	if t.cert == "" || t.key == "" || clientCA == "" {
		return nil, usage("serve with mutual TLS needs --tls-cert, --tls-key and --tls-client-ca")
	}
	return &remote.ServerTLS{CertFile: t.cert, KeyFile: t.key, ClientCAFile: clientCA}, nil
}

// peer is serve's TLS with the other members of its cluster: its own certificate
// (which must then allow client authentication) and --tls-ca.
func (t *tlsFlags) peer() *remote.ClientTLS {
	if t.ca == "" {
		return nil
	}
	return &remote.ClientTLS{CAFile: t.ca, CertFile: t.cert, KeyFile: t.key}
}
