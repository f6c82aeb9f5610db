import { Expander } from '../../src/services/terminology/expand';
import type { CodeSystemResource, ValueSetResource } from '../../src/services/terminology/fhir';
import { TerminologyLibrary, type StoredTerminology } from '../../src/services/terminology/library';
import { Validator } from '../../src/services/terminology/validate';

/**
 * A stored value set (frozen: shared by the requests that read it) is evaluated once and its
 * codes reused, but only while it resolves to the same code system versions and the options
 * that decide its codes are the same.
 */
const SYSTEM = 'http://example.org/reuse/cs';

function codeSystem(display: string): CodeSystemResource {
  return Object.freeze({
    resourceType: 'CodeSystem',
    url: SYSTEM,
    version: '1',
    status: 'active',
    content: 'complete',
    property: [{ code: 'inactive', type: 'boolean' }],
    concept: [
      { code: 'a', display },
      { code: 'b', display: 'Bee', property: [{ code: 'inactive', valueBoolean: true }] },
    ],
  });
}

const valueSet = Object.freeze({
  resourceType: 'ValueSet',
  url: 'http://example.org/reuse/vs',
  version: '1',
  status: 'active',
  compose: { include: [{ system: SYSTEM, concept: [{ code: 'a' }, { code: 'b' }] }] },
}) as ValueSetResource;

function libraryOver(cs: CodeSystemResource): TerminologyLibrary {
  const stored: StoredTerminology = {
    codeSystems: () => Promise.resolve([cs]),
    valueSets: () => Promise.resolve([valueSet]),
    conceptMaps: () => Promise.resolve([]),
  };
  return new TerminologyLibrary(stored);
}

async function codes(cs: CodeSystemResource, activeOnly?: boolean) {
  const set = await new Expander(libraryOver(cs), { maxCodes: 100, activeOnly }).codesOf(valueSet);
  return set.codes.map((c) => [c.code, c.display]);
}

describe('a stored value set evaluated once', () => {
  it('answers alike when read again over the same code system version', async () => {
    const cs = codeSystem('Ay');
    expect(await codes(cs)).toEqual([
      ['a', 'Ay'],
      ['b', 'Bee'],
    ]);
    expect(await codes(cs)).toEqual([
      ['a', 'Ay'],
      ['b', 'Bee'],
    ]);
  });

  it('is evaluated afresh over another rendering of its code system', async () => {
    await codes(codeSystem('Ay'));
    expect(await codes(codeSystem('Renamed'))).toEqual([
      ['a', 'Renamed'],
      ['b', 'Bee'],
    ]);
  });

  it('keeps apart what options decide (activeOnly)', async () => {
    const cs = codeSystem('Ay');
    expect(await codes(cs, true)).toEqual([['a', 'Ay']]);
    expect(await codes(cs)).toHaveLength(2);
    expect(await codes(cs, true)).toHaveLength(1);
  });

  it('hands each reader its own lists: a reader changing its set changes no other', async () => {
    const cs = codeSystem('Ay');
    const expander = new Expander(libraryOver(cs), { maxCodes: 100 });
    const first = await expander.codesOf(valueSet);
    first.codes.pop();
    first.usedCodeSystems.clear();
    const second = await new Expander(libraryOver(cs), { maxCodes: 100 }).codesOf(valueSet);
    expect(second.codes).toHaveLength(2);
    expect([...second.usedCodeSystems]).toEqual([`${SYSTEM}|1`]);
  });

  it('validates membership from the kept codes, for a member and a non-member', async () => {
    const cs = codeSystem('Ay');
    await codes(cs);
    const validate = (code: string) =>
      new Validator(libraryOver(cs), { maxCodes: 100 }).validate(
        { kind: 'code', coding: { system: SYSTEM, code } },
        valueSet,
      );
    expect((await validate('a')).result).toBe(true);
    expect((await validate('c')).result).toBe(false);
  });
});
