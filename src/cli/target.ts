// The service commands' target: resolved from flags and spectune.yaml (every rank of a multi-host target, or the one
// --rank/--host/--unit picks).
import { resolveTarget, type ServiceTarget, type TargetFlagValues } from '../app/service-target.js';
import type { CliIo } from './io.js';

// Resolve the target of a service command.
export async function resolveCommandTarget(flags: TargetFlagValues, io: CliIo): Promise<ServiceTarget> {
  return resolveTarget(flags, io.env);
}
