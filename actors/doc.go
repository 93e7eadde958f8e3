// Package actors holds the actor shells of the runtime: the root supervisor
// and one server actor per configured server. It is the only package that
// imports protoactor-go and transports.
//
// Each actor is a thin shell around a pure core: the server actor feeds its
// messages to a supervisor.Lifecycle and executes the effects it returns
// (dial through the connection port, close a connection, arm a clock timer,
// run or fail waiting operations); the root supervisor asks a
// supervisor.RestartPolicy what to do when a server actor panics.
//
// Concurrency contract: an actor's state is touched only by its own Receive,
// which protoactor runs one message at a time on whatever goroutine the
// injected actor.Dispatcher provides. Actors never block: I/O goes through
// the connection port (messages.Dialer and messages.Conn), whose outcomes
// come back as messages; timers are clock.AfterFunc callbacks that send a
// message; no protoactor timer, scheduler or future is used inside an actor.
// Messages from one sender to one actor are processed in send order.
// Callers outside the actor system (tools, the embedding API) use System,
// whose blocking methods wait on channels on the caller's goroutine.
// Every command's Reply is called exactly once, also when the server actor
// crashes: the root supervisor answers the command whose handling panicked,
// and the crashed instance answers every other operation it held. System's
// blocking methods additionally make their replies idempotent, and return
// KindShutdown instead of waiting once Close has finished.
//
// A request that fails because its connection ended (KindDisconnected)
// retires that connection at once, before its ConnClosed arrives, so later
// calls connect anew instead of failing in a dead connection; a tool call is
// never resent.
package actors
