// The ordered list of schema migrations; PRAGMA user_version records how many have been applied.
import { SQL as INIT } from './001-init.js';
import { SQL as RUN_SEGMENTS } from './002-run-segments.js';
import { SQL as END_STATE } from './003-end-state.js';
import { SQL as SLURM_JOBS } from './004-slurm-jobs.js';

/** One migration: its number (1-based, equal to the user_version after it) and SQL. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Append only: a released migration never changes, a new one gets the next number.
export const MIGRATIONS: Migration[] = [
  { version: 1, name: '001-init', sql: INIT },
  { version: 2, name: '002-run-segments', sql: RUN_SEGMENTS },
  { version: 3, name: '003-end-state', sql: END_STATE },
  { version: 4, name: '004-slurm-jobs', sql: SLURM_JOBS },
];
