// Migration 003: the end state of a campaign — the config the unit runs when the campaign ends and the operator's own
// ExecStart — so a report written later (on another machine) can say what is running and the exact line to keep.

/** SQL of migration 003 (never edit once released: add 004 instead). Additive: older stores open unchanged. */
export const SQL = `
ALTER TABLE campaigns ADD COLUMN end_state_json TEXT;
`;
