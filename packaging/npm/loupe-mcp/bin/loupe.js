#!/usr/bin/env node
// loupe-mcp's launcher: runs the `loupe` binary that npm installed for this platform as one of
// the package's optional dependencies (one package per platform, as esbuild and biome ship).
// Nothing is downloaded at install time or at run time. Signals are passed on, so a client
// that stops the server (SIGTERM after closing stdin) stops loupe itself, which then keeps the
// index it built.
"use strict";

const { spawn } = require("child_process");

const PACKAGES = {
  "linux x64": "loupe-mcp-linux-x64",
  "linux arm64": "loupe-mcp-linux-arm64",
  "darwin x64": "loupe-mcp-darwin-x64",
  "darwin arm64": "loupe-mcp-darwin-arm64",
  "win32 x64": "loupe-mcp-win32-x64",
};

function fail(message) {
  process.stderr.write(`loupe-mcp: ${message}\n`);
  process.exit(1);
}

const platform = `${process.platform} ${process.arch}`;
const name = PACKAGES[platform];
if (!name) {
  fail(`no loupe binary is published for ${platform}; supported: ${Object.keys(PACKAGES).join(", ")}`);
}
let binary;
try {
  binary = require.resolve(`${name}/bin/loupe${process.platform === "win32" ? ".exe" : ""}`);
} catch {
  fail(
    `the package ${name} is not installed; npm installs it as an optional dependency ` +
      `(reinstall without --omit=optional or --no-optional)`,
  );
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
