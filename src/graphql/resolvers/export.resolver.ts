import { Arg, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import { HEAD } from '../../db/entities';
import { parseRepoUrl, refOf, type ExportStatus } from '../../services';
import type { GraphQLContext } from '../context';
import { ExportOutcome, ExportState, ExportType, RequestExportPayload } from '../types/export.type';
import { deleted, DeleteExportPayload } from '../types/payloads';
import { slashed, type DeletePayload } from '../types/payload.type';
import { RepositoryObject } from '../types/repository.type';

/** The REST download path a token opens (compat/rest/export.handlers.ts). */
const DOWNLOAD_PATH = '/exports/';

function exportOf(status: ExportStatus, baseUrl: string): ExportType {
  if (status.state !== 'ready') {
    return Object.assign(new ExportType(), {
      state: status.state === 'absent' ? ExportState.ABSENT : ExportState.PROCESSING,
      fileName: null,
      size: null,
      lastUpdated: null,
      downloadUrl: null,
    });
  }
  return Object.assign(new ExportType(), {
    state: ExportState.READY,
    fileName: status.fileName,
    size: status.size,
    lastUpdated: status.lastUpdated,
    downloadUrl: `${baseUrl}${DOWNLOAD_PATH}${status.download}/`,
  });
}

/** spec operations §4.8 in GraphQL: a version's export, and asking for or deleting one. */
@Resolver(() => RepositoryObject)
export class ExportResolver {
  @FieldResolver(() => ExportType, {
    nullable: true,
    description: "The version's export; null for HEAD (exports exist only for versions).",
  })
  async export(
    @Root() r: RepositoryObject,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ExportType | null> {
    if (r.view.version.mnemonic === HEAD) return null;
    const ref = { ...refOf(r.view), version: r.view.version.mnemonic };
    return exportOf(await ctx.services.exports.status(ctx, ref), ctx.baseUrl);
  }

  @Mutation(() => RequestExportPayload, {
    description: 'Asks for the export of a version (its URL); REST `POST …/:version/export/`.',
  })
  async requestExport(
    @Arg('url', { description: 'The REST URL of the version.' }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RequestExportPayload> {
    const ref = parseRepoUrl(url);
    const asked = await ctx.services.exports.request(ctx, ref);
    const outcome = {
      queued: ExportOutcome.QUEUED,
      exists: ExportOutcome.EXISTS,
      processing: ExportOutcome.PROCESSING,
    }[asked.outcome];
    return Object.assign(new RequestExportPayload(), {
      url: slashed(url),
      id: ref.version ?? HEAD,
      outcome,
      taskId: asked.taskId ?? null,
    });
  }

  @Mutation(() => DeleteExportPayload, {
    description: "Deletes a version's export file (administrators of the repository).",
  })
  async deleteExport(
    @Arg('url', { description: 'The REST URL of the version.' }) url: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<DeletePayload> {
    const ref = parseRepoUrl(url);
    await ctx.services.exports.remove(ctx, ref);
    return deleted(DeleteExportPayload, ref.version ?? HEAD, slashed(url));
  }
}
