// Runs one of checkpoint's binaries from the platform package npm installed next to this one
// (an optional dependency chosen by `os`/`cpu`/`libc`, as biome and esbuild do): the launchers in
// ../bin call `run(name)`. The binary gets this process's arguments, standard streams and
// environment; its exit status (or the signal that ended it) becomes this process's, and
// SIGINT/SIGTERM/SIGHUP sent to this process are passed on to it.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const NAME = require('../package.json').name;

function isMusl() {
  if (process.platform !== 'linux') return false;
  try {
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

// The platform packages that can run here, the likeliest first.
function candidates() {
  const base = `${NAME}-${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return [base];
  return isMusl() ? [`${base}-musl`, `${base}-gnu`] : [`${base}-gnu`, `${base}-musl`];
}

function binaryPath(name) {
  const tried = candidates();
  for (const pkg of tried) {
    let manifest;
    try {
      manifest = require.resolve(`${pkg}/package.json`);
    } catch {
      continue;
    }
    const file = path.join(path.dirname(manifest), 'bin', name);
    if (fs.existsSync(file)) return file;
  }
  process.stderr.write(
    `${name}: no binary for ${process.platform}-${process.arch}: none of ${tried.join(', ')} ` +
      `is installed (npm installs the matching one as an optional dependency of ${NAME}: ` +
      `was it installed with --omit=optional, or from a tarball without the platform's?)\n`,
  );
  process.exit(1);
}

function run(name) {
  const child = spawn(binaryPath(name), process.argv.slice(2), { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`${name}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const s of signals) process.removeListener(s, forward);
    if (signal) {
      process.kill(process.pid, signal);
      // A signal Node ignores (SIGPIPE): the shell's status for it.
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code);
  });
}

module.exports = { run };
