#!/usr/bin/env bash
# The Windows build's tests, cross-compiled on Linux (x86_64-pc-windows-gnu, Debian's mingw-w64)
# and run under wine: `scripts/test-windows.sh [crate ...]` (default: loupe-vfs loupe-engine).
# Not part of CI (a cold build takes tens of minutes); the release workflow runs the same tests
# on a real Windows runner.
#
# Needs: `rustup target add x86_64-pc-windows-gnu`, `apt-get install mingw-w64 wine64`.
#
# wine 8.0 (Debian 12) lacks two things the tests need, so they are handled here:
# - `bcryptprimitives.dll`, whose `ProcessPrng` Rust's std imports: a shim built from
#   scripts/wine/bcryptprimitives.c into this script's own wine prefix.
# - symbolic links: `CreateSymbolicLinkW` answers success and makes nothing, so every test that
#   plants a link fails at its fixture (`loupe_vfs::testing::symlink` says "this system made no
#   symbolic link"). Those tests are skipped by name below; they run on the Windows runner.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
for tool in x86_64-w64-mingw32-gcc wine; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install mingw-w64 wine64" >&2; exit 2; }
done
rustup target list --installed | grep -qx "$target" || rustup target add "$target"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/windows}"
export WINEPREFIX="${WINEPREFIX:-$PWD/$CARGO_TARGET_DIR/wine-prefix}"
export WINEDEBUG=-all
mkdir -p "$WINEPREFIX"
if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
    wineboot --init >/dev/null 2>&1 || true
    x86_64-w64-mingw32-gcc -O2 -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
        scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -ladvapi32
fi
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
# A snapshot that differs fails the test; nothing is written beside it.
export INSTA_UPDATE=no
# insta finds the snapshots from the workspace root; the build's own path means nothing to wine.
export INSTA_WORKSPACE_ROOT="$PWD"

# Tests whose fixtures plant symbolic links (see above), or FIFOs and sockets (Unix only, and
# compiled out on Windows already).
skips=(
    accepted_spellings_resolve_to_the_same_file
    escapes_are_refused
    exclusions_apply_to_the_symlink_target_too
    ignore_rules_nest_and_negate
    read_refuses_directories_missing_and_large_files
    sibling_names_skip_excluded_entries
    read_indexed_refuses_what_resolve_refuses
    walk_honours_ignores_exclusions_size_and_symlinks
    loupes_config_files_are_not_writable
    r1_create_missing_dirs_through_symlink_to_git_is_refused
    r1_create_through_symlink_to_git_is_refused
    r1_r3_a_directory_swapped_for_a_link_to_git_is_refused
    r3_create_and_delete_after_swap_never_touch_the_outside
    r3_read_after_swap_never_returns_outside_bytes
    r3_undo_never_writes_through_a_link_swapped_in
    r3_write_after_swap_before_open_is_refused
    symlinks_inside_the_root_still_read_and_write
    symlinks_and_escapes_are_never_written
    h8_a_rollback_that_cannot_reach_a_file_names_it
    r12_recovery_removes_the_temp_files_a_killed_edit_left_and_only_those
)
# loupe-engine: tests whose fixtures plant a link (as above), and tests whose fixtures run
# `git` (there is no git for Windows in this wine prefix; the Windows runner has one).
skips+=(
    fuzz_edit_planner_and_applier
    edit_cases::symlinks_are_never_written
    read_cases::read_cases
    r9_repository_config_is_not_read_through_a_link_or_a_fifo
    ceilings::r8_a_long_line_is_bounded_in_every_field
    ceilings::r8_cut_diff_preview_continues_without_content
    ceilings::r8_directory_diff_preview_is_bounded
    ceilings::r8_edit_reply_is_bounded
    ceilings::r8_errors_quote_a_long_argument_bounded
    ceilings::r8_outlines_and_symbol_reads_are_bounded
    contract_edges::a_diff_preview_cut_by_a_ceiling_is_degraded_and_continues_by_cursor
    contract_edges::a_directory_diff_cut_by_the_ceiling_is_degraded
    contract_edges::every_emitted_reason_code_is_in_the_registry
    diff_preview_cases::
    diff_preview_secrets::
    git_links::
    hostile_names::h2_file_names_cannot_forge_loupe_lines_in_search_outline_or_diff_preview
    legacy_cases::
    progress_cases::a_directory_diff_preview_reports_each_file_and_a_cancel_answers_the_changes_found
    progress_cases::h7_a_call_past_its_time_budget_answers_what_it_has_cut
    structured_faces::a_program_finds_what_it_acts_on_at_the_top_level
    structured_faces::every_level_carries_the_text_and_full_adds_the_envelope
    structured_faces::the_compact_structured_face_costs_at_most_1_3x_the_text_face_plus_40
)
args=()
for name in "${skips[@]}"; do args+=(--skip "$name"); done

crates=("$@")
[ ${#crates[@]} -gt 0 ] || crates=(loupe-vfs loupe-engine)
packages=()
for crate in "${crates[@]}"; do packages+=(-p "$crate"); done
cargo test --locked --target "$target" "${packages[@]}" -- "${args[@]}"
