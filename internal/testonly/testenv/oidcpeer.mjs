// oidcpeer.mjs: a real OAuth authorization server (oidc-provider, a certified OpenID provider)
// in front of a minimal MCP server that checks its tokens, for mcprt's OAuth tests.
//
// Environment: OIDC_PROVIDER (see below), CC_SECRET, KEYFILE (where to write the ES256 private key of the pre-registered
// private_key_jwt client). Prints "READY <mcp url> <issuer>" when both listen on 127.0.0.1.
// Clients: dynamic registration is open; "cc-basic" (client_secret_basic, secret in CC_SECRET)
// and "cc-jwt" (private_key_jwt, ES256) may use client_credentials.
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { pathToFileURL } from 'node:url';

// OIDC_PROVIDER is the path of oidc-provider's lib/index.js (installed in .cache/npm).
const { default: Provider, errors } = await import(pathToFileURL(process.env.OIDC_PROVIDER).href);

const listen = (srv) => new Promise((res) => srv.listen(0, '127.0.0.1', () => res(srv.address().port)));

const rs = http.createServer();
const rsPort = await listen(rs);
const rsBase = `http://127.0.0.1:${rsPort}`;
const resource = `${rsBase}/mcp`;

const asSrv = http.createServer();
const asPort = await listen(asSrv);
const issuer = `http://127.0.0.1:${asPort}`;

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
writeFileSync(process.env.KEYFILE, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
const jwk = { ...publicKey.export({ format: 'jwk' }), use: 'sig', alg: 'ES256', kid: 'k1' };

const provider = new Provider(issuer, {
  clients: [
    { client_id: 'cc-basic', client_secret: process.env.CC_SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic' },
    { client_id: 'cc-jwt', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [jwk] } },
  ],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return { scope: 'mcp:read mcp:write', accessTokenFormat: 'opaque', accessTokenTTL: 3600 };
      },
    },
  },
  scopes: ['openid', 'offline_access', 'mcp:read', 'mcp:write'],
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  clientBasedCORS: () => true,
});
provider.proxy = false;
provider.on('server_error', (ctx, err) => console.log('server_error', err && err.stack));
asSrv.on('request', provider.callback());

async function tokenOf(req) {
  const h = req.headers.authorization || '';
  if (!h.startsWith('Bearer ')) return null;
  const value = h.slice(7);
  const t = (await provider.AccessToken.find(value)) || (await provider.ClientCredentials.find(value));
  if (!t || t.isExpired) return null;
  const aud = [].concat(t.aud || []);
  if (!aud.includes(resource)) return null;
  return t;
}

function challenge(res) {
  res.writeHead(401, { 'WWW-Authenticate': `Bearer error="invalid_token", resource_metadata="${rsBase}/.well-known/oauth-protected-resource/mcp"` });
  res.end();
}

rs.on('request', async (req, res) => {
  if (req.url === '/.well-known/oauth-protected-resource/mcp') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ resource, authorization_servers: [issuer], scopes_supported: ['mcp:read'] }));
    return;
  }
  if (req.url !== '/mcp') { res.writeHead(404); res.end(); return; }
  if (req.method !== 'POST') { res.writeHead(405); res.end(); return; }
  const tok = await tokenOf(req);
  if (!tok) { challenge(res); return; }
  // Tests look for these values in everything the client printed or wrote.
  console.log(`ACCEPTED ${req.headers.authorization.slice(7)}`);
  let body = '';
  for await (const chunk of req) body += chunk;
  const msg = JSON.parse(body);
  if (msg.id === undefined) { res.writeHead(202); res.end(); return; }
  let result = {};
  switch (msg.method) {
    case 'initialize':
      result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'oidcpeer', version: '1' } };
      break;
    case 'tools/list':
      result = { tools: [{ name: 'whoami', description: 'the token\'s client and scope', inputSchema: { type: 'object' } }] };
      break;
    case 'tools/call':
      result = { content: [{ type: 'text', text: `client=${tok.clientId} scope=${tok.scope || ''}` }] };
      break;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
});

console.log(`READY ${resource} ${issuer}`);
