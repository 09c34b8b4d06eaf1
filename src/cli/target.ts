// The service commands' target: resolved from flags and spectune.yaml, with a warning on stderr when the config
// names more ranks than the one command acts on.
import { describeOtherHosts, resolveTarget, type ServiceTarget, type TargetFlagValues } from '../app/service-target.js';
import type { CliIo } from './io.js';

// Resolve the target of a single-unit command; `acting` says what it does ("applying to", "showing").
export async function resolveCommandTarget(flags: TargetFlagValues, io: CliIo, acting: string): Promise<ServiceTarget> {
  const target = await resolveTarget(flags, io.env);
  const others = describeOtherHosts(target, acting);
  if (others) io.stderr.write(`spectune: warn: ${others}\n`);
  return target;
}
