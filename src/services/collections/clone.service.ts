import crypto from 'node:crypto';
import { z } from 'zod';
import { AppError, fromDatabaseError, isAppError } from '../../errors';
import type { CascadeScope, Repositories, WalkConcept } from '../../repositories';
import { requireUser } from '../shared/access';
import { announceChange } from '../shared/changes';
import { cascadeInputOf, parseCascadeParameters, type CascadeInput } from './cascade-parameters';
import { walkCascade } from './cascade-walk';
import type { CascadeService } from './cascade.service';
import type { ConceptContent, ConceptService, ConceptView } from '../content/concept.service';
import type { ServiceContext } from '../shared/context';
import type { MappingItem, MappingView } from '../content/mapping-views';
import type { End, MappingService } from '../content/mapping.service';
import type { RepoView } from '../shared/paths';
import type { RepositoryService } from '../content/repository.service';
import { parseConceptUrl, repoUrl, type RepoRef } from '../shared/urls';
import { parseInput } from '../shared/validation';

/** What the OCL web client sends when a `$clone` names no parameters (spec operations §4.3). */
const CLONE_DEFAULTS: CascadeInput = {
  cascadeLevels: '*',
  returnMapTypes: '*',
  mapTypes: 'Q-AND-A,CONCEPT-SET',
  excludeMapTypes: '',
  equivalencyMapType: 'SAME-AS',
};

const bodySchema = z.object({
  expressions: z
    .array(
      z
        .string({ error: 'Must be a string.' })
        .trim()
        .min(1, 'An expression cannot be empty.')
        .max(1000, 'At most 1000 characters.'),
      {
        error: 'A list of concept URLs is required.',
      },
    )
    .min(1, { error: 'Name at least one concept URL.' })
    .max(100, { error: 'At most 100 expressions per request.' }),
  parameters: z.record(z.string(), z.unknown()).optional(),
});

/** The schemas the service validates its input with, for the API reference. */
export const cloneInput = { clone: bodySchema };

/** One expression's outcome: what was created, or why nothing was. */
export type CloneOutcome =
  | {
      ok: true;
      /** The concepts created, in the order cloned (none when all had an equivalent already). */
      concepts: ConceptView[];
      mappings: MappingItem[];
      /** The walk stopped at the cascade limit: what lies beyond was not cloned. */
      limitReached: boolean;
    }
  | { ok: false; error: AppError };

export interface CloneResult {
  destination: RepoView;
  /** By expression, in the order given. */
  outcomes: Map<string, CloneOutcome>;
}

/**
 * `$clone` (spec operations §4.3): copies concepts (each expression's concept and what the
 * cascade walk reaches from it) into a source, with an equivalency mapping from each clone to its
 * original, and the originals' mappings pointing at the clones or the equivalents the
 * destination already has. Each expression in one transaction: it lands whole or not at all.
 */
export class CloneService {
  constructor(
    private readonly repos: Repositories,
    private readonly repositories: RepositoryService,
    private readonly concepts: ConceptService,
    private readonly mappings: MappingService,
    private readonly cascade: CascadeService,
    private readonly maxResources: number,
  ) {}

  async clone(ctx: ServiceContext, destinationRef: RepoRef, body: unknown): Promise<CloneResult> {
    requireUser(ctx);
    const data = parseInput(bodySchema, body);
    const input = { ...CLONE_DEFAULTS, ...cascadeInputOf(data.parameters ?? {}, 'parameters') };
    const parameters = parseCascadeParameters(input);
    const destination = await this.concepts.writableSource(ctx, destinationRef);
    // What the destination holds (rule 1) is never cloned; nor is what the caller's own
    // `omitIfExistsIn` holds (a repository the caller may read, else 401/403/404 for the request).
    const omit: CascadeScope[] = [
      { kind: 'source', repositoryId: destination.repo.id, seq: null },
      ...(parameters.omitIfExistsIn
        ? [await this.cascade.omissionScope(ctx, parameters.omitIfExistsIn)]
        : []),
    ];
    const outcomes = new Map<string, CloneOutcome>();
    for (const expression of data.expressions) {
      if (outcomes.has(expression)) continue;
      try {
        outcomes.set(
          expression,
          await this.cloneOne(ctx, destination, expression, parameters, omit),
        );
      } catch (error) {
        const known = isAppError(error) ? error : fromDatabaseError(error);
        if (!known) throw error;
        outcomes.set(expression, { ok: false, error: known });
      }
    }
    return { destination, outcomes };
  }

  private async cloneOne(
    ctx: ServiceContext,
    destination: RepoView,
    expression: string,
    parameters: ReturnType<typeof parseCascadeParameters>,
    omit: readonly CascadeScope[],
  ): Promise<CloneOutcome> {
    const ref = parseConceptUrl(expression);
    // The version the expression names, else the origin's HEAD (what its author sees).
    const origin = await this.repositories.get(ctx, {
      ...ref.source,
      version: ref.source.version ?? 'HEAD',
    });
    if (origin.repo.kind !== 'source') {
      throw AppError.field('expressions', `'${expression}' is not a concept of a source.`);
    }
    const scope: CascadeScope = {
      kind: 'source',
      repositoryId: origin.repo.id,
      seq: origin.version.seq,
    };
    const here = omit[0];
    const [root] = await this.repos.cascade.conceptsByCode(scope, ref.id);
    if (!root)
      throw AppError.notFound(
        `Concept '${ref.id}' in ${origin.repo.mnemonic}/${origin.version.mnemonic}`,
      );
    const types = parameters.equivalencyMapTypes;
    // Rule 1: a concept the destination (or `omitIfExistsIn`) already has, or has an equivalent
    // of, is not cloned; the walk ends there.
    for (const held of omit) {
      if ((await this.repos.cascade.alreadyIn(held, [root.conceptId], types)).size > 0) {
        return { ok: true, concepts: [], mappings: [], limitReached: false };
      }
    }
    const walk = await walkCascade(
      this.repos.cascade,
      scope,
      [root],
      parameters,
      omit,
      this.maxResources,
    );
    const cloned = [...walk.nodes.values()].map((n) => n.concept);
    const listed = [...walk.mappings.values()];
    const [entities, mappings] = await Promise.all([
      this.repos.cascade.concepts(cloned.map((c) => c.versionId)),
      this.repos.cascade.mappings(listed.map((m) => m.versionId)),
    ]);
    const actor = requireUser(ctx);
    const comment = `Cloned from ${expression}`;
    const made = await this.repos.transaction(async (r) => {
      const seq = await r.repos.nextChange(destination.repo.id);
      // Under the destination's lock: what has an equivalent there now (a parallel clone's
      // included) is not cloned again, and mappings to it point at that equivalent.
      const equivalents = await r.cascade.equivalents(
        here,
        [
          ...new Set([
            ...cloned.map((c) => c.conceptId),
            ...listed.map((m) => m.toConceptId).filter((id): id is string => id !== null),
          ]),
        ],
        types,
      );
      const clones = new Map<string, ConceptView>();
      for (const concept of cloned) {
        if (equivalents.has(concept.conceptId)) continue;
        const found = entities.get(concept.versionId)!;
        const v = found.version;
        // Rule 4: no hierarchy; rule 3: ids and external ids by the destination's schemes
        // (blank where it assigns none), names' and descriptions' too.
        const settings = destination.repo.settings;
        const itemId = (scheme: string | null | undefined): string | null =>
          scheme === 'uuid' ? crypto.randomUUID() : null;
        const content: ConceptContent = {
          conceptClass: v.conceptClass ?? 'Misc',
          datatype: v.datatype ?? 'N/A',
          externalId: null,
          names: v.names.map((n) => ({
            ...n,
            uuid: crypto.randomUUID(),
            external_id: itemId(settings.autoidConceptNameExternalId),
          })),
          descriptions: v.descriptions.map((d) => ({
            ...d,
            uuid: crypto.randomUUID(),
            external_id: itemId(settings.autoidConceptDescriptionExternalId),
          })),
          extras: v.extras,
          retired: v.retired,
          parentCodes: [],
        };
        const autoid = destination.repo.settings.autoidConceptMnemonic;
        clones.set(
          concept.conceptId,
          await this.concepts.insertIn(r, destination, seq, content, {
            id: autoid ? undefined : found.concept.mnemonic,
            fallback: true,
            username: actor.username,
            comment,
          }),
        );
      }
      const created: MappingView[] = [];
      const insert = async (content: Omit<MappingContentInput, 'retired'>): Promise<void> => {
        created.push(
          await this.mappings.insertIn(
            r,
            destination,
            seq,
            { ...content, retired: false },
            {
              username: actor.username,
              comment,
            },
          ),
        );
      };
      // Rule 2: each clone maps to its original by the (first) equivalency type.
      if (types.length > 0) {
        for (const concept of cloned) {
          const clone = clones.get(concept.conceptId);
          if (!clone) continue;
          await insert({
            mapType: types[0],
            from: endOfClone(destination, clone),
            to: endOfConcept(origin, concept),
            sortWeight: null,
            externalId: null,
            extras: null,
          });
        }
      }
      // The originals' mappings, from their clones: to a clone, to an equivalent the destination
      // had, or to the original end where neither exists.
      for (const m of listed) {
        const from = m.fromConceptId === null ? undefined : clones.get(m.fromConceptId);
        if (!from) continue;
        const original = mappings.get(m.versionId)!.version;
        const target = m.toConceptId === null ? undefined : clones.get(m.toConceptId);
        const equivalent = m.toConceptId === null ? undefined : equivalents.get(m.toConceptId);
        const to: End = target
          ? endOfClone(destination, target)
          : equivalent
            ? endOfConcept(destination, equivalent)
            : {
                sourceUrl: original.toSourceUrl,
                sourceVersion: original.toSourceVersion,
                code: original.toConceptCode,
                name: original.toConceptName,
                repositoryId: original.toRepositoryId,
                conceptId: original.toConceptId,
              };
        await insert({
          mapType: original.mapType ?? m.mapType ?? '',
          from: endOfClone(destination, from),
          to,
          sortWeight: original.sortWeight,
          externalId: null,
          extras: original.extras,
        });
      }
      if (clones.size > 0 || created.length > 0) {
        await announceChange(r, destination, actor, 'CONTENT_CHANGED');
      }
      return { concepts: [...clones.values()], mappings: created };
    });
    const ends = await this.mappings.resolveEnds(ctx, made.mappings);
    return {
      ok: true,
      concepts: made.concepts,
      mappings: made.mappings.map((view) => ({ view, ends: ends.get(view.version.id)! })),
      limitReached: walk.limitReached,
    };
  }
}

type MappingContentInput = Parameters<MappingService['insertIn']>[3];

function endOfClone(destination: RepoView, clone: ConceptView): End {
  return {
    sourceUrl: repoUrl(destination.owner, 'source', destination.repo.mnemonic),
    sourceVersion: null,
    code: clone.concept.mnemonic,
    name: null,
    repositoryId: destination.repo.id,
    conceptId: clone.concept.id,
  };
}

function endOfConcept(source: RepoView, concept: WalkConcept): End {
  return {
    sourceUrl: repoUrl(source.owner, 'source', source.repo.mnemonic),
    sourceVersion: null,
    code: concept.code,
    name: null,
    repositoryId: concept.repositoryId,
    conceptId: concept.conceptId,
  };
}
