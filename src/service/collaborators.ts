// The diagnosis functions service control relies on, gathered in one injectable object so that the controller
// can be tested with stand-ins and the wiring lives in one place.
import type { Diagnosis, Verdict, ActionRecord } from '../diagnose/types.js';
import type { EngineName } from '../engines/types.js';

/** One named text input for diagnosis (journal, kernel log, systemctl show). */
export interface DiagnoseInput {
  name: string;
  text: string;
}

/** What the service domain needs from diagnose/. */
export interface Collaborators {
  /** Whether one journal message is a fatal line for this engine. */
  isFatalLine(message: string, engine: EngineName): boolean;
  /** The verdict over the collected evidence. */
  diagnose(inputs: DiagnoseInput[], ctx: { state: string; actions: ActionRecord[]; engine: EngineName; unit: string }): Diagnosis;
}

type AnyFn = (...args: unknown[]) => unknown;

// Import a sibling domain's module by path (static imports replace these once every module has landed).
async function load(path: string): Promise<Record<string, AnyFn>> {
  return (await import(path)) as Record<string, AnyFn>;
}

// Normalise diagnoseLogs' answer (a Diagnosis, or a bare Verdict) into a Diagnosis.
function asDiagnosis(r: unknown): Diagnosis {
  const d = r as Partial<Diagnosis> & Partial<Verdict>;
  if (d.verdict) return d as Diagnosis;
  return { verdict: d as Verdict, rootException: null, timeline: [], lifetimes: [] };
}

// The real collaborators, loaded from diagnose/.
export async function loadCollaborators(): Promise<Collaborators> {
  const diag = await load('../diagnose/index.js');
  return {
    isFatalLine: (message, engine) => Boolean(diag.findFatalLine(message, engine)),
    diagnose: (inputs, ctx) => asDiagnosis(diag.diagnoseLogs(inputs.map((i) => ({ name: i.name, content: i.text })), ctx)),
  };
}
