// The diagnosis functions service control relies on, gathered in one injectable object so that the controller
// can be tested with stand-ins and the wiring lives in one place.
import { diagnoseLogs, findFatalLine } from '../diagnose/index.js';
import type { ActionRecord, Diagnosis, JournalEntry } from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';

/** One named input for diagnosis: journal entries (fields kept), or text (the kernel log as journalctl prints it). */
export type DiagnoseInput = { name: string; entries: readonly JournalEntry[] } | { name: string; text: string };

/** What the service domain needs from diagnose/. */
export interface Collaborators {
  /** Whether one journal message is a fatal line for this engine. */
  isFatalLine(message: string, engine: EngineName): boolean;
  /** The verdict over the collected evidence. */
  diagnose(
    inputs: DiagnoseInput[],
    ctx: { state: string; actions: ActionRecord[]; engine: EngineName; unit: string },
  ): Diagnosis;
}

/** The real collaborators (src/diagnose). */
export const diagnoseCollaborators: Collaborators = {
  isFatalLine: (message, engine) => findFatalLine(message, engine) !== null,
  diagnose: (inputs, ctx) =>
    diagnoseLogs(
      inputs.map((i) => ('entries' in i ? i : { name: i.name, content: i.text })),
      ctx,
    ),
};
