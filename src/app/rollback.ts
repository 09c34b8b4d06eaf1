// `spectune rollback`: return to the last known-good drop-in (or none), restart, verify readiness.
import type { EventSink } from '../events.js';
import type { ServiceJson } from './apply.js';
import { openService, type ServiceTarget } from './service-target.js';

// Roll back and report the config now in force; throws E_ROLLBACK_FAILED when even that start fails (or misses
// its start-up deadline, readyTimeoutMs, default the controller's).
export async function rollbackService(target: ServiceTarget, onEvent: EventSink, opts: { readyTimeoutMs?: number } = {}): Promise<ServiceJson & { version: string | number }> {
  const svc = await openService(target, onEvent);
  try {
    const r = await svc.controller.rollback({ readyTimeoutMs: opts.readyTimeoutMs });
    const config = await svc.controller.currentSettings();
    return { status: 'rolled_back', config, verdict: null, timeToVerdictMs: null, version: r.version };
  } finally {
    await svc.close();
  }
}
