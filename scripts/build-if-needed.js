// `npm start` builds first when dist/ is missing or older than the sources, so that
// `npm install && npm start` works on a fresh clone.
const fs = require('node:fs');
const path = require('node:path');
const { build } = require('./build');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist', 'src', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, item.name);
    if (item.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (item.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

const built = fs.existsSync(entry) ? fs.statSync(entry).mtimeMs : 0;
const sources = Math.max(
  newestSource(path.join(root, 'src')),
  newestSource(path.join(root, 'compat')),
);
if (built < sources) {
  process.stdout.write('Building (dist/ is missing or stale)...\n');
  build();
}
