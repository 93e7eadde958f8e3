// A test peer for mcprt's client side, written with the official MCP
// TypeScript SDK. Usage: node peer.mjs MODE, MODE one of
//   legacy-http, legacy-stdio   2025-11-25 (SDK v1, @modelcontextprotocol/sdk)
//   modern-http, modern-stdio   2026-07-28 (SDK v2, @modelcontextprotocol/server)
// Over HTTP it listens on 127.0.0.1:$PORT (0: any) and prints
// "listening on port N".
//
// 2025-11-25 tools: withdraw (asks the user, then withdraws the question
// with notifications/cancelled when withdraw_now is called), flood (N
// elicitation requests at once), post_cut (cuts its own response stream
// mid-way; the rest is replayed on resumption), get_push / get_cut (a log
// message on the standalone GET stream; closing that stream, then a log
// message and an elicitation sent while it is down), stats (how often each
// tool ran and which streams were replayed after a Last-Event-ID).
//
// 2026-07-28 tools answer input_required (multi round-trip requests):
// mrtr_elicit, mrtr_url, mrtr_all (elicitation, sampling and roots in one
// round), mrtr_twice (two rounds), mrtr_state (requestState only),
// mrtr_flood (more input requests than a client answers at once),
// the prompt mrtr_prompt and the resource mrtr://greeting (both ask for a
// name), mrtr_bad_sampling (malformed params), raw_bad_method and raw_empty
// (malformed results, HTTP only), caps
// (the client capabilities and log level the request carried), echo,
// cut_once (over HTTP its first response stream ends before the response;
// its answer lists the ids of the requests it saw).

import http from 'node:http';

const mode = process.argv[2] || '';
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// ---- 2025-11-25: SDK v1 ----------------------------------------------------

async function legacy(httpMode) {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { ElicitResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const z = (await import('zod')).z;
  const runs = {};
  const replays = [];
  let withdrawing = null;
  const count = (name) => { runs[name] = (runs[name] || 0) + 1; return runs[name]; };
  const ask = (extra, message, signal) => extra.sendRequest({
    method: 'elicitation/create',
    params: { message, requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } },
  }, ElicitResultSchema, { signal, timeout: 600000 });

  const make = () => {
    const server = new McpServer({ name: 'tspeer-legacy', version: '1.0.0' }, { capabilities: { logging: {} } });
    server.registerTool('withdraw', { description: 'asks the user a question it withdraws on withdraw_now' }, async (extra) => {
      count('withdraw');
      const ac = new AbortController();
      withdrawing = ac;
      try {
        const r = await ask(extra, 'A question the server will withdraw', ac.signal);
        return text('answered: ' + r.action);
      } catch (e) {
        return text('withdrawn: ' + (e && e.message));
      }
    });
    server.registerTool('withdraw_now', { description: 'withdraws the pending question of withdraw' }, async () => {
      if (!withdrawing) return text('nothing to withdraw');
      withdrawing.abort('the server changed its mind');
      withdrawing = null;
      return text('withdrawn');
    });
    server.registerTool('flood', { description: 'sends n elicitation requests at once', inputSchema: { n: z.number() } }, async ({ n }, extra) => {
      count('flood');
      const all = await Promise.allSettled(Array.from({ length: n }, (_, i) => ask(extra, 'flood question ' + i)));
      const tally = { accepted: 0, tooMany: 0, other: [] };
      for (const r of all) {
        if (r.status === 'fulfilled') tally.accepted++;
        else if (r.reason && r.reason.code === -32603 && /too many pending requests/.test(r.reason.message)) tally.tooMany++;
        else tally.other.push(String(r.reason && r.reason.message));
      }
      return text(JSON.stringify(tally));
    });
    server.registerTool('echo', { description: 'echoes', inputSchema: { text: z.string() } }, async ({ text: t }) => text('echo: ' + t));
    server.registerTool('post_cut', { description: 'cuts its response stream mid-way' }, async (extra) => {
      const run = count('post_cut');
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'post_cut before the cut' } });
      if (!extra.closeSSEStream) return text('no event store');
      extra.closeSSEStream();
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'post_cut after the cut' } });
      return text('post_cut done, run ' + run);
    });
    server.registerTool('get_push', { description: 'a log message on the GET stream', inputSchema: { text: z.string() } }, async ({ text: t }) => {
      await server.server.notification({ method: 'notifications/message', params: { level: 'info', data: t } });
      return text('pushed');
    });
    server.registerTool('get_cut', { description: 'closes the GET stream, then pushes while it is down' }, async (extra) => {
      count('get_cut');
      if (!extra.closeStandaloneSSEStream) return text('no event store');
      extra.closeStandaloneSSEStream();
      await server.server.notification({ method: 'notifications/message', params: { level: 'info', data: 'pushed while the GET stream was down' } });
      // A server request sent on the GET stream while it is down: answered
      // only if the stream is resumed with Last-Event-ID.
      server.server.request({ method: 'elicitation/create', params: { message: 'asked while the GET stream was down', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } } },
        ElicitResultSchema, { timeout: 600000 })
        .then((r) => { runs['get_cut_answer:' + r.action] = 1; }, (e) => { runs['get_cut_error:' + e.message] = 1; });
      return text('cut');
    });
    server.registerTool('stats', { description: 'what ran and what was replayed' }, async () => text(JSON.stringify({ runs, replays })));
    return server;
  };

  if (!httpMode) {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    await make().connect(new StdioServerTransport());
    return;
  }
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { randomUUID } = await import('node:crypto');
  // An event store that remembers every event, so a cut stream is resumed.
  let seq = 0;
  const events = []; // {id, stream, message}
  const eventStore = {
    async storeEvent(stream, message) { const id = stream + '#' + (++seq); events.push({ id, stream, message }); return id; },
    async getStreamIdForEventId(id) { const e = events.find((x) => x.id === id); return e && e.stream; },
    async replayEventsAfter(lastId, { send }) {
      const at = events.findIndex((x) => x.id === lastId);
      if (at < 0) throw new Error('unknown event id');
      const stream = events[at].stream;
      replays.push(stream === '_GET_stream' ? 'GET' : 'POST');
      for (const e of events.slice(at + 1)) {
        if (e.stream === stream && e.message && Object.keys(e.message).length) await send(e.id, e.message);
      }
      return stream;
    },
  };
  const transports = {};
  const srv = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers['mcp-session-id'];
    let t = sid && transports[sid];
    if (!t) {
      if (sid) { res.writeHead(404).end(); return; }
      t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(), eventStore, retryInterval: 20,
        onsessioninitialized: (id) => { transports[id] = t; },
      });
      await make().connect(t);
    }
    await t.handleRequest(req, res, body);
  });
  listen(srv);
}

// ---- 2026-07-28: SDK v2 ----------------------------------------------------

async function modern(httpMode) {
  const { McpServer, inputRequired, inputResponse, acceptedContent } = await import('@modelcontextprotocol/server');
  const cutIds = []; // the JSON-RPC ids of every cut_once request, in order
  const nameForm = { type: 'object', properties: { name: { type: 'string', title: 'Your name' } }, required: ['name'] };
  const state = (ctx) => ctx.mcpReq.requestState ? ctx.mcpReq.requestState() : undefined;
  // add_tool registers the tool "added" and tells the listeners: over
  // HTTP (a server per request) every later server has it and the handler's
  // notifier publishes the change; on stdio (one server) registering it on
  // the live server sends tools/list_changed, which the SDK delivers only
  // on a subscriptions/listen that asked for it.
  let added = false;
  let listens = 0;
  const openListens = new Set();
  let live; // the stdio server
  let notify; // the HTTP handler's notifier
  const addTool = (server) => server.registerTool('added', { description: 'added by add_tool' }, async () => text('added answered'));
  const make = () => {
    const server = new McpServer({ name: 'tspeer-modern', version: '2.0.0' }, { capabilities: { logging: {} } });
    live = server;
    server.registerTool('echo', { description: 'echoes nothing' }, async () => text('echo'));
    if (added) addTool(server);
    server.registerTool('add_tool', { description: 'adds the tool "added"' }, async () => {
      if (!added) {
        added = true;
        if (httpMode) notify.toolsChanged();
        else addTool(live);
      }
      return text('tool added');
    });
    // HTTP only: listens counts the subscriptions/listen requests so far;
    // cut_listen cuts the open ones (the wrapper below holds them).
    server.registerTool('listens', { description: 'how many listen requests came' }, async () => text('listens ' + listens));
    server.registerTool('cut_listen', { description: 'cuts the open listen streams' }, async () => {
      for (const r of openListens) r.destroy();
      return text('cut ' + openListens.size);
    });
    server.registerTool('cut_once', { description: 'its first response stream is cut (HTTP)' }, async () => text('cut_once answered; ids ' + JSON.stringify(cutIds)));
    server.registerTool('caps', { description: 'the envelope of this request' }, async (ctx) => text(JSON.stringify(ctx.mcpReq.envelope || {})));
    server.registerTool('mrtr_elicit', { description: 'asks for a name' }, async (ctx) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'name');
      if (r.kind === 'missing') {
        return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameForm }) }, requestState: 'state-1 "quoted" é' });
      }
      const got = state(ctx);
      if (r.kind !== 'elicit') return text('unexpected ' + r.kind);
      if (r.action !== 'accept') return text('the user chose ' + r.action + '; state ' + JSON.stringify(got));
      return text('hello ' + r.content.name + '; state ' + JSON.stringify(got));
    });
    server.registerTool('mrtr_url', { description: 'sends the user to a page' }, async (ctx) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'page');
      if (r.kind === 'missing') {
        return inputRequired({ inputRequests: { page: inputRequired.elicitUrl({ message: 'Sign in at the bank', url: 'https://bank.example.com/consent?id=7' }) }, requestState: 'url-1' });
      }
      return text('url answer ' + r.action + '; state ' + state(ctx));
    });
    server.registerTool('mrtr_all', { description: 'elicitation, sampling and roots in one round' }, async (ctx) => {
      const rs = ctx.mcpReq.inputResponses;
      if (!rs) {
        return inputRequired({
          inputRequests: {
            who: inputRequired.elicit({ message: 'Who are you?', requestedSchema: nameForm }),
            llm: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'capital of France?' } }], maxTokens: 20, systemPrompt: 'be brief' }),
            dirs: inputRequired.listRoots(),
          },
        });
      }
      const who = acceptedContent(rs, 'who');
      const llm = inputResponse(rs, 'llm');
      const dirs = inputResponse(rs, 'dirs');
      return text(JSON.stringify({ name: who && who.name, sample: llm.kind === 'sampling' ? llm.result.content.text : llm.kind, model: llm.kind === 'sampling' ? llm.result.model : '', roots: dirs.kind === 'roots' ? dirs.roots.map((r) => r.uri) : dirs.kind, state: state(ctx) === undefined ? 'absent' : state(ctx) }));
    });
    server.registerTool('mrtr_twice', { description: 'two rounds' }, async (ctx) => {
      const rs = ctx.mcpReq.inputResponses;
      const st = state(ctx);
      if (!st) {
        return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'Name?', requestedSchema: nameForm }) }, requestState: 'round-1' });
      }
      if (st === 'round-1') {
        const who = acceptedContent(rs, 'name');
        return inputRequired({ inputRequests: { sure: inputRequired.elicit({ message: 'Sure, ' + (who && who.name) + '?', requestedSchema: { type: 'object', properties: { sure: { type: 'boolean' } } } }) }, requestState: 'round-2:' + (who && who.name) });
      }
      const sure = acceptedContent(rs, 'sure');
      const stale = rs && rs.name !== undefined;
      return text('done ' + st + ' sure=' + (sure && sure.sure) + ' stale=' + stale);
    });
    server.registerTool('mrtr_state', { description: 'requestState only (load shedding)' }, async (ctx) => {
      const st = state(ctx);
      if (!st) return inputRequired({ requestState: 'come-back' });
      return text('resumed with ' + st + ' responses=' + JSON.stringify(ctx.mcpReq.inputResponses));
    });
    // Input requests a client must refuse, built by hand.
    server.registerTool('mrtr_bad_sampling', { description: 'a sampling input request without maxTokens' }, async () => ({ resultType: 'input_required', inputRequests: { s: { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] } } } }));
    for (const name of ['raw_bad_method', 'raw_empty']) {
      server.registerTool(name, { description: 'answered by the HTTP front (HTTP only)' }, async () => text('not intercepted (stdio)'));
    }
    // A prompt and a resource that need the user's name first.
    const named = (ctx, done) => {
      const who = acceptedContent(ctx.mcpReq.inputResponses, 'who');
      if (!who) return inputRequired({ inputRequests: { who: inputRequired.elicit({ message: 'Name for the greeting?', requestedSchema: nameForm }) } });
      return done(who.name);
    };
    server.registerPrompt('mrtr_prompt', { description: 'a greeting for a name it asks for' }, async (ctx) =>
      named(ctx, (name) => ({ messages: [{ role: 'user', content: { type: 'text', text: 'Greet ' + name } }] })));
    server.registerResource('mrtr_resource', 'mrtr://greeting', { mimeType: 'text/plain' }, async (uri, ctx) =>
      named(ctx, (name) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'greeting for ' + name }] })));
    server.registerTool('mrtr_flood', { description: 'more input requests than a client answers at once' }, async (ctx) => {
      if (ctx.mcpReq.inputResponses) return text('answered ' + Object.keys(ctx.mcpReq.inputResponses).length);
      const reqs = {};
      for (let i = 0; i < 40; i++) reqs['q' + i] = inputRequired.listRoots();
      return inputRequired({ inputRequests: reqs });
    });
    return server;
  };
  if (!httpMode) {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(() => make());
    return;
  }
  const { createMcpHandler } = await import('@modelcontextprotocol/server');
  const handler = createMcpHandler(() => make(), { legacy: 'reject' });
  notify = handler.notify;
  const srv = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    let msg;
    try { msg = body && JSON.parse(body.toString()); } catch { msg = undefined; }
    // Answers the SDK would refuse to send (HTTP only): raw_bad_method (an
    // input request whose method is not one), raw_empty (input_required
    // with neither inputRequests nor requestState).
    const raw = { raw_bad_method: { resultType: 'input_required', inputRequests: { x: { method: 'tools/list', params: {} } } }, raw_empty: { resultType: 'input_required' } };
    if (msg && msg.method === 'tools/call' && msg.params && raw[msg.params.name]) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: raw[msg.params.name] }));
      return;
    }
    if (msg && msg.method === 'tools/call' && msg.params && msg.params.name === 'cut_once') {
      cutIds.push(msg.id);
      if (cutIds.length === 1) {
        // The response stream ends before the response: the request is lost.
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.end();
        return;
      }
    }
    const response = await handler.fetch(new Request('http://' + req.headers.host + req.url, { method: req.method, headers, body }));
    if (msg && msg.method === 'subscriptions/listen') {
      // Counted once the handler has made the stream (and subscribed it to
      // the notifier), so a change published after a client saw the count
      // reaches it.
      listens++;
      openListens.add(res);
      res.on('close', () => openListens.delete(res));
    }
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const c of response.body) res.write(c);
    }
    res.end();
  });
  listen(srv);
}

function listen(srv) {
  srv.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
    console.log('listening on port ' + srv.address().port);
  });
}

const run = { 'legacy-http': () => legacy(true), 'legacy-stdio': () => legacy(false), 'modern-http': () => modern(true), 'modern-stdio': () => modern(false) }[mode];
if (!run) {
  console.error('usage: node peer.mjs legacy-http|legacy-stdio|modern-http|modern-stdio');
  process.exit(2);
}
run().catch((e) => { console.error(e); process.exit(1); });
