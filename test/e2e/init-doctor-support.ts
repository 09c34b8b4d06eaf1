// Units for the init/doctor e2e tests, made from the shared real launch configs: the operator's ExecStart with only
// the program, model paths, port and thread counts changed so that it runs on a test host without a GPU.
//  - SGLang-like: sd-sglang-tianyang's command line, run by `spectune sim` (it speaks SGLang's flags; two flags the
//    simulator does not model are dropped, speculation is added so that there are settings to read).
//  - vLLM-like: sd-vllm-rizkynindra's command line verbatim (`vllm serve MODEL --port ... --speculative-config.method
//    mtp ...`), but its `vllm` program is a small wrapper script installed on the test host that starts `spectune sim`
//    on the same model and port: the simulator does not accept vLLM's flags (src/sim/argv.ts), and no real vLLM
//    runs without a GPU. What init and doctor read — the unit's ExecStart, its journal (uvicorn's `Application
//    startup complete.` is vLLM's ready line too), /health — is what a real vLLM unit gives them.
//  - llama-server: sd-llamacpp-terr0q's command line running the real llama-server built for the e2e suite, with the
//    generated target/draft pair and draft-model speculation on.
import { locateExecStart, type EngineName } from '../../src/engines/index.js';
import { loadLaunchConfigs } from '../unit/engines-launch-configs.helpers.js';
import { DRAFT, HOST_BIN, hostModel, PAIRS } from './llamacpp-support.js';
import type { TestHost } from './helpers/testhosts.js';
import { sshRun } from './tune-support.js';

/** Where the vLLM wrapper script lives on the test host (the unit's program path keeps the original's shape). */
export const VLLM_SHIM = '/opt/spectune-e2e-vllm/GLM-OCR/.venv/bin/vllm';
const VLLM_SHIM_SCRIPT = `#!/bin/sh
# spectune e2e: a vLLM-shaped program that runs the SIMULATED engine (spectune sim) on the model and --port of its
# command line; every other vLLM flag is accepted and ignored (see test/e2e/init-doctor-support.ts).
[ "$1" = serve ] || { echo "usage: vllm serve MODEL [flags]" >&2; exit 2; }
model=$2; shift 2; port=8000
while [ $# -gt 0 ]; do
  case "$1" in --port) port=$2; shift ;; --port=*) port=\${1#--port=} ;; esac
  shift
done
exec /usr/local/bin/node /opt/spectune/bin/spectune.js sim --model-path "$model" --port "$port" --host 0.0.0.0 --sim-profile qwen3-8b-1gpu --sim-time-scale 0.02
`;

// The ExecStart value of a launch config, with textual edits applied in order.
function execStart(id: string, edits: [RegExp, string][]): string {
  const c = loadLaunchConfigs().find((x) => x.id === id);
  if (!c) throw new Error(`launch config ${id} not found`);
  const loc = locateExecStart(c.text);
  if (!loc) throw new Error(`launch config ${id} has no ExecStart`);
  return edits.reduce((s, [re, to]) => {
    if (!re.test(s)) throw new Error(`${id}: edit ${re} matches nothing in ${s}`);
    return s.replace(re, to);
  }, loc.value);
}

/** The three engine units. */
export type EngineKind = EngineName;

// The ExecStart of each kind at a port.
export function engineExecStart(kind: EngineKind, port: number): string {
  if (kind === 'sglang') {
    return execStart('sd-sglang-tianyang', [
      [
        /\/home\/tchen19\/LLM\/\.venv\/bin\/python -m sglang\.launch_server/,
        '/usr/local/bin/node /opt/spectune/bin/spectune.js sim',
      ],
      [/--port 8000/, `--port ${port}`],
      [/^ *--offload-mode cpu \\\n/m, ''],
      [/^ *--checkpoint-engine-wait-weights-before-ready \\\n/m, ''],
      [
        /--log-level info/,
        '--log-level info \\\n  --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 \\\n  --sim-profile qwen3-8b-1gpu --sim-time-scale 0.02',
      ],
    ]);
  }
  if (kind === 'vllm') {
    return execStart('sd-vllm-rizkynindra', [
      [/^\/home\/sysadmin\/GLM-OCR\/\.venv\/bin\/vllm/, VLLM_SHIM],
      [/--port 8001/, `--port ${port}`],
    ]);
  }
  // terr0q's unit continues its ExecStart with a bare backslash; the second line is joined as systemd would need it.
  const c = loadLaunchConfigs().find((x) => x.id === 'sd-llamacpp-terr0q')!;
  const flags = /^\s*(--port .*)$/m.exec(c.text)![1];
  return `${execStart('sd-llamacpp-terr0q', [
    [/^\/home\/user\/llama\.cpp\/build\/bin\/llama-server/, HOST_BIN],
    [/-m \/home\/user\/llama\.models\/\S+/, `-m ${hostModel(PAIRS.perfect.target)}`],
  ])} ${flags
    .replace('--port 11434', `--port ${port}`)
    .replace('-c 8096', '-c 2048')
    .replace(
      '--threads 6',
      '--threads 1',
    )} -np 1 -md ${hostModel(DRAFT)} --spec-type draft-simple --spec-draft-n-max 4`;
}

// A unit file around an ExecStart.
export function renderEngineUnit(unit: string, exec: string, timeoutStopSec: number): string {
  return [
    '[Unit]',
    `Description=${unit}: spectune init/doctor e2e`,
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${exec}`,
    'Restart=on-failure',
    'RestartSec=1',
    `TimeoutStopSec=${timeoutStopSec}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// Install (fresh) and start a unit; the vLLM wrapper is installed first when needed.
export function installEngineUnit(
  h: TestHost,
  unit: string,
  kind: EngineKind,
  port: number,
  timeoutStopSec: number,
): void {
  removeEngineUnit(h, unit);
  if (kind === 'vllm')
    sshRun(
      h,
      `mkdir -p ${VLLM_SHIM.replace(/\/[^/]+$/, '')} && cat > ${VLLM_SHIM} && chmod 755 ${VLLM_SHIM}`,
      VLLM_SHIM_SCRIPT,
    );
  sshRun(h, `cat > /etc/systemd/system/${unit}`, renderEngineUnit(unit, engineExecStart(kind, port), timeoutStopSec));
  sshRun(h, `systemctl daemon-reload && systemctl start ${unit}`);
}

// Stop and remove a unit with any drop-in and spectune state.
export function removeEngineUnit(h: TestHost, unit: string): void {
  sshRun(
    h,
    `systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit} /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; systemctl daemon-reload; systemctl reset-failed ${unit} 2>/dev/null; true`,
  );
}
