//! Unified diffs of two texts: histogram line diff (imara-diff), rendered with `@@` hunks.
//!
//! Lines are compared with their terminators, so a changed line ending is a change; the
//! rendering shows lines without terminators and marks a last line that has none with
//! `\ No newline at end of file`, as git does.

use imara_diff::{Algorithm, Diff, InternedInput, Interner};

/// A rendered diff and its counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnifiedDiff {
    /// The `---`/`+++` header and every hunk; empty when the texts are equal.
    pub text: String,
    pub added: usize,
    pub removed: usize,
    /// Hunks a `keep` predicate left out (`unified_diff_kept`).
    pub left_out: usize,
}

/// Diffs `old` against `new` with `context` lines around each change. `old_label` and
/// `new_label` go on the `---` and `+++` lines (`/dev/null` for a missing side).
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str, context: usize) -> UnifiedDiff {
    unified_diff_at(old, new, (old_label, new_label), context, (1, 1))
}

/// `unified_diff` of two excerpts whose first lines are lines `first_lines` (1-based) of their
/// files: the hunk headers count in the files' lines (a symbol's diff).
pub fn unified_diff_at(
    old: &str,
    new: &str,
    labels: (&str, &str),
    context: usize,
    first_lines: (usize, usize),
) -> UnifiedDiff {
    unified_diff_kept(old, new, labels, context, first_lines, &|_, _| true)
}

/// `unified_diff_at` with only the hunks `keep` accepts, given the file lines each removes and
/// adds (a type's diff without its members' hunks); the counts are the kept hunks'.
pub fn unified_diff_kept(
    old: &str,
    new: &str,
    (old_label, new_label): (&str, &str),
    context: usize,
    first_lines: (usize, usize),
    keep: &dyn Fn(&[usize], &[usize]) -> bool,
) -> UnifiedDiff {
    let (old_offset, new_offset) = (first_lines.0.saturating_sub(1), first_lines.1.saturating_sub(1));
    let old_lines = split_keeping_terminators(old);
    let new_lines = split_keeping_terminators(new);
    let mut input = InternedInput {
        before: Vec::new(),
        after: Vec::new(),
        interner: Interner::new(old_lines.len() + new_lines.len()),
    };
    input.update_before(old_lines.iter().copied());
    input.update_after(new_lines.iter().copied());
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let hunks: Vec<imara_diff::Hunk> = diff.hunks().collect();
    if hunks.is_empty() {
        return UnifiedDiff::default();
    }
    let (mut added, mut removed, mut left_out) = (0, 0, 0);
    let mut text = format!("--- {old_label}\n+++ {new_label}\n");

    // Group hunks whose context overlaps, as `diff -u` does.
    let mut groups: Vec<Vec<&imara_diff::Hunk>> = Vec::new();
    for hunk in &hunks {
        match groups.last_mut() {
            Some(group)
                if (hunk.before.start as usize)
                    <= group.last().map_or(0, |last| last.before.end as usize) + 2 * context =>
            {
                group.push(hunk)
            }
            _ => groups.push(vec![hunk]),
        }
    }
    for group in groups {
        let removes: Vec<usize> =
            group.iter().flat_map(|hunk| hunk.before.clone()).map(|line| line as usize + 1 + old_offset).collect();
        let adds: Vec<usize> =
            group.iter().flat_map(|hunk| hunk.after.clone()).map(|line| line as usize + 1 + new_offset).collect();
        if !keep(&removes, &adds) {
            left_out += 1;
            continue;
        }
        (added, removed) = (added + adds.len(), removed + removes.len());
        let first = group[0];
        let last = group[group.len() - 1];
        let old_start = (first.before.start as usize).saturating_sub(context);
        let old_end = (last.before.end as usize + context).min(old_lines.len());
        let lead = first.before.start as usize - old_start;
        let new_start = first.after.start as usize - lead;
        let new_end = last.after.end as usize + (old_end - last.before.end as usize);
        text.push_str(&format!(
            "@@ -{} +{} @@\n",
            range_label(old_start + old_offset, old_end - old_start),
            range_label(new_start + new_offset, new_end - new_start)
        ));
        let mut old_at = old_start;
        for hunk in group {
            while old_at < hunk.before.start as usize {
                push_line(&mut text, ' ', old_lines[old_at]);
                old_at += 1;
            }
            for line in &old_lines[hunk.before.start as usize..hunk.before.end as usize] {
                push_line(&mut text, '-', line);
            }
            for line in &new_lines[hunk.after.start as usize..hunk.after.end as usize] {
                push_line(&mut text, '+', line);
            }
            old_at = hunk.before.end as usize;
        }
        while old_at < old_end {
            push_line(&mut text, ' ', old_lines[old_at]);
            old_at += 1;
        }
    }
    UnifiedDiff { text, added, removed, left_out }
}

/// `start,count` with git's conventions: 1-based, and `start` is the line before when empty.
fn range_label(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

fn push_line(text: &mut String, marker: char, line: &str) {
    let content = line.strip_suffix("\r\n").or_else(|| line.strip_suffix(['\n', '\r']));
    text.push(marker);
    match content {
        Some(content) => {
            text.push_str(content);
            text.push('\n');
        }
        None => {
            text.push_str(line);
            text.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// Lines with their terminators: `\n`, `\r\n` or a lone `\r`.
fn split_keeping_terminators(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                lines.push(&text[start..=at]);
                start = at + 1;
            }
            b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                lines.push(&text[start..at + 2]);
                at += 1;
                start = at + 1;
            }
            b'\r' => {
                lines.push(&text[start..=at]);
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_with_context() {
        let diff = unified_diff("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a/x", "b/x", 1);
        assert_eq!(diff.text, "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        assert_eq!((diff.added, diff.removed), (1, 1));
    }

    #[test]
    fn new_file_and_missing_final_newline() {
        let diff = unified_diff("", "x\ny", "/dev/null", "b/n", 3);
        assert_eq!(diff.text, "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n");
        assert_eq!(unified_diff("same\r\n", "same\r\n", "a", "b", 3), UnifiedDiff::default());
    }

    #[test]
    fn an_excerpt_counts_in_its_files_lines() {
        let diff = unified_diff_at("a\nb\nc\n", "a\nB\nc\nd\n", ("a/x", "b/x"), 0, (40, 52));
        assert_eq!(diff.text, "--- a/x\n+++ b/x\n@@ -41 +53 @@\n-b\n+B\n@@ -42,0 +55 @@\n+d\n");
        let added = unified_diff_at("", "x\n", ("/dev/null", "b/x"), 3, (1, 7));
        assert!(added.text.contains("@@ -0,0 +7 @@"), "{}", added.text);
    }

    #[test]
    fn a_hunk_keep_refuses_is_left_out_of_text_and_counts() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new: String = (1..=20)
            .map(|n| match n {
                2 => "two\n".to_owned(),
                19 => "nineteen\n".to_owned(),
                n => format!("{n}\n"),
            })
            .collect();
        let kept = unified_diff_kept(&old, &new, ("a", "b"), 1, (1, 1), &|removes, _| !removes.contains(&19));
        assert_eq!((kept.added, kept.removed, kept.left_out), (1, 1, 1));
        assert!(kept.text.contains("+two") && !kept.text.contains("nineteen"), "{}", kept.text);
    }

    #[test]
    fn lone_cr_lines_diff_one_by_one() {
        let diff = unified_diff("a\rb\rc\r", "a\rX\rc\r", "a", "b", 0);
        assert_eq!(diff.text, "--- a\n+++ b\n@@ -2 +2 @@\n-b\n+X\n");
    }

    #[test]
    fn distant_changes_make_two_hunks() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new = old.replace("2\n", "two\n").replace("19\n", "nineteen\n");
        let diff = unified_diff(&old, &new, "a", "b", 2);
        assert!(diff.text.matches("@@ -").count() >= 2, "{}", diff.text);
    }
}
