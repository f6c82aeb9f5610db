// Compiles src/, compat/, scripts/ and bench/ into a fresh dist/: the old dist/ goes first, so
// that a file moved or deleted in the sources cannot be loaded from a stale copy (a stale
// dist/compat/http.js would shadow dist/compat/http/index.js).
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');

function build() {
  fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
}

module.exports = { build };

if (require.main === module) build();
