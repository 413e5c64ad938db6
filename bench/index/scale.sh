#!/usr/bin/env bash
# Cost against tree size: Linux and Linux ×4 (bench/index/fetch-corpora.sh linux4:
# four real copies, about 350k files and 6 GB on disk), each measured by index_bench --only
# scale: a cold server's first answer, plain ctags -R, the cold build (time, peak RSS, index
# size), warm starts, search through `loupe serve` next to rg -m 20 with the server's stage
# figures, and the watcher's touch-to-searchable. The first table puts each tree against the
# first. Writes bench/results/scale-tree.md. Needs about 15 GB free for the copies and indexes.
#
#   bash bench/index/scale.sh                # linux and linux4
#   bash bench/index/scale.sh django linux   # any corpora, smallest first
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

corpora=("$@")
[[ ${#corpora[@]} -gt 0 ]] || corpora=(linux linux4)
bash "$here/fetch-corpora.sh" "${corpora[@]}"
cargo build --release --quiet -p loupe -p loupe-bench

target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
specs=()
for name in "${corpora[@]}"; do
    specs+=("$name=bench/corpora/index/$name")
done
"$target_dir/release/index_bench" --loupe "$target_dir/release/loupe" --only scale \
    --search-runs "${SEARCH_RUNS:-6}" --rg-runs "${RG_RUNS:-3}" --warm-starts 2 \
    --out bench/results/scale-tree.md \
    --command "bash bench/index/scale.sh ${corpora[*]}" "${specs[@]}"
