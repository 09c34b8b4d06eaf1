// Pure planning of `spectune fold`: the operator's unit file rewritten with what spectune's drop-in sets (ExecStart,
// Environment, TimeoutStopSec), so the drop-in can go without changing the effective config. Text in, text out.
import { ToolError } from '../errors.js';
import { unifiedDiff } from './diff.js';
import { effectiveListValue, type UnitFile } from './unit.js';
import { viewUnit } from './unit-view.js';

/** Only administrator unit files are rewritten: a package's (/usr/lib) is replaced on upgrade. */
export const FOLDABLE_DIR = '/etc/systemd/system/';

/** What a fold writes and removes. */
export interface FoldPlan {
  unitPath: string;
  unitBefore: string;
  unitAfter: string;
  dropInPath: string;
  diff: string;
  execStart: string;
}

// Is this line (trimmed) an assignment of one of the keys the fold replaces?
function assigns(line: string, keys: string[]): boolean {
  return keys.some((k) => new RegExp(`^${k}\\s*=`).test(line.trim()));
}

// Plan a fold from the unit's `systemctl cat` files; refuses what it cannot fold cleanly (coded errors, with the fix).
export function planFold(files: UnitFile[], unit: string): FoldPlan {
  const v = viewUnit(files);
  const unitFile = files[0];
  if (!v.spectunePath)
    throw new ToolError('E_INPUT_UNUSABLE', `${unit}: no spectune drop-in in force: nothing to fold`, {
      hint: 'the unit already runs as written',
    });
  if (v.trial)
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${unit}: a candidate on trial is in force (${v.spectunePath}): fold only a kept config`,
      { hint: 'wait for the campaign to finish, or `spectune rollback` first' },
    );
  if (v.overrides.length)
    throw new ToolError(
      'E_FOREIGN_OVERRIDE',
      `${unit}: ${[...new Set(v.overrides.map((o) => o.path))].join(', ')} overrides spectune's drop-in`,
      { hint: 'move it out of the way first, then fold' },
    );
  if (!unitFile.path.startsWith(FOLDABLE_DIR)) {
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${unit}: the unit file is ${unitFile.path}, not under ${FOLDABLE_DIR}: a package upgrade would overwrite a fold there`,
      {
        hint: `copy it to ${FOLDABLE_DIR} first (cp ${unitFile.path} ${FOLDABLE_DIR}; systemctl daemon-reload), or keep spectune's drop-in as the override`,
      },
    );
  }
  const ours = files.find((f) => f.path === v.spectunePath)!;
  const exec = effectiveListValue(files, 'Service', 'ExecStart');
  if (!exec) throw new ToolError('E_INPUT_UNUSABLE', `${unit}: no ExecStart in force`);
  const oursLines = ours.text.split('\n').filter((l) => assigns(l, ['Environment', 'TimeoutStopSec']));
  const replaced = ['ExecStart', ...(oursLines.some((l) => assigns(l, ['TimeoutStopSec'])) ? ['TimeoutStopSec'] : [])];
  const out: string[] = [];
  const lines = unitFile.text.split('\n');
  let section = '';
  let inserted = false;
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trim();
    const sec = /^\[(.+)\]$/.exec(t);
    if (sec) {
      if (section === 'Service' && !inserted) {
        out.push(`ExecStart=${exec.value}`, ...oursLines);
        inserted = true;
      }
      section = sec[1];
    }
    if (section === 'Service' && !t.startsWith('#') && assigns(t, replaced)) {
      let j = i;
      while (lines[j].trimEnd().endsWith('\\') && j + 1 < lines.length) j++;
      if (!inserted && assigns(t, ['ExecStart'])) {
        out.push(`ExecStart=${exec.value}`, ...oursLines);
        inserted = true;
      }
      i = j;
      continue;
    }
    out.push(lines[i]);
  }
  if (!inserted) {
    while (out.length && out[out.length - 1] === '') out.pop();
    out.push(...(section === 'Service' ? [] : ['', '[Service]']), `ExecStart=${exec.value}`, ...oursLines, '');
  }
  const unitAfter = out.join('\n').replace(/\n*$/, '\n');
  return {
    unitPath: unitFile.path,
    unitBefore: unitFile.text,
    unitAfter,
    dropInPath: v.spectunePath,
    execStart: exec.value,
    diff: unifiedDiff(unitFile.text, unitAfter, { from: `a${unitFile.path}`, to: `b${unitFile.path}` }),
  };
}
