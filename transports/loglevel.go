package transports

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/messages"
)

// setLogLevel sends logging/setLevel when the endpoint asks for a level and
// the server offers logging; a refusal is only logged (the connection
// works without it). On 2026-07-28 logging/setLevel is gone: the level
// goes with every request instead (envelope.go).
func (c *conn) setLogLevel(ctx context.Context, info messages.ServerInfo) {
	if c.endpoint.LogLevel == "" || c.sess.modern {
		return
	}
	var caps struct {
		Logging json.RawMessage `json:"logging"`
	}
	if json.Unmarshal(info.Capabilities, &caps) != nil || len(caps.Logging) == 0 {
		return
	}
	raw, _ := json.Marshal(map[string]string{"level": c.endpoint.LogLevel})
	params, header, err := c.sess.prepare("logging/setLevel", raw)
	if err != nil {
		return
	}
	resp, err := c.tr.SendRequest(ctx, rpcRequest{ID: c.ids.next(), Method: "logging/setLevel", Params: params, Header: header})
	if err != nil || resp.Error != nil {
		c.d.logger().Debug("logging/setLevel was not accepted", "server", c.server, "err", err, "resp", resp)
	}
}
