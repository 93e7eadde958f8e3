// Package actors holds the actor shells of the runtime: the root
// supervisor, one server actor per configured server with its protocol
// sessions and streams, and the events companion. It is the only package
// that imports protoactor-go. It reaches servers only through the
// connection port (messages.Dialer and messages.Conn): it imports neither
// transports/ (the root package hands it a transports.Dialer) nor config/
// (it takes ServerConfig values).
//
// # Thin shells over pure cores
//
// Each actor feeds its messages to a pure core and executes the effects it
// returns. The server actor (server*.go) feeds a supervisor.Server, which
// holds the lifecycle, the operations in flight, the waiters behind a dial,
// the deadlines and the catalog refresh; the actor dials through the port,
// sends, cancels and closes, arms clock timers, answers commands, spawns
// session actors and publishes the catalog and its status. The root
// supervisor asks supervisor.RestartPolicy and supervisor.CrashPolicy what
// to do when an actor panics; the events actors run eventstream's
// Subscription and Batcher; the session and stream actors run extension's
// Session and Stream.
//
// # Concurrency contract
//
// An actor's state is touched only by its own Receive, which protoactor
// runs one message at a time on whatever goroutine the injected
// actor.Dispatcher provides. Actors never block: I/O goes through the
// connection port, whose outcomes come back as messages; timers are
// clock.AfterFunc callbacks that send a message; no protoactor timer,
// scheduler or future is used inside an actor. Messages from one sender to
// one actor are processed in send order. Callers outside the actor system
// (tools, the embedding API) use System, whose blocking methods wait on
// channels on the caller's goroutine.
//
// # Every command answered once
//
// Every command's Reply is called exactly once, also when the server actor
// crashes: the root supervisor answers the command whose handling
// panicked, and the crashed instance answers every other operation it held.
// System's blocking methods additionally make their replies idempotent,
// and return KindShutdown instead of waiting once Close has finished.
//
// A request that fails because its connection ended (KindDisconnected)
// retires that connection at once, before its ConnClosed arrives, so later
// calls connect anew instead of failing in a dead connection; a tool call
// is never resent once written (one that was never written moves to a new
// connection).
package actors
