// Pure parsing for `spectune init`: which running units/containers look like an engine, and what their launch
// command says (engine, model, port, speculative settings), read with the engine adapters.
import { ToolError } from '../errors.js';
import { normalizeUnitName } from '../unit-name.js';
import { DEFAULT_PORTS, getEngine, readExecStart, splitShellCommands } from '../engines/index.js';
import type { EngineName, EngineSettings, ParamValue } from '../engines/types.js';
import { effectiveEnvironment, effectiveListValue, type UnitFile } from '../service/unit.js';
import { readNodeGroup } from './group.js';
import type { EngineUnit, UnitSource } from './types.js';

/** Speculative settings, by canonical key (speculative_enabled is derived, not a setting). */
const SPECULATIVE_KEY = /^(?:speculative_(?!enabled$)|num_speculative_tokens$|spec_|model_draft$)/;
/** Words in a launch command worth a closer look (engines, the simulator, and shells that may wrap them). */
const ENGINE_HINT = /sglang|vllm|llama-server|launch_server|api_server|spectune(?:\.js)? sim|\b(?:ba|da|z)?sh -c/;

// Unit names of `systemctl list-units --type=service --state=running --no-legend --plain` output.
export function parseRunningUnits(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter((u) => /^[A-Za-z0-9@._:\\-]+\.service$/.test(u));
}

// From `systemctl show -p Id,ExecStart UNIT...` blocks: the units whose command may start an engine.
export function filterEngineLike(showText: string): string[] {
  const out: string[] = [];
  for (const block of showText.split(/\n\s*\n/)) {
    const id = /^Id=(.+)$/m.exec(block)?.[1]?.trim();
    const exec = block
      .split('\n')
      .filter((l) => l.startsWith('ExecStart='))
      .join(' ');
    if (id && ENGINE_HINT.test(exec)) out.push(id);
  }
  return out;
}

// The speculative subset of a settings map.
function speculativeOf(settings: EngineSettings): Record<string, ParamValue> {
  return Object.fromEntries(Object.entries(settings).filter(([k]) => SPECULATIVE_KEY.test(k)));
}

// A value that is still a variable reference ("${PORT}") is not a fact.
function literal(v: ParamValue | undefined): ParamValue | undefined {
  return typeof v === 'string' && /\$\{?[A-Za-z_]|\$\(/.test(v) ? undefined : v;
}

// Facts of one engine command, or null when no engine runs in it.
export function describeCommand(
  unit: string,
  source: UnitSource,
  command: string,
  env: Record<string, string>,
  engine?: EngineName,
): EngineUnit | null {
  const r = readExecStart(command, env, engine ? { engine } : {});
  if (!r.engine) return null;
  const s = r.effective;
  const model = literal(s[getEngine(r.engine).modelKey]);
  const port = literal(s.port);
  const group = readNodeGroup(r.engine, r.argv, env);
  return {
    unit,
    source,
    engine: r.engine,
    command,
    model: model === undefined ? null : String(model),
    port: typeof port === 'number' ? port : DEFAULT_PORTS[r.engine],
    portIsDefault: typeof port !== 'number',
    settings: s,
    speculative: speculativeOf(s),
    speculativeEnabled: s.speculative_enabled === true,
    apiKeySet: r.argv.some((a) => /^--api-key(=|$)/.test(a)),
    nodes:
      group?.form === 'ranks'
        ? { count: group.count, rank: group.rank, initAddr: group.initAddr, flags: group.flags }
        : null,
    headNote: group?.form === 'head' ? group.note : null,
    warnings: [...new Set([...r.problems.map((p) => p.message), ...r.warnings])],
  };
}

// Facts of a systemd unit from its `systemctl cat` files (the ExecStart and Environment= in force), or null.
export function describeUnitFiles(unit: string, files: UnitFile[], engine?: EngineName): EngineUnit | null {
  const exec = effectiveListValue(files, 'Service', 'ExecStart');
  if (exec) return describeCommand(unit, 'systemd', exec.value, effectiveEnvironment(files), engine);
  // A Podman Quadlet [Container] file: the ExecStart reader finds its Exec= in the whole text.
  return files[0] ? describeCommand(unit, 'systemd', files[0].text, {}, engine) : null;
}

/** One running container as `docker ps --no-trunc --format '{{json .}}'` prints it. */
interface DockerPsRow {
  Names?: string;
  Command?: string;
  Labels?: string;
  Image?: string;
}

// Engine containers of `docker ps --no-trunc --format '{{json .}}'` output (lines that are not JSON are skipped).
export function parseDockerPs(text: string): EngineUnit[] {
  const out: EngineUnit[] = [];
  for (const line of text.split('\n')) {
    let row: DockerPsRow;
    try {
      row = JSON.parse(line) as DockerPsRow;
    } catch {
      continue;
    }
    const command = (row.Command ?? '').replace(/^"|"$/g, '');
    const words = splitShellCommands(command)[0]?.map((w) => w.value) ?? [];
    const unit = describeCommand(row.Names ?? '?', 'docker', words.map(quoteWord).join(' '), {});
    if (!unit) continue;
    const labels = Object.fromEntries((row.Labels ?? '').split(',').map((kv) => kv.split('=') as [string, string]));
    const project = labels['com.docker.compose.project'];
    out.push(project ? { ...unit, compose: `${project}/${labels['com.docker.compose.service'] ?? '?'}` } : unit);
  }
  return out;
}

// Quote a word for a systemd-style command line (for containers' commands re-read by the ExecStart reader).
function quoteWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`;
}

// Pick the unit init writes a config for: --unit when given, else the only tunable candidate.
export function chooseUnit(found: EngineUnit[], wanted: string | undefined, hostName: string): EngineUnit {
  const tunable = found.filter((u) => u.source === 'systemd');
  if (wanted) {
    const name = normalizeUnitName(wanted);
    const hit = found.find((u) => u.unit === name || u.unit === wanted);
    if (!hit) {
      throw new ToolError('E_UNIT_NOT_FOUND', `${hostName}: no running engine unit named ${name}`, {
        hint: found.length
          ? `engine units found: ${found.map((u) => u.unit).join(', ')}`
          : 'check the name with `systemctl list-units --type=service --state=running` on that host',
      });
    }
    if (hit.source !== 'systemd') throw notTunable(hit);
    return hit;
  }
  if (tunable.length === 1) return tunable[0];
  if (tunable.length === 0 && found.length) throw notTunable(found[0]);
  if (tunable.length === 0) {
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${hostName}: no running systemd unit starts SGLang, vLLM or llama-server`,
      {
        hint: "start the engine's unit first (systemctl start NAME), or pass --unit NAME when a wrapper script starts it",
      },
    );
  }
  throw new ToolError(
    'E_USAGE',
    `${hostName}: ${tunable.length} engine units are running: ${tunable.map((u) => `${u.unit} (${u.engine})`).join(', ')}`,
    {
      hint: `pick one with --unit, e.g. --unit ${tunable[0].unit}`,
    },
  );
}

// The error for a container: spectune deploys through systemd drop-ins only.
function notTunable(u: EngineUnit): ToolError {
  return new ToolError(
    'E_INPUT_UNUSABLE',
    `${u.unit} runs ${u.engine} in docker${u.compose ? ` (compose ${u.compose})` : ''}: spectune tunes systemd units`,
    {
      hint: 'run the engine under a systemd unit (ExecStart=docker run ... works), then run init again',
    },
  );
}
