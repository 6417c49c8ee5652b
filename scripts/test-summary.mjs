#!/usr/bin/env node
// Prints one closing line for the tiers CI ran ("tests: N passed, N failed,
// N skipped"), from the JSON reports vitest wrote. Exits 1 when a report is
// missing, a test failed, or none ran, so CI can never pass on nothing.
// Usage: node scripts/test-summary.mjs test-results/unit.json test-results/e2e.json
import { readFileSync } from 'node:fs';

let passed = 0, failed = 0, skipped = 0, missing = 0;
for (const file of process.argv.slice(2)) {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += report.numPendingTests + report.numTodoTests;
  } catch (err) {
    console.error(`no test report at ${file}: ${err.message}`);
    missing++;
  }
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(missing > 0 || failed > 0 || passed === 0 ? 1 : 0);
