// The commit-confirmed lease, as network gear does "commit confirmed": a candidate runs from a runtime drop-in
// (/run, forgotten by a reboot) and a transient systemd timer on the host puts the known-good config back unless
// spectune keeps renewing the lease. If spectune dies in any way (SIGKILL, network gone, laptop asleep), the host
// is back on known-good within the lease, with no `--resume`, and says so in its journal.
import { hostname } from 'node:os';
import { expectOk } from '../host/command-result.js';
import type { Host } from '../host/types.js';
import { dropInPath, DROPIN_NAME, statePaths } from './unit.js';

/** Default lease: long enough to ride out a short network cut, short enough that a dead run is undone quickly. */
export const DEFAULT_LEASE_MS = 5 * 60_000;
/** The lease is renewed this many times per lease length (a missed renewal or two is harmless). */
const RENEWALS_PER_LEASE = 5;
/** How often the host-side timer looks at the lease (seconds). */
const CHECK_EVERY_SEC = 5;
/** Lease commands are quick; a host that does not answer in this time is treated as unreachable. */
const LEASE_COMMAND_TIMEOUT_MS = 30_000;

/** The candidate drop-in's name: it sorts after DROPIN_NAME ('t' > 'c') and so wins over the known-good one. */
export const TRIAL_DROPIN_NAME = DROPIN_NAME.replace(/\.conf$/, '.trial.conf');
/** Runtime unit directory: systemd reads drop-ins there, and a reboot empties it. */
const RUNTIME_UNIT_DIR = '/run/systemd/system';
/** Runtime state of spectune's leases (gone at reboot, like the candidate it guards). */
const RUNTIME_STATE_DIR = '/run/spectune';

/** A lease's length and how it is renewed; passed to the controller when the host runs a real systemd. */
export interface LeaseOptions {
  ms: number;
}

/** Every path one unit's lease uses on its host. */
export interface LeasePaths {
  /** The candidate drop-in (runtime). */
  trial: string;
  /** The lease file: line 1 the lease in seconds, renewed by touching it (its mtime is the host's clock). */
  lease: string;
  /** The script the timer runs. */
  script: string;
  /** Marker next to the history: "version N runs provisionally" (survives a reboot, unlike the trial file). */
  provisional: string;
  /** The transient timer unit (and its service) on the host. */
  timerUnit: string;
}

/** Paths of a unit's lease. */
export function leasePaths(unit: string): LeasePaths {
  const st = statePaths(unit);
  const base = unit.replace(/\.service$/, '').replace(/[^A-Za-z0-9:_.-]/g, '_');
  return {
    trial: `${RUNTIME_UNIT_DIR}/${unit}.d/${TRIAL_DROPIN_NAME}`,
    lease: `${RUNTIME_STATE_DIR}/${unit}/lease`,
    script: `${st.dir}/lease-expire.sh`,
    provisional: `${st.dir}/provisional`,
    timerUnit: `spectune-lease-${base}`,
  };
}

// Quote a word for POSIX sh (single quotes; an embedded quote closes, escapes and reopens).
function shWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The lease script (pure): nothing happens while the lease file was touched within its lease; once it lapses the
 * candidate drop-in goes, systemd reloads, the unit restarts on known-good, the dead run's stale lock is removed
 * and one line goes to the journal. The unit name is validated before it gets here; every path is quoted anyway. */
export function renderLeaseScript(unit: string): string {
  const p = leasePaths(unit);
  const st = statePaths(unit);
  return `#!/bin/sh
# spectune commit-confirmed lease for ${unit}: run by the transient timer ${p.timerUnit}.timer every ${CHECK_EVERY_SEC} s.
# While spectune renews the lease (touches the lease file) nothing happens. When it stops (it died, lost the network,
# the laptop slept) the candidate drop-in is removed and the unit restarted on its known-good config.
set -u
unit=${shWord(unit)}
lease=${shWord(p.lease)}
trial=${shWord(p.trial)}
etc=${shWord(dropInPath(unit))}
state=${shWord(st.dir)}
timer=${shWord(`${p.timerUnit}.timer`)}
now=$(date +%s)
if [ -f "$lease" ]; then
  secs=$(sed -n 1p "$lease"); case "$secs" in ''|*[!0-9]*) secs=0;; esac
  touched=$(stat -c %Y "$lease" 2>/dev/null || echo 0)
  [ "$now" -lt $((touched + secs)) ] && exit 0
fi
good=$(cat "$state/good" 2>/dev/null || echo none)
prov=$(cat "$state/provisional" 2>/dev/null)
if [ ! -e "$trial" ] && [ -n "$prov" ] && cmp -s "$state/dropins/$prov.conf" "$etc"; then
  # spectune died confirming a measured candidate after its move to /etc (the commit point): finish the confirm
  for m in good current; do printf '%s\\n' "$prov" > "$state/$m.tmp" && mv -f "$state/$m.tmp" "$state/$m"; done
  rm -f "$state/provisional"
  echo "spectune lease of $unit expired while version $prov was being confirmed (already in /etc): marked known-good"
elif [ -e "$trial" ]; then
  rm -f "$trial"
  # /etc back to the kept known-good version too (a confirm cut short may have written the candidate there)
  if [ "$good" = none ]; then rm -f "$etc"
  elif [ -f "$state/dropins/$good.conf" ] && ! cmp -s "$state/dropins/$good.conf" "$etc"; then
    mkdir -p "\${etc%/*}" && cp -p "$state/dropins/$good.conf" "$etc.spectune-tmp" && mv -f "$etc.spectune-tmp" "$etc"
  fi
  systemctl daemon-reload
  printf '%s\\n' "$good" > "$state/current.tmp" && mv -f "$state/current.tmp" "$state/current"
  rm -f "$state/provisional"
  systemctl restart --no-block "$unit"
  echo "spectune lease of $unit expired (not renewed since $(date -d @"\${touched:-0}" '+%F %T' 2>/dev/null)): candidate drop-in removed, restarting on known-good version $good"
fi
# The host lock of the run that stopped renewing (its owner is on line 2 of the lease file); another run's lock stays.
owner=$(sed -n 2p "$lease" 2>/dev/null)
if [ -n "$owner" ] && [ -f "$state/lock" ] && grep -qF -- "$owner" "$state/lock"; then
  rm -f "$state/lock"; echo "spectune lease of $unit: removed the lock of the run that stopped renewing ($owner)"
fi
rm -f "$lease"
systemctl stop --no-block "$timer"
`;
}

/** The commands arming a lease performs, in order, for plans and dry runs. */
export function leaseSteps(unit: string, lease: LeaseOptions): string[] {
  const p = leasePaths(unit);
  const min = Math.round(lease.ms / 6000) / 10;
  return [
    `write ${p.script} and ${p.lease} (lease ${min} min)`,
    `systemd-run --unit=${p.timerUnit} --on-active=${CHECK_EVERY_SEC}s --on-unit-active=${CHECK_EVERY_SEC}s /bin/sh ${p.script}  # restores known-good unless spectune renews the lease`,
  ];
}

/** This process as its host lock record spells its owner (`"machine":"m","pid":1}`), so the script can tell its lock from another run's. */
export function leaseOwner(machine = hostname(), pid = process.pid): string {
  return JSON.stringify({ machine, pid }).slice(1); // the closing brace: pid 424 must not match 4242
}

// Arm (or re-arm) the lease on the host: script, lease file, and the timer (kept when one already runs).
export async function armLease(host: Host, unit: string, lease: LeaseOptions): Promise<void> {
  const p = leasePaths(unit);
  await host.writeFile(p.script, renderLeaseScript(unit), { mode: 0o700 });
  await host.writeFile(p.lease, `${Math.max(1, Math.ceil(lease.ms / 1000))}\n${leaseOwner()}\n`, { mode: 0o600 });
  const active = await host.exec(['systemctl', 'is-active', '--quiet', `${p.timerUnit}.timer`], {
    timeoutMs: LEASE_COMMAND_TIMEOUT_MS,
  });
  if (active.exitCode === 0) return;
  await host.exec(['systemctl', 'reset-failed', `${p.timerUnit}.timer`, `${p.timerUnit}.service`], {
    timeoutMs: LEASE_COMMAND_TIMEOUT_MS,
  });
  expectOk(
    await host.exec(
      [
        'systemd-run',
        '--quiet',
        `--unit=${p.timerUnit}`,
        `--description=spectune lease of ${unit}`,
        `--on-active=${CHECK_EVERY_SEC}s`,
        `--on-unit-active=${CHECK_EVERY_SEC}s`,
        '--timer-property=AccuracySec=1s',
        '--property=SyslogIdentifier=spectune-lease',
        '/bin/sh',
        p.script,
      ],
      { timeoutMs: LEASE_COMMAND_TIMEOUT_MS },
    ),
  );
}

// Renew the lease: touch the lease file (never creating it: a lapsed lease stays lapsed).
export async function renewLease(host: Host, unit: string): Promise<boolean> {
  const r = await host.exec(['touch', '-c', '--', leasePaths(unit).lease], { timeoutMs: LEASE_COMMAND_TIMEOUT_MS });
  return r.exitCode === 0;
}

// Release the lease (the candidate was confirmed or rolled back): the lease file goes, the timer stops.
// `ownOnly`: only while the lease file still names this process (another run may have taken the unit since).
export async function releaseLease(host: Host, unit: string, o: { ownOnly?: boolean } = {}): Promise<void> {
  const p = leasePaths(unit);
  if (o.ownOnly) {
    const r = await host.exec(['sed', '-n', '2p', '--', p.lease], { timeoutMs: LEASE_COMMAND_TIMEOUT_MS });
    if (r.exitCode !== 0 || r.stdout.trim() !== leaseOwner()) return;
  }
  expectOk(await host.exec(['rm', '-f', '--', p.lease], { timeoutMs: LEASE_COMMAND_TIMEOUT_MS }));
  await host.exec(['systemctl', 'stop', `${p.timerUnit}.timer`], { timeoutMs: LEASE_COMMAND_TIMEOUT_MS });
  await host.exec(['systemctl', 'reset-failed', `${p.timerUnit}.timer`, `${p.timerUnit}.service`], {
    timeoutMs: LEASE_COMMAND_TIMEOUT_MS,
  });
}

// Whether a candidate still runs from /run (provisional, not yet confirmed or rolled back).
export async function hasTrialDropIn(host: Host, unit: string): Promise<boolean> {
  return (
    (await host.exec(['test', '-e', leasePaths(unit).trial], { timeoutMs: LEASE_COMMAND_TIMEOUT_MS })).exitCode === 0
  );
}

/** Renews a lease from this process until stopped; unref'd, so it never keeps spectune alive. */
export interface LeaseRenewer {
  stop(): void;
}

// Start renewing a lease every lease/5 (failures, e.g. a network cut, are retried at the next tick).
export function startRenewing(
  host: Host,
  unit: string,
  lease: LeaseOptions,
  onLapse: (why: string) => void,
): LeaseRenewer {
  let failures = 0;
  const every = Math.max(1000, Math.floor(lease.ms / RENEWALS_PER_LEASE));
  const t = setInterval(() => {
    renewLease(host, unit)
      .then(
        (ok) => {
          failures = ok ? 0 : failures + 1;
        },
        () => {
          failures++;
        },
      )
      .then(() => {
        if (failures === RENEWALS_PER_LEASE)
          onLapse(
            `${host.name}: the lease of ${unit} could not be renewed ${failures} times: the host may have restored known-good`,
          );
      });
  }, every);
  t.unref();
  return { stop: () => clearInterval(t) };
}
