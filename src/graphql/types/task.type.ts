import { GraphQLJSON } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { TaskView } from '../../services';
import { renamedTo, TOTAL_COUNT } from './descriptions';
import { TaskKind, taskKindOf } from './enums';

export enum TaskState {
  PENDING = 'PENDING',
  STARTED = 'STARTED',
  SUCCESS = 'SUCCESS',
  FAILURE = 'FAILURE',
}
registerEnumType(TaskState, {
  name: 'TaskState',
  description: "A background task's state (OCL's task states).",
  valuesConfig: {
    PENDING: { description: 'Queued, not started yet.' },
    STARTED: { description: 'Running.' },
    SUCCESS: { description: 'Finished; `result` holds the outcome.' },
    FAILURE: { description: 'Failed; `error` says why.' },
  },
});

@ObjectType('TaskProgress', {
  description: 'How far a task has got, as its handler last reported.',
})
export class TaskProgressType {
  @Field(() => Int, { description: 'Units of work done so far.' })
  done: number;

  @Field(() => Int, { nullable: true, description: 'Null while the amount of work is unknown.' })
  total: number | null;

  @Field(() => String, {
    nullable: true,
    description: 'What it is doing now, in words; null when not reported.',
  })
  message: string | null;
}

@ObjectType('Task', {
  description:
    'Background work a user asked for (e.g. a large reference add); its creator reads it.',
})
export class TaskType {
  @Field(() => ID, { description: 'The task id (REST `/tasks/:id/`).' })
  id: string;

  @Field(() => TaskKind, { description: 'What kind of work it is (REST `task`/`name`).' })
  kind: TaskKind;

  @Field(() => TaskState, { description: 'Where it stands.' })
  state: TaskState;

  @Field(() => String, {
    nullable: true,
    description:
      'What it does, in words (e.g. `Add 3 references to C1`); null when none was given.',
  })
  summary: string | null;

  @Field(() => TaskProgressType, { description: 'How far it has got.' })
  progress: TaskProgressType;

  @Field(() => GraphQLJSON, { nullable: true, description: 'The outcome, once SUCCESS.' })
  result: unknown;

  @Field(() => String, { nullable: true, description: 'Why it failed, once FAILURE.' })
  error: string | null;

  @Field({ description: 'Username of its creator.' })
  createdBy: string;

  @Field({ description: 'When it was queued.', deprecationReason: renamedTo('createdOn') })
  createdAt: Date;

  @Field(() => Date, {
    nullable: true,
    description: 'When it started; null while PENDING.',
    deprecationReason: renamedTo('startedOn'),
  })
  startedAt: Date | null;

  @Field(() => Date, {
    nullable: true,
    description: 'When it finished; null until then.',
    deprecationReason: renamedTo('finishedOn'),
  })
  finishedAt: Date | null;

  @Field({ description: 'When it was queued.' })
  get createdOn(): Date {
    return this.createdAt;
  }

  @Field(() => Date, { nullable: true, description: 'When it started; null while PENDING.' })
  get startedOn(): Date | null {
    return this.startedAt;
  }

  @Field(() => Date, { nullable: true, description: 'When it finished; null until then.' })
  get finishedOn(): Date | null {
    return this.finishedAt;
  }

  @Field({ description: 'The REST URL of this task.' })
  url: string;

  static from(task: TaskView): TaskType {
    return Object.assign(new TaskType(), {
      id: task.id,
      kind: taskKindOf(task.kind),
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

@ObjectType('TaskPage', { description: 'A page of tasks.' })
export class TaskPage {
  @Field(() => Int, { description: TOTAL_COUNT })
  totalCount: number;

  @Field(() => [TaskType], { description: 'The tasks of this page.' })
  items: TaskType[];
}
