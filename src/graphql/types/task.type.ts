import { GraphQLJSON } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { TaskView } from '../../services';

export enum TaskState {
  PENDING = 'PENDING',
  STARTED = 'STARTED',
  SUCCESS = 'SUCCESS',
  FAILURE = 'FAILURE',
}
registerEnumType(TaskState, {
  name: 'TaskState',
  description: "A background task's state (OCL's task states).",
});

@ObjectType('TaskProgress')
export class TaskProgressType {
  @Field(() => Int)
  done: number;

  @Field(() => Int, { nullable: true, description: 'Null while the amount of work is unknown.' })
  total: number | null;

  @Field(() => String, { nullable: true })
  message: string | null;
}

@ObjectType('Task', {
  description:
    'Background work a user asked for (e.g. a large reference add); its creator reads it.',
})
export class TaskType {
  @Field(() => ID, { description: 'The task id (REST `/tasks/:id/`).' })
  id: string;

  @Field({ description: 'What kind of work it is (REST `task`/`name`).' })
  kind: string;

  @Field(() => TaskState)
  state: TaskState;

  @Field(() => String, { nullable: true })
  summary: string | null;

  @Field(() => TaskProgressType)
  progress: TaskProgressType;

  @Field(() => GraphQLJSON, { nullable: true, description: 'The outcome, once SUCCESS.' })
  result: unknown;

  @Field(() => String, { nullable: true, description: 'Why it failed, once FAILURE.' })
  error: string | null;

  @Field({ description: 'Username of its creator.' })
  createdBy: string;

  @Field()
  createdAt: Date;

  @Field(() => Date, { nullable: true })
  startedAt: Date | null;

  @Field(() => Date, { nullable: true })
  finishedAt: Date | null;

  @Field({ description: 'The REST URL of this task.' })
  url: string;

  static from(task: TaskView): TaskType {
    return Object.assign(new TaskType(), {
      id: task.id,
      kind: task.kind,
      state: task.state as TaskState,
      summary: task.summary,
      progress: Object.assign(new TaskProgressType(), task.progress),
      result: task.result ?? null,
      error: task.error,
      createdBy: task.createdBy,
      createdAt: task.createdAt,
      startedAt: task.startedAt,
      finishedAt: task.finishedAt,
      url: `/tasks/${encodeURIComponent(task.id)}/`,
    });
  }
}

@ObjectType('TaskPage')
export class TaskPage {
  @Field(() => Int)
  totalCount: number;

  @Field(() => [TaskType])
  items: TaskType[];
}
