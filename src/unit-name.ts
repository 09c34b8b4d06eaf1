// The one unit-name rule every command and layer uses: a short name gets ".service", anything systemd would not
// accept (or that could be read as an option or a shell word) is refused before it reaches a host.
import { ToolError } from './errors.js';

/** A unit name systemd accepts and that can never be read as an option or a shell word. */
const UNIT_NAME_RE = /^[A-Za-z0-9:_.@-]+\.service$/;
/** Same alphabet, without the suffix (then ".service" is appended). */
const UNIT_STEM_RE = /^[A-Za-z0-9:_.@-]+$/;
/** systemd's own limit on unit name length (UNIT_NAME_MAX). */
const UNIT_NAME_MAX = 256;

// Validate a unit name (appending ".service" when missing): `sglang` and `sglang.service` name the same unit.
export function normalizeUnitName(name: string): string {
  const full = UNIT_STEM_RE.test(name) && !name.endsWith('.service') ? `${name}.service` : name;
  if (!UNIT_NAME_RE.test(full) || full.startsWith('-') || full.length > UNIT_NAME_MAX || full.includes('..')) {
    throw new ToolError(
      'E_UNSAFE_VALUE',
      `refusing unit name ${JSON.stringify(name)}: only letters, digits and ":_.@-" are allowed`,
      {
        hint: 'pass the systemd unit name, e.g. --unit sglang-qwen.service',
      },
    );
  }
  return full;
}
