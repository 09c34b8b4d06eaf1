// The manager's journal messages, verbatim from systemd v252 (see log-signatures.md §5), with their fields.
import { formatStatus, type ProcessExit } from './exit-status.js';
import type { JournalEntry } from './types.js';

/** Fields of a manager message beyond the text (the journal adds the common ones). */
export type MessageFields = Partial<
  Pick<JournalEntry, 'MESSAGE_ID' | 'UNIT_RESULT' | 'EXIT_CODE' | 'EXIT_STATUS' | 'N_RESTARTS' | 'JOB_TYPE'>
>;

/** One manager message: priority (syslog level), text and structured fields. */
export interface ManagerMessage {
  priority: number;
  text: string;
  fields: MessageFields;
}

const ID = {
  started: '39f53479d3a045ac8e11786248231fbf',
  stopping: 'de5b426a63be47a7b6ac3eaac82e2f6f',
  stopped: '9d1aaa27d60140bd96365438aad20286',
  failedStart: 'be02cf6855d2428ba40df7e9d022f03d',
  exited: '98e322203f7a4ed290d09fe03c09fe15',
  failure: 'd9b373ed55a64feb8242e02dbe79a49c',
  success: '7ad2d189f7e94e70a38c781354912448',
  restart: '5eb03494b6584870a536b337290809b3',
};

// "<unit> - <description>" (v252's combined StatusUnitFormat) or just the unit without a description.
export function unitLabel(unit: string, description?: string): string {
  return description ? `${unit} - ${description}` : unit;
}

// Every message the manager writes, keyed by what happened.
export const msg = {
  started: (label: string): ManagerMessage => ({
    priority: 6,
    text: `Started ${label}.`,
    fields: { MESSAGE_ID: ID.started, JOB_TYPE: 'start' },
  }),
  stopping: (label: string): ManagerMessage => ({
    priority: 6,
    text: `Stopping ${label}...`,
    fields: { MESSAGE_ID: ID.stopping, JOB_TYPE: 'stop' },
  }),
  stopped: (label: string): ManagerMessage => ({
    priority: 6,
    text: `Stopped ${label}.`,
    fields: { MESSAGE_ID: ID.stopped, JOB_TYPE: 'stop' },
  }),
  failedToStart: (label: string): ManagerMessage => ({
    priority: 3,
    text: `Failed to start ${label}.`,
    fields: { MESSAGE_ID: ID.failedStart, JOB_TYPE: 'start' },
  }),
  mainExited: (unit: string, e: ProcessExit): ManagerMessage => ({
    priority: e.code === 'exited' ? 5 : 4,
    text: `${unit}: Main process exited, code=${e.code}, status=${formatStatus(e)}`,
    fields: { MESSAGE_ID: ID.exited, EXIT_CODE: e.code, EXIT_STATUS: String(e.status) },
  }),
  failedWithResult: (unit: string, result: string): ManagerMessage => ({
    priority: 4,
    text: `${unit}: Failed with result '${result}'.`,
    fields: { MESSAGE_ID: ID.failure, UNIT_RESULT: result },
  }),
  deactivated: (unit: string): ManagerMessage => ({
    priority: 6,
    text: `${unit}: Deactivated successfully.`,
    fields: { MESSAGE_ID: ID.success },
  }),
  scheduledRestart: (unit: string, n: number): ManagerMessage => ({
    priority: 6,
    text: `${unit}: Scheduled restart job, restart counter is at ${n}.`,
    fields: { MESSAGE_ID: ID.restart, N_RESTARTS: String(n) },
  }),
  startLimitHit: (unit: string): ManagerMessage => ({
    priority: 4,
    text: `${unit}: Start request repeated too quickly.`,
    fields: {},
  }),
  stopTimedOut: (unit: string): ManagerMessage => ({
    priority: 4,
    text: `${unit}: State 'stop-sigterm' timed out. Killing.`,
    fields: {},
  }),
  killing: (unit: string, pid: number, comm: string): ManagerMessage => ({
    priority: 5,
    text: `${unit}: Killing process ${pid} (${comm}) with signal SIGKILL.`,
    fields: {},
  }),
  execFailed: (unit: string, argv0: string, why: string): ManagerMessage => ({
    priority: 3,
    text: `${unit}: Failed at step EXEC spawning ${argv0}: ${why}`,
    fields: {},
  }),
};
