import path from 'node:path';
import { loadConfig } from '../../src/config';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8000,
      host: '0.0.0.0',
      logLevel: 'info',
      trustProxy: false,
    });
    expect(config.dataDir).toBe(path.resolve('.data'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.adminPassword).toBeUndefined();
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ ADMIN_PASSWORD: '', DATABASE_URL: '' }).adminPassword).toBeUndefined();
  });

  it('refuses a bad value with a message naming it', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ ADMIN_PASSWORD: 'short' })).toThrow(/ADMIN_PASSWORD/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });
});

describe('rate limits', () => {
  it('are on with the spec core §8.2 figures by default', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      enabled: true,
      anonymous: { perMinute: 400, perDay: 10_000 },
      user: { perMinute: 500, perDay: 20_000 },
      failedLogins: { perAccount: 10, perIp: 50, windowMinutes: 15 },
    });
  });

  it('are set per instance, and switched off by RATE_LIMITS=off', () => {
    const config = loadConfig({
      RATE_LIMITS: 'off',
      RATE_LIMIT_ANON_PER_MINUTE: '10',
      RATE_LIMIT_USER_PER_DAY: '0',
      LOGIN_FAILURES_PER_ACCOUNT: '3',
    });
    expect(config.rateLimits).toMatchObject({
      enabled: false,
      anonymous: { perMinute: 10 },
      user: { perDay: 0 },
      failedLogins: { perAccount: 3 },
    });
    expect(() => loadConfig({ RATE_LIMITS: 'no' })).toThrow(/RATE_LIMITS/);
    expect(() => loadConfig({ RATE_LIMIT_USER_PER_MINUTE: '-1' })).toThrow(
      /RATE_LIMIT_USER_PER_MINUTE/,
    );
  });

  it('take the client address from TRUST_PROXY hops', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
  });
});

describe('single sign-on settings', () => {
  it('are off without OIDC_ISSUER, and read whole with it', () => {
    expect(loadConfig({}).services.oidc).toBeUndefined();
    expect(
      loadConfig({
        OIDC_ISSUER: 'https://sso.example.org/realms/ocl',
        OIDC_CLIENT_ID: 'oclweb',
        OIDC_CLIENT_SECRET: 's',
      }).services.oidc,
    ).toEqual({
      issuer: 'https://sso.example.org/realms/ocl',
      clientId: 'oclweb',
      clientSecret: 's',
      scopes: 'openid profile email',
      tokenCacheSeconds: 60,
    });
  });

  it('refuse an issuer without a client id, or over plain http away from this machine', () => {
    expect(() => loadConfig({ OIDC_ISSUER: 'https://sso.example.org/' })).toThrow(/OIDC_CLIENT_ID/);
    expect(() =>
      loadConfig({ OIDC_ISSUER: 'http://sso.example.org/', OIDC_CLIENT_ID: 'c' }),
    ).toThrow(/OIDC_ISSUER/);
    expect(
      loadConfig({ OIDC_ISSUER: 'http://127.0.0.1:8080/', OIDC_CLIENT_ID: 'c' }).services.oidc
        ?.issuer,
    ).toBe('http://127.0.0.1:8080/');
  });
});

describe('metrics settings', () => {
  const token = 'a-metrics-token-of-16+';

  it('serve /metrics on the main listener with a token alone', () => {
    expect(loadConfig({})).toMatchObject({ metricsToken: undefined, metricsPort: undefined });
    expect(loadConfig({ METRICS_TOKEN: token })).toMatchObject({
      metricsToken: token,
      metricsPort: undefined,
    });
  });

  it('take METRICS_PORT in any role, with the token', () => {
    expect(loadConfig({ METRICS_TOKEN: token, METRICS_PORT: '9100' }).metricsPort).toBe(9100);
    const worker = loadConfig({ PROCESS_ROLE: 'worker', METRICS_TOKEN: token, METRICS_PORT: '0' });
    expect(worker).toMatchObject({ role: 'worker', metricsPort: 0 });
  });

  it('refuse METRICS_PORT without METRICS_TOKEN, a bad port, or the main port', () => {
    expect(() => loadConfig({ METRICS_PORT: '9100' })).toThrow(
      /METRICS_TOKEN is required with METRICS_PORT/,
    );
    expect(() => loadConfig({ METRICS_TOKEN: token, METRICS_PORT: '70000' })).toThrow(
      /METRICS_PORT/,
    );
    expect(() => loadConfig({ METRICS_TOKEN: token, METRICS_PORT: 'nine' })).toThrow(
      /METRICS_PORT/,
    );
    expect(() => loadConfig({ METRICS_TOKEN: token, METRICS_PORT: '8000' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
    // A worker has no main listener: its PORT is not taken.
    const worker = { PROCESS_ROLE: 'worker', METRICS_TOKEN: token, METRICS_PORT: '8000' };
    expect(loadConfig(worker).metricsPort).toBe(8000);
  });
});
