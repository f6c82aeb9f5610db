import { LRUCache } from 'lru-cache';
import {
  deepFreeze,
  type CodeSystemConcept,
  type CodeSystemResource,
  type ValueSetResource,
} from './fhir';
import type { StoredConceptMap } from './stored';
import { fhirCacheLookups, fhirCacheSize } from '../../metrics/registry';

/**
 * What is kept: code systems with their concepts, value sets with their members, maps (rendered
 * whole), and concepts read from content that cannot change (a concept of a source version by
 * code, a page of a collection version's members).
 */
export type KeptContent =
  CodeSystemResource | ValueSetResource | StoredConceptMap | readonly CodeSystemConcept[];

/**
 * Content read or rendered from stored content, by a key naming everything it shows, the least
 * recently used dropped past a number of concepts (or members, or mappings) in all. Parallel
 * requests for one key share one reading; a reading that fails is not kept. What is kept is
 * frozen: every reader shares it. Nothing here decides who may read what: callers ask for a key
 * only after the caller's access was checked.
 */
export class ContentCache {
  private readonly done: LRUCache<string, KeptContent> | null;
  private readonly pending = new Map<string, Promise<KeptContent>>();

  constructor(maxConcepts: number) {
    this.done =
      maxConcepts > 0
        ? new LRUCache({
            maxSize: maxConcepts,
            sizeCalculation: sizeOf,
          })
        : null;
  }

  async get<T extends KeptContent>(key: string, read: () => Promise<T>): Promise<T> {
    if (!this.done) return read();
    const kept = this.done.get(key);
    fhirCacheLookups.inc({ result: kept ? 'hit' : 'miss' });
    if (kept) return kept as T;
    let pending = this.pending.get(key) as Promise<T> | undefined;
    if (!pending) {
      pending = read().finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
      const content = await pending;
      // Larger than the whole cache: used for this request only. An empty list is not kept:
      // codes no one has (every caller may send others) would fill it with nothing.
      const empty = isConceptList(content) && content.length === 0;
      if (!empty && sizeOf(content) <= this.done.maxSize) {
        this.done.set(key, deepFreeze(content));
        fhirCacheSize.set(this.done.calculatedSize);
      }
      return content;
    }
    return pending;
  }
}

/** One more than its concepts, members or mappings, so that an empty one has a size. */
function sizeOf(content: KeptContent): number {
  if (isConceptList(content)) return 1 + conceptsIn(content);
  if (content.resourceType === 'CodeSystem') return 1 + conceptsIn(content.concept);
  let n = 1;
  if (content.resourceType === 'ConceptMap') {
    for (const group of content.group ?? [])
      for (const element of group.element ?? []) n += element.target?.length ?? 0;
    return n;
  }
  for (const include of content.compose?.include ?? []) n += include.concept?.length ?? 0;
  return n;
}

function isConceptList(content: KeptContent): content is readonly CodeSystemConcept[] {
  return Array.isArray(content);
}

function conceptsIn(concepts: readonly CodeSystemConcept[] | undefined): number {
  let n = 0;
  for (const concept of concepts ?? []) n += 1 + conceptsIn(concept.concept);
  return n;
}
