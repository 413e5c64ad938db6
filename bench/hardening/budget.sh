#!/usr/bin/env bash
# Work without a bound (hardening H7), measured on a release build: each case as a user runs it,
# under /usr/bin/time with a wall-clock cap. Prints one markdown row per case: time to answer,
# peak RSS, the answer's first line. The trees are made by this script under $WORK (default
# /tmp/w/h7): a 5.4 MB one-line minified JS file (125,000 functions calling `target`), a
# 20 MB file of 10 million lines, and a repository with a million untracked empty files.
#
# The analyze case raises the index's file limit so the 5.4 MB file is indexed, as the finding had it.
#
# Usage: bash bench/hardening/budget.sh path/to/loupe [cap-seconds]
set -euo pipefail
LOUPE=${1:?path to a release loupe}
CAP=${2:-200}
WORK=${WORK:-/tmp/w/h7}
mkdir -p "$WORK"
cd "$WORK"
if [ ! -f js/min.js ]; then
  mkdir -p js && (cd js && git init -q)
  python3 -c "
parts=['function target(a){return a+1};']+[f'function f{i}(a){{return target(a)+{i}}};' for i in range(125000)]
open('js/min.js','w').write(''.join(parts)+'\n')"
fi
if [ ! -f lines/big.txt ]; then
  mkdir -p lines && (cd lines && git init -q)
  python3 -c "open('lines/big.txt','w').write('a\n'*10_000_000)"
fi
if [ ! -d untracked/u ]; then
  mkdir -p untracked && (cd untracked && git init -q && echo base > a.txt && git add a.txt &&
    git -c user.email=b@e -c user.name=b commit -qm base)
  python3 -c "
import os
for d in range(1000):
    os.makedirs(f'untracked/u/{d:03d}', exist_ok=True)
    for i in range(1000):
        os.close(os.open(f'untracked/u/{d:03d}/f{i}.txt', os.O_CREAT|os.O_WRONLY, 0o644))"
fi
printf '{"edits":[{"path":"big.txt","operation":"replace","old_string":"a","new_string":"b","replace_all":true}],"dry_run":true}' > edit.json
run() {
  local root=$1; shift
  local start end out
  start=$(date +%s.%N)
  out=$(XDG_CACHE_HOME="$WORK/cache" LOUPE_ANALYTICS=false timeout "$CAP" /usr/bin/time -f '%M' \
        "$LOUPE" "$@" --root "$root" 2>"$WORK/time.err" | head -1) || true
  end=$(date +%s.%N)
  local rss; rss=$(tail -1 "$WORK/time.err")
  printf '| `%s` | %.2f s | %s MB | `%s` |\n' "$*" "$(echo "$end - $start" | bc)" "$((${rss:-0} / 1024))" "${out:0:100}"
}
echo "| call | time | peak RSS | first line |"
echo "|---|---|---|---|"
run js analyze --mode calls --direction upstream target --max-index-file-bytes 8388608
run js read --mode outline min.js
run lines edit "$WORK/edit.json"
run untracked read --mode diff_preview .
