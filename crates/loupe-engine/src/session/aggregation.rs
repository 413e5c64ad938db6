//! Aggregation (§9.6): within a session, lines already received unchanged are not sent
//! again. A read keeps its header and footer; each run of lines the session already has
//! becomes one reference line (`── lines 10–80 unchanged since read #3 (fresh: true resends)`),
//! and only the rest is sent. `fresh: true` sends everything; a file whose hash changed is sent
//! anew. Clients compact their context in long sessions, so only lines sent recently are
//! elided: within `dedup_window_tokens` of reads (counted in the tokens the session's reads
//! sent since); older lines are sent again, and recorded as sent by this read.
//!
//! The rewrite is structural and deterministic: it works on the run of numbered lines in the
//! outcome's face (which knows each line's number) and on the raw `content`, before anything is
//! rendered; nothing is parsed back from text.

use serde_json::{Value, json};

use super::store::{SentFile, SentRange};
use crate::response::{Face, Lines, Outcome, Part};

/// One run of lines not re-sent, and the read that sent them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elided {
    pub(crate) first: usize,
    pub(crate) last: usize,
    pub(crate) read: u64,
}

/// What aggregation did to one read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Aggregated {
    pub(crate) lines_sent: u64,
    pub(crate) span: u64,
    pub(crate) elided: Vec<Elided>,
    pub(crate) tokens_saved: u64,
}

/// Applies aggregation to a successful read of numbered lines, and records what it sent.
/// When the session has sent `now` tokens of reads, only ranges sent within `window` of it count.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recency {
    pub(crate) now: u64,
    pub(crate) window: u64,
}

pub(crate) fn apply(
    outcome: &mut Outcome,
    sent: &mut SentFile,
    read_number: u64,
    fresh: bool,
    recency: Recency,
) -> Aggregated {
    let Some(file_hash) = outcome.act.file_hash.clone() else { return Aggregated::default() };
    let Some(lines) = outcome.face.lines() else { return Aggregated::default() };
    let (first, last) = (lines.first, lines.last());
    if sent.file_hash != file_hash {
        sent.file_hash = file_hash;
        sent.ranges.clear();
    }
    let span = (last + 1 - first) as u64;
    // A line cut mid-line was not sent whole: it is not recorded as sent.
    let recorded_last = if lines.last_cut { last.saturating_sub(1) } else { last };
    let elided: Vec<Elided> = if fresh { Vec::new() } else { covered(&sent.ranges, first, recorded_last, recency) };
    let elided_lines: usize = elided.iter().map(|run| run.last + 1 - run.first).sum();
    let mut tokens_saved = 0;
    if !elided.is_empty() {
        let before = outcome.face.tokens() as u64;
        elide(&mut outcome.face, &elided);
        if let Some(content) = &outcome.content {
            outcome.content = Some(rewrite_text(content, first, &elided));
        }
        tokens_saved = before.saturating_sub(outcome.face.tokens() as u64);
        let runs: Vec<Value> =
            elided.iter().map(|run| json!({"start_line": run.first, "end_line": run.last, "read": run.read})).collect();
        outcome.detail.insert("elided".into(), Value::from(runs));
    }
    // What this read sent (everything but the elided runs) is recorded as sent by it, now.
    let mut cursor = first;
    for run in elided.iter().chain(std::iter::once(&Elided { first: recorded_last + 1, last: 0, read: 0 })) {
        if run.first > cursor {
            record(&mut sent.ranges, cursor, run.first - 1, read_number, recency.now);
        }
        cursor = cursor.max(run.last + 1);
    }
    Aggregated { lines_sent: span - elided_lines as u64, span, elided, tokens_saved }
}

/// The parts of `first..=last` covered by recently sent `ranges`, in order.
fn covered(ranges: &[SentRange], first: usize, last: usize, recency: Recency) -> Vec<Elided> {
    ranges
        .iter()
        .filter(|range| range.first <= last && range.last >= first)
        .filter(|range| recency.now.saturating_sub(range.at) <= recency.window)
        .map(|range| Elided { first: range.first.max(first), last: range.last.min(last), read: range.read })
        .collect()
}

/// Records `first..=last` as sent by `read` when the session had sent `at` tokens: whatever
/// was recorded there before is replaced.
fn record(ranges: &mut Vec<SentRange>, first: usize, last: usize, read: u64, at: u64) {
    let mut kept: Vec<SentRange> = Vec::new();
    for range in ranges.iter() {
        if range.last < first || range.first > last {
            kept.push(*range);
            continue;
        }
        if range.first < first {
            kept.push(SentRange { last: first - 1, ..*range });
        }
        if range.last > last {
            kept.push(SentRange { first: last + 1, ..*range });
        }
    }
    kept.push(SentRange { first, last, read, at });
    kept.sort_unstable_by_key(|range| range.first);
    *ranges = kept;
}

/// Contiguous runs, whichever reads sent them, as one reference each: `(first, last, reads)`.
fn groups(elided: &[Elided]) -> Vec<(usize, usize, Vec<u64>)> {
    let mut groups: Vec<(usize, usize, Vec<u64>)> = Vec::new();
    for run in elided {
        match groups.last_mut() {
            Some(group) if group.1 + 1 == run.first => {
                group.1 = run.last;
                group.2.push(run.read);
            }
            _ => groups.push((run.first, run.last, vec![run.read])),
        }
    }
    for group in &mut groups {
        group.2.sort_unstable();
        group.2.dedup();
    }
    groups
}

fn reference_line(first: usize, last: usize, reads: &[u64]) -> String {
    let lines = if first == last { format!("line {first}") } else { format!("lines {first}–{last}") };
    let numbers: Vec<String> = reads.iter().map(|read| format!("#{read}")).collect();
    let reads =
        if numbers.len() == 1 { format!("read {}", numbers[0]) } else { format!("reads {}", numbers.join(", ")) };
    format!("── {lines} unchanged since {reads} (fresh: true resends)\n")
}

/// Replaces each elided run of the face's numbered lines with one reference line. Line
/// `first + i` is the `i`-th line of the run: numbers are known, never read back from text.
fn elide(face: &mut Face, elided: &[Elided]) {
    let groups = groups(elided);
    let mut parts = Vec::with_capacity(face.parts.len() + 2 * groups.len());
    for part in std::mem::take(&mut face.parts) {
        let Part::Lines(lines) = part else {
            parts.push(part);
            continue;
        };
        let mut run: Option<Lines> = None;
        for (offset, line) in lines.rendered.split_inclusive('\n').enumerate() {
            let number = lines.first + offset;
            match groups.iter().find(|(a, b, _)| (*a..=*b).contains(&number)) {
                Some((a, b, reads)) => {
                    if let Some(kept) = run.take() {
                        parts.push(Part::Lines(kept));
                    }
                    if *a == number {
                        parts.push(Part::text(reference_line(*a, *b, reads)));
                    }
                }
                None => run
                    .get_or_insert_with(|| Lines {
                        first: number,
                        rendered: String::new(),
                        tokens: None,
                        last_cut: false,
                    })
                    .rendered
                    .push_str(line),
            }
        }
        if let Some(mut kept) = run {
            kept.last_cut = lines.last_cut && kept.last() == lines.last();
            parts.push(Part::Lines(kept));
        }
    }
    face.parts = parts;
}

/// The raw text without the elided lines (line endings kept, CR-only files included).
fn rewrite_text(text: &str, first: usize, elided: &[Elided]) -> String {
    let mut out = String::new();
    let mut start = 0;
    let mut number = first;
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let end = match bytes[index] {
            b'\n' => Some(index + 1),
            b'\r' if bytes.get(index + 1) == Some(&b'\n') => Some(index + 2),
            b'\r' => Some(index + 1),
            _ => None,
        };
        if let Some(end) = end {
            push_unless_elided(&mut out, &text[start..end], number, elided);
            number += 1;
            start = end;
            index = end;
        } else {
            index += 1;
        }
    }
    if start < text.len() {
        push_unless_elided(&mut out, &text[start..], number, elided);
    }
    out
}

fn push_unless_elided(out: &mut String, line: &str, number: usize, elided: &[Elided]) {
    if !elided.iter().any(|run| (run.first..=run.last).contains(&number)) {
        out.push_str(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: usize, last: usize, read: u64, at: u64) -> SentRange {
        SentRange { first, last, read, at }
    }

    #[test]
    fn recording_replaces_what_was_there_and_only_recent_ranges_cover() {
        let mut ranges = Vec::new();
        record(&mut ranges, 10, 20, 1, 0);
        record(&mut ranges, 21, 30, 2, 100);
        assert_eq!(ranges, [range(10, 20, 1, 0), range(21, 30, 2, 100)]);
        record(&mut ranges, 15, 25, 3, 500);
        assert_eq!(ranges, [range(10, 14, 1, 0), range(15, 25, 3, 500), range(26, 30, 2, 100)]);
        let recent = Recency { now: 600, window: 550 };
        assert_eq!(
            covered(&ranges, 1, 40, recent),
            [Elided { first: 15, last: 25, read: 3 }, Elided { first: 26, last: 30, read: 2 }],
            "read #1 was sent 600 tokens ago, outside the window"
        );
        assert_eq!(covered(&ranges, 1, 40, Recency { now: 600, window: 10_000 }).len(), 3);
    }

    fn face() -> Face {
        let mut face = Face::text("a.rs · lines 1–4 of 4 · hash h\n");
        let rendered = "1 one\n2 two\n3 three\n4 four\n".to_owned();
        face.parts.push(Part::Lines(Lines { first: 1, rendered, tokens: None, last_cut: false }));
        face.push("→ next: x\n");
        face
    }

    fn elided(elided: &[Elided]) -> String {
        let mut face = face();
        elide(&mut face, elided);
        face.render()
    }

    #[test]
    fn rewriting_replaces_each_run_with_one_line() {
        let elided_runs = [Elided { first: 2, last: 3, read: 1 }];
        assert_eq!(
            elided(&elided_runs),
            "a.rs · lines 1–4 of 4 · hash h\n1 one\n── lines 2–3 unchanged since read #1 (fresh: true resends)\n4 four\n→ next: x\n"
        );
        assert_eq!(rewrite_text("one\r\ntwo\r\nthree\r\nfour", 1, &elided_runs), "one\r\nfour");
        let adjacent = [Elided { first: 1, last: 2, read: 2 }, Elided { first: 3, last: 4, read: 1 }];
        assert_eq!(
            elided(&adjacent),
            "a.rs · lines 1–4 of 4 · hash h\n── lines 1–4 unchanged since reads #1, #2 (fresh: true resends)\n→ next: x\n"
        );
        assert_eq!(rewrite_text("one\rtwo\rthree\rfour\r", 1, &elided_runs), "one\rfour\r");
    }
}
