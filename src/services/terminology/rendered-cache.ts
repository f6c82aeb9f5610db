import { LRUCache } from 'lru-cache';
import {
  deepFreeze,
  type CodeSystemConcept,
  type CodeSystemResource,
  type ValueSetResource,
} from './fhir';
import type { StoredConceptMap } from './stored';
import { fhirCacheLookups, fhirCacheSize } from '../../metrics/registry';

/** What is kept: code systems with their concepts, value sets with their members, maps. */
export type RenderedResource = CodeSystemResource | ValueSetResource | StoredConceptMap;

/**
 * Code systems, value sets and concept maps rendered from stored content, by a key naming
 * everything the rendering shows, the least recently used dropped past a number of concepts (or
 * members, or mappings) in all. Parallel requests for one key
 * share one rendering; a rendering that fails is not kept. Nothing here decides who may read
 * what: callers ask for a key only after the caller's access was checked.
 */
export class RenderedCache {
  private readonly done: LRUCache<string, RenderedResource> | null;
  private readonly pending = new Map<string, Promise<RenderedResource>>();

  constructor(maxConcepts: number) {
    this.done =
      maxConcepts > 0
        ? new LRUCache({
            maxSize: maxConcepts,
            sizeCalculation: sizeOf,
          })
        : null;
  }

  async get<T extends RenderedResource>(key: string, render: () => Promise<T>): Promise<T> {
    if (!this.done) return render();
    const kept = this.done.get(key);
    fhirCacheLookups.inc({ result: kept ? 'hit' : 'miss' });
    if (kept) return kept as T;
    let pending = this.pending.get(key) as Promise<T> | undefined;
    if (!pending) {
      pending = render().finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
      const resource = await pending;
      // Larger than the whole cache: used for this request only.
      if (sizeOf(resource) <= this.done.maxSize) {
        this.done.set(key, deepFreeze(resource));
        fhirCacheSize.set(this.done.calculatedSize);
      }
      return resource;
    }
    return pending;
  }
}

/** One more than its concepts, members or mappings, so that an empty one has a size. */
function sizeOf(resource: RenderedResource): number {
  if (resource.resourceType === 'CodeSystem') return 1 + conceptsIn(resource.concept);
  let n = 1;
  if (resource.resourceType === 'ConceptMap') {
    for (const group of resource.group ?? [])
      for (const element of group.element ?? []) n += element.target?.length ?? 0;
    return n;
  }
  for (const include of resource.compose?.include ?? []) n += include.concept?.length ?? 0;
  return n;
}

function conceptsIn(concepts: CodeSystemConcept[] | undefined): number {
  let n = 0;
  for (const concept of concepts ?? []) n += 1 + conceptsIn(concept.concept);
  return n;
}
