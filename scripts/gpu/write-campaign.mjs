#!/usr/bin/env node
// Write one campaign of the GPU recipe: the llama-server unit under the process manager's root and spectune.yaml.
// Usage: node scripts/gpu/write-campaign.mjs --dir DIR --name NAME --server BIN --target GGUF --draft GGUF
//   --port N --strategy adaptive|grid [--values 1,2,4,8,16] [--start 4] [--ngl 99] [--ctx 65536] [--parallel 64]
//   [--concurrency 1,4,16,64] [--requests 12,16,32,64] [--input-tokens 256] [--output-tokens 128]
//   [--nospec nospec.json --floors 16:0.9,64:0.8] [--metrics on|off] [--env K=V]...
// With --nospec (a `spectune bench --json` of the same target without speculation) each level named in --floors gets
// a constraint: output tok/s >= floor x the no-speculation figure at that level.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : def;
};
const all = (name) => argv.flatMap((a, i) => (a === `--${name}` ? [argv[i + 1]] : []));
const list = (s) => s.split(',').map(Number);
const need = (name) => {
  const v = arg(name);
  if (!v) {
    console.error(`write-campaign: --${name} is required`);
    process.exit(2);
  }
  return v;
};

const dir = need('dir');
const name = need('name');
const unit = `llama-${name}.service`;
const port = Number(need('port'));
const concurrency = list(arg('concurrency', '1,4,16,64'));
const requests = list(arg('requests', '12,16,32,64'));
const values = list(arg('values', '1,2,4,8,16'));
const argvServer = [
  need('server'),
  '-m',
  need('target'),
  '-md',
  need('draft'),
  '--spec-type',
  'draft-simple',
  '--spec-draft-n-max',
  arg('start', '4'),
  '-ngl',
  arg('ngl', '99'),
  '-ngld',
  arg('ngl', '99'),
  '-c',
  arg('ctx', '65536'),
  '-np',
  arg('parallel', '64'),
  ...(arg('threads') ? ['-t', arg('threads')] : []),
  '--host',
  '127.0.0.1',
  '--port',
  String(port),
  ...(arg('metrics', 'on') === 'on' ? ['--metrics'] : []),
];
const quote = (w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `"${w.replace(/["\\]/g, '\\$&')}"`);
const env = all('env').map((kv) => `Environment=${quote(kv)}`);
const unitText = [
  '[Unit]',
  `Description=llama-server ${name} (spectune GPU campaign)`,
  '',
  '[Service]',
  ...env,
  `ExecStart=${argvServer.map(quote).join(' ')}`,
  'Restart=on-failure',
  'RestartSec=2',
  'TimeoutStopSec=30',
  '',
].join('\n');
mkdirSync(join(dir, 'procman/etc/systemd/system'), { recursive: true });
writeFileSync(join(dir, 'procman/etc/systemd/system', unit), unitText);

const constraints = [];
const nospecFile = arg('nospec');
if (nospecFile) {
  const floors = Object.fromEntries(
    arg('floors', '16:0.9,64:0.8')
      .split(',')
      .map((kv) => kv.split(':').map(Number)),
  );
  const runs = JSON.parse(readFileSync(nospecFile, 'utf8')).runs;
  for (const r of runs.filter((x) => floors[x.concurrency] !== undefined && concurrency.includes(x.concurrency))) {
    constraints.push({
      metric: 'outputTokensPerSec',
      concurrency: r.concurrency,
      op: '>=',
      value: Math.round(r.outputTokensPerSec * floors[r.concurrency] * 10) / 10,
    });
  }
}
const config = {
  target: {
    engine: 'llamacpp',
    endpoint: `http://127.0.0.1:${port}`,
    manager: 'process',
    processDir: './procman',
    hosts: [{ unit }],
  },
  space: { spec_draft_n_max: { values } },
  search: { strategy: arg('strategy', 'adaptive'), noiseMargin: '3%', repeats: 2, soak: { repeats: 1 } },
  objective: { metric: 'decodeTokensPerSec.mean', concurrency: 1 },
  constraints,
  benchmark: {
    concurrency,
    requests,
    inputTokens: Number(arg('input-tokens', '256')),
    outputTokens: Number(arg('output-tokens', '128')),
    warmup: 2,
    timeouts: { ready: arg('ready', '5m'), firstToken: '120s', stall: '60s' },
  },
  budget: { trials: Number(arg('trials', '12')), hours: arg('hours', '30m') },
  store: './store.db',
};
writeFileSync(
  join(dir, 'spectune.yaml'),
  `# spectune GPU campaign ${name} (written by scripts/gpu/write-campaign.mjs)\n${JSON.stringify(config, null, 2)}\n`,
);
console.log(JSON.stringify({ dir, unit, constraints }));
