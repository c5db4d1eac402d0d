// Parses statements with MySQL Workbench's MySQL 8.0 grammar (ts-mysql-parser 0.2.0) at the
// oldest server the MySQL set supports (8.0.1). Input on stdin: one JSON object per line,
// {"name": "...", "sql": "..."} (sql-statements prints them). Prints the statement count and
// each statement the grammar refuses with the parser's error, and exits 1 when any was refused.
// With --expect-failure every statement must be refused (proof that the check can fail).
'use strict';
const fs = require('fs');
const Parser = require('ts-mysql-parser').default;

const kServerVersion = '8.0.1';
const expectFailure = process.argv.includes('--expect-failure');
const parser = new Parser({ version: kServerVersion });

const lines = fs.readFileSync(0, 'utf8').split('\n').filter((line) => line.trim() !== '');
let refused = 0;
let accepted = 0;
for (const line of lines) {
  const { name, sql } = JSON.parse(line);
  const result = parser.parse(sql);
  const error = result.lexerError || result.parserError;
  if (!error) {
    accepted += 1;
    if (expectFailure) console.log(`accepted, but expected to be refused: ${name}\n  ${sql}`);
    continue;
  }
  refused += 1;
  if (!expectFailure) console.log(`refused: ${name}: ${error.message}\n  ${sql}`);
}
console.log(`sqlcheck: ${lines.length} statements parsed with the MySQL ${kServerVersion} ` +
            `grammar: ${accepted} accepted, ${refused} refused`);
const ok = lines.length > 0 && (expectFailure ? accepted === 0 : refused === 0);
process.exit(ok ? 0 : 1);
