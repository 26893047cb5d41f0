// Runs a GOOS=wasip1 GOARCH=wasm program under Node.js's WASI:
// node --no-turbo-fast-api-calls wasi_node.js PROG.wasm ARGS... (written
// out by internal/harness Target.ExecArgs). The whole file system is
// preopened at / and PWD is the working directory, so the program's
// relative and absolute paths mean what they mean to the caller.
'use strict';
const { WASI } = require('node:wasi');
const fs = require('node:fs');
const [wasm, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: [wasm, ...args],
  env: { ...process.env, PWD: process.cwd() },
  preopens: { '/': '/' },
  returnOnExit: true,
});
const inst = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(wasm)), wasi.getImportObject());
globalThis.cuvilWASI = wasi; // kept reachable while it runs
process.exitCode = wasi.start(inst);
