// Migration 001: the campaign schema. Embedded as a string so that it ships inside dist/ with no copy step.

/** SQL of migration 001 (never edit once released: add 002 instead). */
export const SQL = `
CREATE TABLE campaigns (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'aborted', 'interrupted')),
  engine TEXT NOT NULL,
  config_json TEXT NOT NULL,
  baseline_json TEXT,
  best_trial_id INTEGER,
  summary TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT
);

CREATE TABLE configs (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  params_json TEXT NOT NULL,
  settings_json TEXT,
  exec_start TEXT,
  dropin TEXT,
  created_at TEXT NOT NULL
);

CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  config_id INTEGER REFERENCES configs(id),
  params_json TEXT NOT NULL,
  purpose TEXT NOT NULL,
  reason TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('planned', 'deploying', 'running', 'measured', 'failed', 'infeasible', 'skipped')),
  objective REAL,
  constraints_ok INTEGER,
  constraint_notes_json TEXT,
  capacity_json TEXT,
  prediction_json TEXT,
  prediction_wrong INTEGER,
  engine_version TEXT,
  error TEXT,
  started_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (campaign_id, seq)
);
CREATE INDEX trials_state ON trials(campaign_id, state);

CREATE TABLE bench_runs (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  concurrency INTEGER NOT NULL,
  run_json TEXT NOT NULL
);
CREATE INDEX bench_runs_trial ON bench_runs(trial_id);

CREATE TABLE samples (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  request_id TEXT NOT NULL,
  concurrency INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  error_phase TEXT,
  error TEXT,
  start_ms REAL NOT NULL,
  ttft_ms REAL,
  e2e_ms REAL,
  output_tokens INTEGER NOT NULL,
  input_tokens INTEGER,
  decode_tokens_per_sec REAL
);
CREATE INDEX samples_trial ON samples(trial_id);

CREATE TABLE engine_metrics (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  ts TEXT NOT NULL,
  phase TEXT NOT NULL,
  metrics_json TEXT NOT NULL
);

CREATE TABLE verdicts (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  class TEXT NOT NULL,
  cause TEXT,
  confidence TEXT NOT NULL,
  summary TEXT NOT NULL,
  evidence_json TEXT NOT NULL,
  verdict_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE actions (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER REFERENCES campaigns(id) ON DELETE CASCADE,
  trial_id INTEGER REFERENCES trials(id) ON DELETE SET NULL,
  ts TEXT NOT NULL,
  action TEXT NOT NULL,
  unit TEXT NOT NULL,
  by TEXT NOT NULL,
  host TEXT,
  why TEXT
);

CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER REFERENCES campaigns(id) ON DELETE CASCADE,
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,
  event_json TEXT NOT NULL
);
CREATE INDEX events_campaign ON events(campaign_id, ts);
`;
