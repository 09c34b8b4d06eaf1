// Finding and reading simulator profiles: the shipped ones in profiles/ or any JSON file (I/O).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolError } from '../errors.js';
import { validateProfile, type SimProfile } from './profile.js';

/** The profile used when --sim-profile is absent: the seed's 122B MoE on two nodes. */
export const DEFAULT_PROFILE = 'qwen3.5-122b-a10b-2node';

// The package's profiles/ folder (two levels up from both src/sim and dist/sim).
export function profilesDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'profiles');
}

// Names of the shipped profiles (file names without .json), sorted.
export function listProfiles(): string[] {
  return readdirSync(profilesDir())
    .filter((f) => f.endsWith('.json') && f !== 'profile.schema.json')
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

// Load a shipped profile by name, or a profile file by path; throws a coded error naming every invalid field.
export function loadProfile(nameOrPath: string = DEFAULT_PROFILE): SimProfile {
  const isPath = nameOrPath.includes('/') || nameOrPath.endsWith('.json');
  const file = isPath ? resolve(nameOrPath) : join(profilesDir(), `${nameOrPath}.json`);
  if (!existsSync(file)) {
    throw new ToolError('E_FILE_NOT_FOUND', `simulator profile not found: ${nameOrPath}`, {
      hint: `shipped profiles: ${listProfiles().join(', ')}`,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ToolError('E_CONFIG_INVALID', `${file}: not valid JSON: ${(e as Error).message}`);
  }
  const r = validateProfile(json);
  if (!r.ok)
    throw new ToolError('E_CONFIG_INVALID', `${file}: invalid profile: ${r.errors.join('; ')}`, {
      hint: 'see docs/sim.md and profiles/profile.schema.json',
    });
  return r.profile;
}
