package mcprt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// A companion that adds the "example" protocol capability to a configured
// server: it lists items with an ordinary request, follows one item over a
// long-lived stream, watches the catalog-change notification, and cleans
// up. docs/protocol-extensions.md explains each step.
func ExampleRuntime_RegisterProtocol() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{}) // the usual configuration files
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	// Register once: this connects nothing.
	proto, err := rt.RegisterProtocol(mcprt.Definition{
		Namespace: "example",
		Requests:  []string{"example/list"},
		Streams:   []string{"example/stream"},
		Notifications: []string{
			"notifications/example/active",
			"notifications/example/item",
			"notifications/example/list_changed",
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer proto.Dispose() // closes every session, frees the namespace

	// Connect: lazy servers start now; disabled, unknown or recently
	// failed servers are errors.
	session, err := proto.Connect(ctx, "configured-server")
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close() // cancels this session's work, not the connection

	// Passive: nothing is sent to the server to watch.
	watch, err := session.WatchNotifications([]string{"notifications/example/list_changed"},
		func(method string, params json.RawMessage) error {
			fmt.Println("the catalog changed; fetch it again when needed")
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	defer watch.Close()

	// An ordinary request: the raw result, or a JSON-RPC error.
	raw, err := session.Request(ctx, "example/list", json.RawMessage(`{}`))
	var rpc *messages.Error
	if errors.As(err, &rpc) && rpc.Protocol() != nil {
		log.Fatalf("the server refused: code %d", rpc.Protocol().Code)
	} else if err != nil {
		log.Fatal(err)
	}
	var catalog struct {
		Items []string `json:"items"`
	}
	if err := json.Unmarshal(raw, &catalog); err != nil || len(catalog.Items) == 0 {
		log.Fatal("validate the capability's result before using it")
	}

	// A stream: its notifications arrive in order, as raw JSON. A handler
	// that fails ends only this stream.
	stream, err := session.OpenStream("example/stream", json.RawMessage(`{"name":"`+catalog.Items[0]+`"}`),
		func(method string, params json.RawMessage) error {
			if method == "notifications/example/item" {
				var item struct {
					N int `json:"n"`
				}
				if err := json.Unmarshal(params, &item); err != nil {
					return err // ends the stream with reason "error"
				}
				fmt.Println("item", item.N)
			}
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	select {
	case <-stream.Sent(): // written to the server, not necessarily acknowledged
	case <-stream.Done():
	}

	// Stop following it (the transport's way: notifications/cancelled, or
	// aborting its HTTP response), or wait for the server or the
	// connection to end it.
	stream.Cancel()
	end := stream.Closed()
	fmt.Println("ended:", end.Reason) // cancelled, ended, error or disconnected
	if end.ProtocolError != nil {
		fmt.Println("server error", end.ProtocolError.Code, end.ProtocolError.Message)
	}

	// When the connection ends, the session is done: connect again.
	select {
	case <-session.Done():
		fmt.Println("disconnected:", session.Why())
	default:
	}
}
