import { Foundation1763700000000 } from './1763700000000-foundation';

/** Every migration, in order; listed by class so that tests and the build load the same code. */
export const migrations = [Foundation1763700000000];
