// Binds the runner's service port to the service controller (systemd drop-ins over SSH, or the process manager).
import { getEngine } from '../engines/index.js';
import type { CapacityFacts, EngineName } from '../engines/types.js';
import { readEngineInfo } from '../service/health.js';
import type { Verdict } from '../diagnose/index.js';
import { dropInPath, type ActionLog, type ServiceController } from '../service/index.js';
import { diagnoseUnit } from './diagnose-live.js';
import type { TuneConfig } from '../tune/types.js';
import type { DeployOutcome, EndState, TuneServicePort } from './tune-ports.js';

/** A deploy of a config costs one restart of the service, whatever the crash loop did afterwards. */
const RESTARTS_PER_DEPLOY = 1;

// Capacity facts from the engine's info JSON (SGLang's /server_info); null when the engine has none or it is unavailable.
export async function readCapacity(
  endpoint: string,
  engine: EngineName,
  apiKey?: string | null,
): Promise<CapacityFacts | null> {
  const adapter = getEngine(engine);
  return adapter.readInfoCapacity(await readEngineInfo(endpoint, adapter, apiKey));
}

// Capacity facts through a controller (its endpoint, asked with its --api-key).
export async function readCapacityOf(ctl: ServiceController): Promise<CapacityFacts | null> {
  return getEngine(ctl.engine).readInfoCapacity(await ctl.readInfo());
}

// Pick the tuned keys out of the settings in force (a key the command line omits stays omitted).
export function pickConfig(settings: Record<string, unknown>, keys: string[]): TuneConfig {
  const out: TuneConfig = {};
  for (const k of keys) {
    const v = settings[k];
    if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

// One unit as it is now, for the stored end state.
export async function readUnitSnapshot(ctl: ServiceController): Promise<EndState['units'][number]> {
  const e = await ctl.readExecStarts();
  return {
    host: ctl.host.name,
    unit: ctl.unit,
    operatorExecStart: e.operator,
    execStart: e.inForce,
    dropInPath: e.dropInPath,
    dropIn: e.dropIn,
  };
}

// Deploy through the controller: plan, apply (safe restart), wait ready or fail fast with a verdict.
async function deployConfig(ctl: ServiceController, config: TuneConfig, signal?: AbortSignal): Promise<DeployOutcome> {
  const plan = await ctl.plan(config);
  if (plan.noop) {
    const st = await ctl.status();
    if (st.health.ok) return { ready: true, capacity: await readCapacityOf(ctl), restarts: 0 };
    await ctl.restart('redeploy of an unchanged config that is not healthy');
  } else {
    await ctl.apply(plan, { signal });
  }
  const r = await ctl.waitReady({ signal });
  if (r.status === 'ready') return { ready: true, capacity: await readCapacityOf(ctl), restarts: RESTARTS_PER_DEPLOY };
  return { ready: false, reason: r.reason, verdict: r.verdict, restarts: RESTARTS_PER_DEPLOY };
}

// The host's clock as `journalctl --since` takes it ("@1733312345"), so a later read covers the deploy from its start.
async function hostSince(ctl: ServiceController): Promise<string | null> {
  const r = await ctl.host.exec(['date', '+%s'], { timeoutMs: 30_000 }).catch(() => null);
  const s = r?.exitCode === 0 ? r.stdout.trim() : '';
  return /^\d+$/.test(s) ? `@${Number(s) - 1}` : null;
}

// The verdict on a deployed lifetime that died under the benchmark: the unit's journal since the deploy, the latest
// failure in it (not the last lifetime: systemd may have restarted the engine since).
async function diagnoseSince(ctl: ServiceController, since: string, actionLog?: ActionLog): Promise<Verdict | null> {
  try {
    const actions = actionLog ? await actionLog.read({ unit: ctl.unit }) : [];
    return (await diagnoseUnit(ctl.host, { unit: ctl.unit, since, engine: ctl.engine, actions })).verdict;
  } catch {
    return null;
  }
}

// The service port over a controller (the action log, when given, attributes stops in a diagnosis).
export function createControllerServicePort(ctl: ServiceController, actionLog?: ActionLog): TuneServicePort {
  /** The main PID of the service when the last deploy was ready (null: not known). */
  let readyPid: number | null = null;
  /** The host time the last deploy began (null: not known), where a diagnosis of its lifetime starts reading. */
  let deploySince: string | null = null;
  return {
    readConfig: async (keys) => pickConfig(await ctl.currentSettings(), keys),
    async waitHealthy(signal) {
      const st = await ctl.status();
      if (st.health.ok) return { healthy: true, capacity: await readCapacityOf(ctl), reason: 'healthy' };
      if (st.state.activeState !== 'active' && st.state.activeState !== 'activating') {
        return { healthy: false, capacity: null, reason: `unit is ${st.state.activeState}/${st.state.subState}` };
      }
      const r = await ctl.waitReady({ signal });
      if (r.status === 'ready') return { healthy: true, capacity: await readCapacityOf(ctl), reason: 'ready' };
      return { healthy: false, capacity: null, reason: r.reason };
    },
    async deploy(config, _why, signal) {
      readyPid = null;
      deploySince = await hostSince(ctl);
      const out = await deployConfig(ctl, config, signal);
      if (out.ready) readyPid = (await ctl.status()).state.mainPid;
      return out;
    },
    async stayedUp() {
      const st = await ctl.status();
      return readyPid !== null && st.state.activeState === 'active' && st.state.mainPid === readyPid && st.health.ok;
    },
    async diagnoseDeath() {
      return deploySince ? diagnoseSince(ctl, deploySince, actionLog) : null;
    },
    async recover() {
      await ctl.stopLoop('stop the failing config before rolling back');
      await ctl.rollback();
    },
    markGood: async () => {
      await ctl.markGood();
    },
    async readEndState(keys) {
      const st = await ctl.status();
      return { settings: pickConfig(st.settings, keys), healthy: st.health.ok, units: [await readUnitSnapshot(ctl)] };
    },
    async describeDeployed() {
      const st = await ctl.status();
      const path = dropInPath(st.unit);
      const dropIn = st.dropIn ? await ctl.host.readFile(path).catch(() => null) : null;
      const head = dropIn
        ? [`# ${st.host}:${path}`, dropIn.trimEnd(), '']
        : [`# ${st.host} ${st.unit}: the operator's unit, no spectune drop-in`];
      return [...head, `# ExecStart in force:`, `ExecStart=${st.execStart ?? '(unknown)'}`].join('\n');
    },
  };
}
