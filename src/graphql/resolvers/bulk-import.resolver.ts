import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { AppError } from '../../errors';
import type { GraphQLContext } from '../context';
import {
  CancelBulkImportPayload,
  StartBulkImportPayload,
  type TaskPayload,
  taskPayload,
} from '../types/payloads';
import { TaskType } from '../types/task.type';

@ObjectType('BulkImport', { description: 'A bulk import: its task and its report so far.' })
export class BulkImportType {
  @Field(() => TaskType, { description: 'The task running the import.' })
  task: TaskType;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'Counts (total, processed, created, updated, unchanged, invalid, exists, failed, deleted, not_found, permission_denied, elapsed_seconds) and `failures` (line, type, id, outcome, reason); null before the first batch.',
  })
  report: Record<string, unknown> | null;
}

/** Bulk imports (REST `/importers/bulk-import/`), the same service. */
@Resolver()
export class BulkImportResolver {
  @Mutation(() => StartBulkImportPayload, {
    description:
      'Queues an import of `content` or the file at `fileUrl` (OCL JSON lines, or CSV of concepts and mappings with `attr:<name>:<type>` columns) as the caller; read it with `bulkImport` or `task`.',
  })
  async startBulkImport(
    @Arg('content', () => String, {
      nullable: true,
      description: 'The file to import, as text; or name it by `fileUrl`.',
    })
    content: string | null | undefined,
    @Arg('format', () => String, {
      nullable: true,
      description: '`json` (JSON lines) or `csv`; by content when absent.',
    })
    format: string | null | undefined,
    @Arg('updateIfExists', () => Boolean, {
      defaultValue: true,
      description: 'Update records that exist already; false: leave them, counted as `exists`.',
    })
    updateIfExists: boolean,
    @Arg('queue', () => String, {
      nullable: true,
      description:
        'A named queue (letters, digits, `_ . -`) refuses a second active import of the same user; none: `default`, which refuses none.',
    })
    queue: string | null | undefined,
    @Arg('fileUrl', () => String, {
      nullable: true,
      description:
        'Where to fetch the file from instead of `content`, as REST `file_url` (only from the hosts the deployment allows).',
    })
    fileUrl: string | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TaskPayload> {
    if (format != null && !['json', 'jsonl', 'csv'].includes(format)) {
      throw AppError.field('format', "Must be 'json' (JSON lines) or 'csv'.");
    }
    const task = await ctx.services.bulkImports.start(ctx, {
      content: content == null ? undefined : Buffer.from(content),
      fileUrl: fileUrl ?? undefined,
      format: format == null ? undefined : format === 'csv' ? 'csv' : 'jsonl',
      updateIfExists,
      queue: queue ?? undefined,
    });
    return taskPayload(StartBulkImportPayload, TaskType.from(task));
  }

  @Mutation(() => CancelBulkImportPayload, {
    description: 'Cancels an import: it stops after the batch it is writing (FAILURE).',
  })
  async cancelBulkImport(
    @Arg('taskId', () => ID, { description: 'The id of the import task.' }) taskId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TaskPayload> {
    return taskPayload(
      CancelBulkImportPayload,
      TaskType.from(await ctx.services.bulkImports.cancel(ctx, taskId)),
    );
  }

  @Query(() => BulkImportType, {
    nullable: true,
    description: 'An import of the caller (or any, for superusers).',
  })
  async bulkImport(
    @Arg('taskId', () => ID, { description: 'The id of the import task.' }) taskId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<BulkImportType> {
    const { task, report } = await ctx.services.bulkImports.status(ctx, taskId);
    return Object.assign(new BulkImportType(), {
      task: TaskType.from(task),
      report: report as Record<string, unknown> | null,
    });
  }
}
