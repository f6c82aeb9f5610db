import { parseConceptUrl, parseOwnerUrl, parseRepoUrl } from '../../src/services/shared/urls';

describe('parseConceptUrl', () => {
  it('reads the three URL forms', () => {
    expect(parseConceptUrl('/orgs/CIEL/sources/CIEL/concepts/116128/')).toEqual({
      source: {
        owner: { type: 'org', id: 'CIEL' },
        kind: 'source',
        id: 'CIEL',
        version: undefined,
      },
      id: '116128',
      conceptVersion: undefined,
    });
    expect(parseConceptUrl('/users/joe/sources/S/v1/concepts/C').source.version).toBe('v1');
    expect(parseConceptUrl('/user/sources/S/concepts/C/42/')).toMatchObject({
      source: { owner: { type: 'self' } },
      conceptVersion: '42',
    });
  });

  it('reads the shorthand forms of spec core §2.6', () => {
    expect(parseConceptUrl('CIEL:CIEL:116128')).toEqual({
      source: {
        owner: { type: 'org', id: 'CIEL' },
        kind: 'source',
        id: 'CIEL',
        version: undefined,
      },
      id: '116128',
      conceptVersion: undefined,
    });
    expect(parseConceptUrl('CIEL:CIEL[v2024]:116128').source.version).toBe('v2024');
    expect(parseConceptUrl('CIEL:CIEL:116128[7]').conceptVersion).toBe('7');
  });

  it.each([
    'CIEL:CIEL[v1]:116128[7]',
    'CIEL:116128',
    '/orgs/CIEL/sources/CIEL/',
    'not a url',
    '/orgs/O/sources/S/concepts/',
  ])('refuses %j with a 400-class error', (text) => {
    expect(() => parseConceptUrl(text)).toThrow(expect.objectContaining({ code: 'INVALID' }));
  });
});

describe('parseRepoUrl and parseOwnerUrl', () => {
  it('read owners and repositories with or without slashes and versions', () => {
    expect(parseOwnerUrl('orgs/CIEL')).toEqual({ type: 'org', id: 'CIEL' });
    expect(parseRepoUrl('/users/joe/collections/C/latest/')).toEqual({
      owner: { type: 'user', username: 'joe' },
      kind: 'collection',
      id: 'C',
      version: 'latest',
    });
    expect(() => parseRepoUrl('/orgs/O/collections/C/', 'source')).toThrow(
      expect.objectContaining({ code: 'INVALID' }),
    );
  });
});
