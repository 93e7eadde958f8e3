package remote

import (
	"fmt"
	"net"
	"os"
)

// The token file exists before a session can find the member: a script
// that starts `runtime serve --listen ADDR` and attaches as soon as ADDR
// answers finds it. With a port named, it is written before the member
// listens (once the port is seen to be free, so a running member's file
// is never replaced); with port 0 nobody knows the port before Serve
// returns, and it is written as soon as the member listens (open).

// tokenFirst writes the token file under the listen address when that
// names its port, after checking the port is free.
func (s *Server) tokenFirst() error {
	_, port, err := net.SplitHostPort(s.opts.Listen)
	if err != nil || port == "0" {
		return nil // startNode says what is wrong with the address
	}
	l, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return fmt.Errorf("remote: cannot listen on %s: %v", s.opts.Listen, err)
	}
	_ = l.Close()
	return s.writeToken(s.opts.Listen)
}

// writeToken writes the token file for addr, once: the file Serve wrote
// under the listen address is kept when the address is the same.
func (s *Server) writeToken(addr string) error {
	file := s.opts.TokenFile
	if file == "" {
		f, err := DefaultTokenFile(addr)
		if err != nil {
			return err
		}
		file = f
	}
	if s.wrote && file == s.file {
		return nil
	}
	if s.wrote {
		_ = os.Remove(s.file)
	}
	if err := writeTokenValue(file, s.token); err != nil {
		return err
	}
	s.file, s.wrote = file, true
	return nil
}
