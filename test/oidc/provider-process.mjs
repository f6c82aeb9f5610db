// A real OpenID Connect provider (oidc-provider) for the single sign-on tests, run as a child
// process on a random loopback port. It prints `{"issuer": "..."}` on one line once it listens.
// Anyone may sign in with any login name (the library's development interactions); the claims
// follow from the name: `unverified-*` has an unverified email, `short-*` gets 2-second tokens
// (no clock tolerance, so they are refused as soon as they expire).
import http from 'node:http';
import Provider from 'oidc-provider';

const { CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, POST_LOGOUT_REDIRECT_URI } = process.env;

function claimsOf(login) {
  return {
    sub: login,
    email: `${login}@sso.test`,
    email_verified: !login.startsWith('unverified-'),
    preferred_username: login,
    given_name: 'Given',
    family_name: login,
  };
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [REDIRECT_URI],
        post_logout_redirect_uris: [POST_LOGOUT_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    findAccount: (_ctx, login) => ({ accountId: login, claims: () => claimsOf(login) }),
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    },
    cookies: { keys: ['only-for-tests'] },
    clockTolerance: 0,
    pkce: { required: () => false },
    ttl: {
      AccessToken: (_ctx, token) => (token.accountId.startsWith('short-') ? 2 : 3600),
    },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
