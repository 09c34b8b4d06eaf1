#!/usr/bin/env node
// The bin only runs the CLI and sets the exit code; all logic lives in dist/.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdin: process.stdin,
});
