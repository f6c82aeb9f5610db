import { ContentCache } from '../../src/services/terminology/content-cache';
import type { CodeSystemResource, ValueSetResource } from '../../src/services/terminology/fhir';

const codeSystem = (codes: string[]): CodeSystemResource => ({
  resourceType: 'CodeSystem',
  url: 'http://example.org/cs',
  concept: codes.map((code) => ({ code, display: code.toUpperCase() })),
});

const valueSet = (codes: string[]): ValueSetResource => ({
  resourceType: 'ValueSet',
  url: 'http://example.org/vs',
  compose: {
    include: [{ system: 'http://example.org/cs', concept: codes.map((code) => ({ code })) }],
  },
});

/** A render that counts its calls and answers when told. */
function counted<T extends CodeSystemResource | ValueSetResource>(resource: T) {
  const calls = { n: 0 };
  const render = () => {
    calls.n += 1;
    return Promise.resolve(resource);
  };
  return { calls, render };
}

describe('ContentCache', () => {
  it('renders a key once for parallel callers and keeps it for the next', async () => {
    const cache = new ContentCache(100);
    const { calls, render } = counted(codeSystem(['a', 'b']));
    const answers = await Promise.all([1, 2, 3].map(() => cache.get('k', render)));
    expect(calls.n).toBe(1);
    expect(new Set(answers).size).toBe(1);
    await cache.get('k', render);
    expect(calls.n).toBe(1);
    await cache.get('other', render);
    expect(calls.n).toBe(2);
  });

  it('keeps nothing of a render that failed', async () => {
    const cache = new ContentCache(100);
    await expect(cache.get('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    const { calls, render } = counted(codeSystem(['a']));
    await cache.get('k', render);
    expect(calls.n).toBe(1);
  });

  it('drops the least recently used past its size in concepts, and keeps none larger than it', async () => {
    const cache = new ContentCache(10);
    const small = counted(codeSystem(['a', 'b', 'c', 'd']));
    const other = counted(codeSystem(['e', 'f', 'g', 'h']));
    await cache.get('small', small.render);
    await cache.get('other', other.render);
    await cache.get('small', small.render);
    expect([small.calls.n, other.calls.n]).toEqual([1, 1]);
    // 5 + 5 concepts' worth fill it: a third pushes out the least recently used ('other').
    const third = counted(codeSystem(['i', 'j', 'k', 'l']));
    await cache.get('third', third.render);
    await cache.get('small', small.render);
    await cache.get('other', other.render);
    expect([small.calls.n, other.calls.n]).toEqual([1, 2]);

    const huge = counted(codeSystem(Array.from({ length: 20 }, (_, i) => `x${i}`)));
    await cache.get('huge', huge.render);
    await cache.get('huge', huge.render);
    expect(huge.calls.n).toBe(2);
  });

  it('sizes a value set by its members', async () => {
    const cache = new ContentCache(10);
    const fits = counted(valueSet(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']));
    await cache.get('fits', fits.render);
    await cache.get('fits', fits.render);
    expect(fits.calls.n).toBe(1);
    const larger = counted(valueSet(Array.from({ length: 10 }, (_, i) => `x${i}`)));
    await cache.get('larger', larger.render);
    await cache.get('larger', larger.render);
    expect(larger.calls.n).toBe(2);
  });

  it('sizes a list of concepts by its concepts, and hands it out frozen', async () => {
    const cache = new ContentCache(10);
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ code: `c${i}` }));
    let reads = 0;
    const read = (n: number) => () => {
      reads += 1;
      return Promise.resolve(list(n));
    };
    const kept = await cache.get('nine', read(9));
    await cache.get('nine', read(9));
    expect(reads).toBe(1);
    expect(() => {
      (kept as Array<{ code: string }>).push({ code: 'x' });
    }).toThrow(TypeError);
    await cache.get('ten', read(10));
    await cache.get('ten', read(10));
    expect(reads).toBe(3);
    // No concept: not kept (unknown codes would fill the cache with nothing).
    await cache.get('none', read(0));
    await cache.get('none', read(0));
    expect(reads).toBe(5);
  });

  it('renders every time when its size is 0', async () => {
    const cache = new ContentCache(0);
    const { calls, render } = counted(codeSystem(['a']));
    await cache.get('k', render);
    await cache.get('k', render);
    expect(calls.n).toBe(2);
  });

  it('hands out frozen resources, so that no reader changes one for the others', async () => {
    const cache = new ContentCache(100);
    const resource = await cache.get('k', () => Promise.resolve(codeSystem(['a'])));
    expect(() => {
      resource.concept![0].display = 'changed';
    }).toThrow(TypeError);
    expect(() => resource.concept!.push({ code: 'b' })).toThrow(TypeError);
  });
});
