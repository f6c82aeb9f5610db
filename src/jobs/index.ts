export { ABANDONED_AFTER_SECONDS, JobQueue } from './job-queue';
export type { JobQueueOptions } from './job-queue';
export { isFinished } from './types';
export type {
  TaskActor,
  TaskHandle,
  TaskHandler,
  TaskProgress,
  TaskState,
  TaskView,
} from './types';
