import { LRUCache } from 'lru-cache';
import type { CodeSystemConcept, CodeSystemResource } from './terminology/fhir';

/**
 * Code systems rendered from stored content, by a key naming everything the rendering shows, the
 * least recently used dropped past a number of concepts in all. Parallel requests for one key
 * share one rendering; a rendering that fails is not kept. Nothing here decides who may read
 * what: callers ask for a key only after the caller's access was checked.
 */
export class RenderedCache {
  private readonly done: LRUCache<string, CodeSystemResource> | null;
  private readonly pending = new Map<string, Promise<CodeSystemResource>>();

  constructor(maxConcepts: number) {
    this.done =
      maxConcepts > 0
        ? new LRUCache({
            maxSize: maxConcepts,
            // One more than its concepts, so that an empty code system has a size.
            sizeCalculation: (resource) => 1 + conceptsIn(resource.concept),
          })
        : null;
  }

  async get(key: string, render: () => Promise<CodeSystemResource>): Promise<CodeSystemResource> {
    if (!this.done) return render();
    const kept = this.done.get(key);
    if (kept) return kept;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = render().finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
      const resource = await pending;
      // Larger than the whole cache: used for this request only.
      if (1 + conceptsIn(resource.concept) <= this.done.maxSize) {
        this.done.set(key, deepFreeze(resource));
      }
      return resource;
    }
    return pending;
  }
}

/** Shared by every request that reads it: frozen, so that no reader can change it for others. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function conceptsIn(concepts: CodeSystemConcept[] | undefined): number {
  let n = 0;
  for (const concept of concepts ?? []) n += 1 + conceptsIn(concept.concept);
  return n;
}
