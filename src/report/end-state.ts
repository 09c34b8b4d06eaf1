// "What is running now" and "the exact flags to keep": from the stored end state of the campaign and the engine
// adapter's patch of the operator's own ExecStart. Pure.
import { patchExecStart } from '../engines/command-line.js';
import { getEngine } from '../engines/registry.js';
import type { EngineName, ParamValue } from '../engines/types.js';
import { REDACTED } from '../redact.js';
import type { CampaignEndState } from '../store/campaigns.js';
import { formatConfig } from './format.js';
import type { KeepModel, KeepUnit, ReportInput, ReportTrial, RunningModel } from './types.js';

/** The drop-in name suggested to the operator (systemd's own convention for local overrides, not spectune's file). */
const OPERATOR_DROPIN = 'override.conf';

// The same tuned values (a stored number and its string reading count as equal).
function sameConfig(a: Record<string, ParamValue>, b: Record<string, ParamValue>, keys: string[]): boolean {
  return keys.every((k) => String(a[k]) === String(b[k]));
}

// What the unit(s) ran when the campaign ended, or null when the store did not record it.
export function buildRunning(
  end: CampaignEndState | null | undefined,
  best: ReportTrial | null,
  keys: string[],
): RunningModel | null {
  if (!end) return null;
  return {
    ts: end.ts,
    config: formatConfig(end.settings, keys),
    healthy: end.healthy,
    isWinner: best !== null && sameConfig(end.settings, best.params, keys),
    units: end.units.map((u) => ({
      host: u.host,
      unit: u.unit,
      execStart: u.execStart && placeSecrets(u.execStart).execStart,
      dropInPath: u.dropInPath,
      dropIn: u.dropIn && placeSecrets(u.dropIn).execStart,
    })),
  };
}

// A flag with its value as the engine spells it on a command line ("--speculative-num-steps 4", "--enable-x").
function spell(flag: string, v: ParamValue): string {
  if (v === true) return flag;
  if (v === false) return `(no ${flag})`;
  return `${flag} ${String(v)}`;
}

// The engine's flag of a canonical key (the key itself when the adapter does not know it).
function flagOf(engine: string, key: string): string {
  try {
    return getEngine(engine).params.find((p) => p.key === key)?.flag ?? key;
  } catch {
    return key;
  }
}

// A redacted flag value becomes an environment reference (`--api-key ${API_KEY}`) plus a line saying where the key goes,
// so the copy-paste block never carries a literal *** that would break the unit.
function placeSecrets(cmd: string): { execStart: string; secret: string[] } {
  const names: string[] = [];
  const execStart = cmd.replace(
    /(--([A-Za-z][A-Za-z0-9_-]*)(?:=|\s+))\*\*\*(?=\s|$)/g,
    (_m, head: string, flag: string) => {
      const name = flag.replace(/-/g, '_').toUpperCase();
      if (!names.includes(name)) names.push(name);
      return `${head}\${${name}}`;
    },
  );
  const secret = names.map(
    (n) =>
      `\${${n}} stands for the unit's secret (reports never carry secrets): keep your own value there, or put ${n}=<your key> in the unit's EnvironmentFile=`,
  );
  if (execStart.includes(REDACTED))
    secret.push(
      `a secret in the command is shown as ${REDACTED} (reports never carry secrets): keep your own value there`,
    );
  return { execStart, secret };
}

// The operator's ExecStart with the winner's flags patched in, as a drop-in; null with a reason when it cannot be.
function keepUnit(
  u: CampaignEndState['units'][number],
  engine: string,
  params: Record<string, ParamValue>,
): KeepUnit | string {
  if (!u.operatorExecStart) return `${u.host} ${u.unit}: the store has no ExecStart of the unit`;
  try {
    const p = patchExecStart(u.operatorExecStart, engine as EngineName, params);
    const dir = u.dropInPath.replace(/\/[^/]+$/, '');
    const { execStart, secret } = placeSecrets(p.execStart);
    return {
      host: u.host,
      unit: u.unit,
      execStart,
      dropInPath: `${dir}/${OPERATOR_DROPIN}`,
      dropIn: ['[Service]', `${p.directive}=`, `${p.directive}=${execStart}`, ''].join('\n'),
      warnings: [...p.warnings, ...secret],
    };
  } catch (e) {
    return `${u.host} ${u.unit}: ${(e as Error).message}`;
  }
}

// The winner's flags, and per unit the exact ExecStart line to keep them (null without a winner).
export function buildKeep(
  input: ReportInput,
  best: ReportTrial | null,
  baseline: ReportTrial | null,
  keys: string[],
): KeepModel | null {
  if (!best) return null;
  const engine = input.campaign.engine;
  const shown = keys.length ? keys.filter((k) => k in best.params) : Object.keys(best.params);
  const flags = shown.map((key) => {
    const flag = flagOf(engine, key);
    const from = baseline && key in baseline.params ? spell(flag, baseline.params[key]) : null;
    return { key, flag, value: spell(flag, best.params[key]), from };
  });
  const end = input.campaign.endState;
  const made = (end?.units ?? []).map((u) => keepUnit(u, engine, best.params));
  const units = made.filter((m): m is KeepUnit => typeof m !== 'string');
  const problems = made.filter((m): m is string => typeof m === 'string');
  const unchanged = flags.length > 0 && flags.every((f) => f.from === f.value);
  const notes = [
    ...(unchanged
      ? ['The winner is the configuration the unit had before the campaign: there is nothing to change.']
      : []),
    ...(!end
      ? [
          'The store has no copy of the unit (the campaign did not finish, or was recorded by an older spectune): add these flags to the ExecStart of your unit.',
        ]
      : problems),
  ];
  const note = notes.length ? notes.join(' ') : null;
  return { config: formatConfig(best.params, keys), flags, units, note };
}
