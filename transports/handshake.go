package transports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/messages"
)

// errRefused marks a handshake the server answered with a JSON-RPC error.
var errRefused = errors.New("transports: handshake refused")

// errParamsNotObject reports params that are not a JSON object.
var errParamsNotObject = errors.New("transports: params must be a JSON object")

// handshake negotiates the protocol on a started transport. With
// ProtocolAuto it sends initialize (2025-11-25) first and tries
// server/discover (2026-07-28) only if the server refuses it, so a server
// that ignores unknown methods costs no probe timeout.
func handshake(ctx context.Context, tr rpcTransport, ids *idSource, pv string, s *session) (messages.ServerInfo, error) {
	switch pv {
	case messages.Protocol20251125:
		return initialize(ctx, tr, ids, s)
	case messages.Protocol20260728:
		return discover(ctx, tr, ids, s)
	}
	info, err := initialize(ctx, tr, ids, s)
	if !errors.Is(err, errRefused) {
		return info, err
	}
	info, derr := discover(ctx, tr, ids, s)
	if derr != nil {
		return info, fmt.Errorf("%w; server/discover failed too: %w", err, derr)
	}
	return info, nil
}

func initialize(ctx context.Context, tr rpcTransport, ids *idSource, s *session) (messages.ServerInfo, error) {
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": messages.Protocol20251125,
		"capabilities":    s.capabilities(),
		"clientInfo":      s.client,
	})
	probe := &initProbe{}
	resp, err := tr.SendRequest(withInitProbe(ctx, probe), rpcRequest{ID: ids.next(), Method: string(mcp.MethodInitialize), Params: params})
	if err != nil {
		if code, msg, ok := probe.refusal(); ok {
			// A 4xx whose body is a JSON-RPC error: a server that refuses
			// initialize, not a legacy HTTP+SSE one (initprobe.go).
			return messages.ServerInfo{}, fmt.Errorf("%w: initialize: %s (code %d)", errRefused, msg, code)
		}
		return messages.ServerInfo{}, err
	}
	if resp.Error != nil {
		return messages.ServerInfo{}, fmt.Errorf("%w: initialize: %s (code %d)", errRefused, resp.Error.Message, resp.Error.Code)
	}
	var res struct {
		mcp.InitializeResult
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return messages.ServerInfo{}, fmt.Errorf("initialize result is malformed: %w", err)
	}
	v := res.ProtocolVersion
	if !slices.Contains(mcp.ValidProtocolVersions, v) || mcp.IsModernProtocol(v) {
		return messages.ServerInfo{}, fmt.Errorf("server answered initialize with unsupported protocol version %q", v)
	}
	s.version, s.modern = v, false
	if h, ok := tr.(versioned); ok {
		h.setProtocolVersion(v)
	}
	if err := tr.SendNotification(ctx, string(mcp.MethodNotificationInitialized), nil); err != nil {
		return messages.ServerInfo{}, err
	}
	return messages.ServerInfo{
		ProtocolVersion: v, Name: res.ServerInfo.Name, Title: res.ServerInfo.Title, Version: res.ServerInfo.Version,
		Instructions: res.Instructions, Capabilities: res.Capabilities,
	}, nil
}

func discover(ctx context.Context, tr rpcTransport, ids *idSource, s *session) (messages.ServerInfo, error) {
	s.version, s.modern = messages.Protocol20260728, true
	s.caps = modernCapabilities(s.caps)
	if h, ok := tr.(versioned); ok {
		h.setProtocolVersion(s.version)
	}
	params, header, err := s.prepare(string(mcp.MethodServerDiscover), nil)
	if err != nil {
		return messages.ServerInfo{}, err
	}
	resp, err := tr.SendRequest(ctx, rpcRequest{ID: ids.next(), Method: string(mcp.MethodServerDiscover), Params: params, Header: header})
	if err != nil {
		return messages.ServerInfo{}, err
	}
	if resp.Error != nil {
		return messages.ServerInfo{}, fmt.Errorf("%w: server/discover: %s (code %d)", errRefused, resp.Error.Message, resp.Error.Code)
	}
	var res struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
		Meta              struct {
			ServerInfo mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return messages.ServerInfo{}, fmt.Errorf("server/discover result is malformed: %w", err)
	}
	if !slices.Contains(res.SupportedVersions, s.version) {
		return messages.ServerInfo{}, fmt.Errorf("server does not support protocol %s (it supports %v)", s.version, res.SupportedVersions)
	}
	return messages.ServerInfo{
		ProtocolVersion: s.version, Name: res.Meta.ServerInfo.Name, Title: res.Meta.ServerInfo.Title,
		Version: res.Meta.ServerInfo.Version, Instructions: res.Instructions, Capabilities: res.Capabilities,
	}, nil
}
