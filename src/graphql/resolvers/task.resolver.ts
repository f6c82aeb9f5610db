import { Arg, Ctx, ID, Int, Query, Resolver } from 'type-graphql';
import { DEFAULT_LIMIT, defaultListParams } from '../../services';
import type { GraphQLContext } from '../context';
import { OFFSET } from '../types/descriptions';
import { TaskPage, TaskType } from '../types/task.type';

@Resolver(() => TaskType)
export class TaskResolver {
  @Query(() => TaskType, {
    nullable: true,
    description: 'One background task; only its creator (or a superuser) may read it.',
  })
  async task(
    @Arg('id', () => ID, { description: 'The task id.' }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TaskType> {
    return TaskType.from(await ctx.services.tasks.get(ctx, id));
  }

  @Query(() => TaskPage, {
    nullable: true,
    description: "The caller's background tasks, newest first.",
  })
  async tasks(
    @Arg('limit', () => Int, { defaultValue: DEFAULT_LIMIT, description: '0 returns everything.' })
    limit: number,
    @Arg('offset', () => Int, { defaultValue: 0, description: OFFSET }) offset: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TaskPage> {
    const page = await ctx.services.tasks.list(ctx, defaultListParams({ limit, offset }));
    return { totalCount: page.total, items: page.items.map((t) => TaskType.from(t)) };
  }
}
