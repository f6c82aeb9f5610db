import { Arg, ID, Resolver, Root, Subscription } from 'type-graphql';
import { parseRepoUrl, type Delivery, type RepositoryChange, type TaskView } from '../../services';
import type { GraphQLContext } from '../context';
import { TaskType } from '../types/task.type';
import { RepositoryChangeType } from '../types/watch.type';

/**
 * Subscriptions (over WebSocket only: `src/graphql/websocket.ts`). Each names its own source of
 * events, a watch of the services, which delivers what the subscriber may see as they are at that
 * moment; a delivery carrying an error is the last (the field is null with that error).
 */
@Resolver()
export class SubscriptionResolver {
  @Subscription(() => TaskType, {
    nullable: true,
    description:
      'A background task (export, bulk import, large reference add, …) now and at each change of ' +
      'its state or progress; completes once it has finished (SUCCESS or FAILURE). Only for its ' +
      'creator or a superuser, as `task(id)`; others get NOT_FOUND.',
    subscribe: ({ args, context }) => {
      const ctx = context as GraphQLContext;
      return ctx.services.watches.task(ctx, (args as { id: string }).id);
    },
  })
  taskProgress(
    @Root() delivery: Delivery<TaskView>,
    @Arg('id', () => ID, { description: 'The task id.' }) _id: string,
  ): TaskType {
    if ('error' in delivery) throw delivery.error;
    return TaskType.from(delivery.value);
  }

  @Subscription(() => RepositoryChangeType, {
    nullable: true,
    description:
      'The changes of a source or collection from now on, each once, in the order they were ' +
      'committed, made through any server process: concepts and mappings created, edited, ' +
      'retired; references added or removed; versions; the repository itself. Each is checked ' +
      'against the rights the subscriber has when it is delivered: losing the right to see the ' +
      'repository ends the subscription with that error, as does its deletion (after ' +
      '`REPOSITORY_DELETED`).',
    subscribe: ({ args, context }) => {
      const ctx = context as GraphQLContext;
      return ctx.services.watches.repository(ctx, parseRepoUrl((args as { url: string }).url));
    },
  })
  repositoryChanged(
    @Root() delivery: Delivery<RepositoryChange>,
    @Arg('url', {
      description:
        'The REST URL of the source or collection (HEAD), e.g. `/orgs/CIEL/sources/CIEL/`.',
    })
    _url: string,
  ): RepositoryChangeType {
    if ('error' in delivery) throw delivery.error;
    return RepositoryChangeType.from(delivery.value);
  }
}
