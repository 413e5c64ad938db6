//! The plan of a regular expression: required-substring analysis over `regex-syntax`'s HIR, in
//! the manner of Russ Cox's codesearch (`index/regexp.go`).
//!
//! Owns the per-node facts (can it match empty, its exact match set when small, the prefixes
//! and suffixes every match starts and ends with, and the trigram plan every match implies) and
//! how concatenation, alternation, repetition and classes combine them. Must stay sound: every
//! text a pattern matches satisfies its plan. Must stay bounded: a pathological pattern degrades
//! to `All` under a work budget and a plan-size cap, never explodes.

use std::collections::BTreeSet;

use regex_syntax::ParserBuilder;
use regex_syntax::hir::{Class, Hir, HirKind};

use super::extract::trigram;
use super::plan::{MAX_PLAN_TRIGRAMS, Plan};
use crate::error::IndexError;

/// The plan of the regex `pattern`, case-insensitive when asked (inline flags apply too).
///
/// Matches are found by the caller; this only narrows. An invalid pattern is `Err` with the
/// parser's message.
pub fn plan_regex(pattern: &str, case_insensitive: bool) -> Result<Plan, IndexError> {
    let hir = ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .build()
        .parse(pattern)
        .map_err(|e| IndexError::Pattern { reason: e.to_string() })?;
    Ok(plan_hir(&hir))
}

/// The most bytes a match of `pattern` can span, when bounded (`None`: unbounded, or the
/// pattern does not parse). A search ranks a match holding the query's own text higher; a
/// regex whose matches are all shorter than its text can never earn that.
pub fn max_match_len(pattern: &str, case_insensitive: bool) -> Option<usize> {
    let hir = ParserBuilder::new().case_insensitive(case_insensitive).build().parse(pattern).ok()?;
    hir.properties().maximum_len()
}

/// `pattern` as a pattern that can never match a line terminator (`\n`, `\r`): every class
/// loses them, a literal holding one can never match, case folding already applied. On one
/// line it matches exactly what `pattern` matches there (a match that crossed a terminator was
/// never a line's match), and a scan over a whole file with it never runs past a line's end:
/// `(?s).*=` no longer searches to the file's last `=` from every line start, which made
/// verifying one 600 KB file take minutes. ripgrep strips its line terminator the same way
/// (`grep-regex`, `strip_from_match`). `Err` holds the parser's message.
pub fn line_pattern(pattern: &str, case_insensitive: bool) -> Result<String, IndexError> {
    let hir = ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(pattern)
        .map_err(|e| IndexError::Pattern { reason: e.to_string() })?;
    Ok(without_line_terminators(hir).to_string())
}

fn without_line_terminators(hir: Hir) -> Hir {
    use regex_syntax::hir::{ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange};
    let is_terminator = |byte: &u8| *byte == b'\n' || *byte == b'\r';
    match hir.into_kind() {
        HirKind::Literal(literal) if literal.0.iter().any(is_terminator) => Hir::fail(),
        HirKind::Class(Class::Unicode(mut class)) => {
            class.difference(&ClassUnicode::new([
                ClassUnicodeRange::new('\n', '\n'),
                ClassUnicodeRange::new('\r', '\r'),
            ]));
            Hir::class(Class::Unicode(class))
        }
        HirKind::Class(Class::Bytes(mut class)) => {
            class
                .difference(&ClassBytes::new([ClassBytesRange::new(b'\n', b'\n'), ClassBytesRange::new(b'\r', b'\r')]));
            Hir::class(Class::Bytes(class))
        }
        HirKind::Repetition(mut repetition) => {
            repetition.sub = Box::new(without_line_terminators(*repetition.sub));
            Hir::repetition(repetition)
        }
        HirKind::Capture(mut capture) => {
            capture.sub = Box::new(without_line_terminators(*capture.sub));
            Hir::capture(capture)
        }
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(without_line_terminators).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.into_iter().map(without_line_terminators).collect()),
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => Hir::literal(literal.0),
        HirKind::Look(look) => Hir::look(look),
    }
}

/// The plan of an already parsed pattern.
pub(crate) fn plan_hir(hir: &Hir) -> Plan {
    let mut budget = MAX_STEPS;
    let mut info = analyze(hir, &mut budget);
    info.simplify(true);
    info.add_exact();
    info.matches.capped(MAX_PLAN_TRIGRAMS)
}

/// An exact set larger than this becomes prefixes, suffixes and trigrams.
const MAX_EXACT: usize = 7;
/// A prefix or suffix set larger than this is shortened until it is not.
const MAX_SET: usize = 20;
/// A class with more members than this (after ASCII case folding) is "any character".
const MAX_CLASS: usize = 8;
/// Nodes analysed before the rest of the pattern counts as "anything".
const MAX_STEPS: usize = 10_000;
/// Intermediate plans are capped at this many trigram leaves.
const MAX_INTERMEDIATE_TRIGRAMS: usize = 4 * MAX_PLAN_TRIGRAMS;
/// `x{n}` with `n` up to this is analysed as `n` concatenated copies.
const MAX_EXPANDED_REPEAT: u32 = 3;

type StringSet = BTreeSet<Vec<u8>>;

/// What is known about the texts a node matches (all strings ASCII-lowercased).
#[derive(Clone, Debug)]
struct Info {
    /// Whether it can match the empty string.
    can_empty: bool,
    /// Every text it can match, when that set is known and small. `Some(empty)` means it
    /// cannot match at all.
    exact: Option<StringSet>,
    /// When `exact` is `None`: every match starts with one of these.
    prefix: StringSet,
    /// When `exact` is `None`: every match ends with one of these.
    suffix: StringSet,
    /// A plan every text containing a match satisfies.
    matches: Plan,
}

impl Info {
    fn any_char() -> Info {
        Info { can_empty: false, exact: None, prefix: empty_only(), suffix: empty_only(), matches: Plan::All }
    }

    fn any_match() -> Info {
        Info { can_empty: true, ..Info::any_char() }
    }

    fn empty_string() -> Info {
        Info::exactly(std::iter::once(Vec::new()).collect())
    }

    fn no_match() -> Info {
        Info {
            can_empty: false,
            exact: Some(StringSet::new()),
            prefix: StringSet::new(),
            suffix: StringSet::new(),
            matches: Plan::Nothing,
        }
    }

    fn exactly(set: StringSet) -> Info {
        let can_empty = set.contains(&Vec::new());
        Info { can_empty, exact: Some(set), prefix: StringSet::new(), suffix: StringSet::new(), matches: Plan::All }
    }

    /// Requires the trigrams of the exact set in `matches` (before the set is forgotten).
    fn add_exact(&mut self) {
        if let Some(exact) = &self.exact {
            self.matches = and_capped(std::mem::replace(&mut self.matches, Plan::All), trigrams_of_set(exact));
        }
    }

    /// Moves an exact set that grew too large or too long into trigrams, prefixes and suffixes,
    /// and shortens prefix and suffix sets (adding their trigrams first).
    fn simplify(&mut self, force: bool) {
        if let Some(exact) = &self.exact {
            let shortest = min_len(exact);
            if exact.len() > MAX_EXACT || (shortest >= 3 && force) || shortest >= 4 {
                let exact = self.exact.take().unwrap_or_default();
                self.matches = and_capped(std::mem::replace(&mut self.matches, Plan::All), trigrams_of_set(&exact));
                for text in exact {
                    let n = text.len();
                    if n < 3 {
                        self.prefix.insert(text.clone());
                        self.suffix.insert(text);
                    } else {
                        self.prefix.insert(text[..2].to_vec());
                        self.suffix.insert(text[n - 2..].to_vec());
                    }
                }
            }
        }
        if self.exact.is_none() {
            let prefix = std::mem::take(&mut self.prefix);
            self.prefix = self.simplify_set(prefix, false);
            let suffix = std::mem::take(&mut self.suffix);
            self.suffix = self.simplify_set(suffix, true);
        }
    }

    /// Adds the trigrams of a prefix (or suffix) set to `matches`, then shortens its strings to
    /// two bytes (fewer if still too many) and drops the ones another member already implies.
    fn simplify_set(&mut self, set: StringSet, is_suffix: bool) -> StringSet {
        self.matches = and_capped(std::mem::replace(&mut self.matches, Plan::All), trigrams_of_set(&set));
        let mut set = set;
        let mut keep = 2;
        loop {
            set = set
                .into_iter()
                .map(|text| {
                    if text.len() <= keep {
                        text
                    } else if is_suffix {
                        text[text.len() - keep..].to_vec()
                    } else {
                        text[..keep].to_vec()
                    }
                })
                .collect();
            if set.len() <= MAX_SET || keep == 0 {
                break;
            }
            keep -= 1;
        }
        // Knowing that "ab" starts every match makes "abc" as an alternative useless.
        let members: Vec<Vec<u8>> = set.iter().cloned().collect();
        set.retain(|text| {
            !members.iter().any(|other| {
                other.len() < text.len() && if is_suffix { text.ends_with(other) } else { text.starts_with(other) }
            })
        });
        set
    }
}

fn empty_only() -> StringSet {
    std::iter::once(Vec::new()).collect()
}

fn min_len(set: &StringSet) -> usize {
    set.iter().map(Vec::len).min().unwrap_or(0)
}

fn cross(left: &StringSet, right: &StringSet) -> StringSet {
    let mut out = StringSet::new();
    for l in left {
        for r in right {
            let mut text = l.clone();
            text.extend_from_slice(r);
            out.insert(text);
        }
    }
    out
}

/// The plan "one of these strings occurs": an Or over the strings of the And of each one's
/// trigrams. No constraint when any string is shorter than three bytes or the set is empty.
fn trigrams_of_set(set: &StringSet) -> Plan {
    if set.is_empty() || min_len(set) < 3 {
        return Plan::All;
    }
    Plan::or(
        set.iter().map(|text| Plan::trigrams(text.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect())).collect(),
    )
}

fn and_capped(left: Plan, right: Plan) -> Plan {
    cap_intermediate(Plan::and(vec![left, right]))
}

fn cap_intermediate(plan: Plan) -> Plan {
    if plan.trigram_count() > MAX_INTERMEDIATE_TRIGRAMS { plan.capped(MAX_INTERMEDIATE_TRIGRAMS) } else { plan }
}

fn analyze(hir: &Hir, budget: &mut usize) -> Info {
    if *budget == 0 {
        return Info::any_match();
    }
    *budget -= 1;
    let mut info = match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty_string(),
        HirKind::Literal(literal) => Info::exactly(std::iter::once(literal.0.to_ascii_lowercase()).collect()),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(capture) => analyze(&capture.sub, budget),
        HirKind::Repetition(repetition) => match (repetition.min, repetition.max) {
            (0, Some(0)) => Info::empty_string(),
            (0, Some(1)) => alternate(analyze(&repetition.sub, budget), Info::empty_string()),
            (0, _) => Info::any_match(),
            (1, Some(1)) => analyze(&repetition.sub, budget),
            (n, Some(m)) if n == m && n <= MAX_EXPANDED_REPEAT => {
                let once = analyze(&repetition.sub, budget);
                let mut info = once.clone();
                for _ in 1..n {
                    info = concat(info, once.clone());
                }
                info
            }
            _ => {
                // At least one copy: its prefixes and suffixes stay, its exact set does not.
                let mut info = analyze(&repetition.sub, budget);
                if let Some(exact) = info.exact.take() {
                    info.prefix = exact.clone();
                    info.suffix = exact;
                }
                info
            }
        },
        HirKind::Concat(children) => {
            let mut info = Info::empty_string();
            for child in children {
                info = concat(info, analyze(child, budget));
            }
            info
        }
        HirKind::Alternation(children) => {
            let mut info = Info::no_match();
            for child in children {
                info = alternate(info, analyze(child, budget));
            }
            info
        }
    };
    info.simplify(false);
    info
}

/// A small class is an exact set of its members, ASCII-lowercased; a large one is any char.
fn class_info(class: &Class) -> Info {
    // Case folding can only merge members, so a class far over the limit is over it after too.
    const RAW_LIMIT: u32 = 4 * MAX_CLASS as u32;
    let mut members = StringSet::new();
    match class {
        Class::Unicode(class) => {
            let mut raw = 0u32;
            for range in class.ranges() {
                raw = raw.saturating_add(u32::from(range.end()) - u32::from(range.start()) + 1);
                if raw > RAW_LIMIT {
                    return Info::any_char();
                }
            }
            for range in class.ranges() {
                for c in range.start()..=range.end() {
                    let mut buffer = [0u8; 4];
                    members.insert(c.encode_utf8(&mut buffer).as_bytes().to_ascii_lowercase());
                }
            }
        }
        Class::Bytes(class) => {
            let mut raw = 0u32;
            for range in class.ranges() {
                raw += u32::from(range.end()) - u32::from(range.start()) + 1;
                if raw > RAW_LIMIT {
                    return Info::any_char();
                }
            }
            for range in class.ranges() {
                for byte in range.start()..=range.end() {
                    members.insert(vec![byte.to_ascii_lowercase()]);
                }
            }
        }
    }
    match members.len() {
        0 => Info::no_match(),
        n if n > MAX_CLASS => Info::any_char(),
        _ => Info::exactly(members),
    }
}

fn concat(mut x: Info, mut y: Info) -> Info {
    let mut xy = Info {
        can_empty: x.can_empty && y.can_empty,
        exact: None,
        prefix: StringSet::new(),
        suffix: StringSet::new(),
        matches: and_capped(std::mem::replace(&mut x.matches, Plan::All), std::mem::replace(&mut y.matches, Plan::All)),
    };
    match (&x.exact, &y.exact) {
        (Some(x_exact), Some(y_exact)) => xy.exact = Some(cross(x_exact, y_exact)),
        _ => {
            xy.prefix = match &x.exact {
                Some(x_exact) => cross(x_exact, &y.prefix),
                None if x.can_empty => x.prefix.union(&y.prefix).cloned().collect(),
                None => x.prefix.clone(),
            };
            xy.suffix = match &y.exact {
                Some(y_exact) => cross(&x.suffix, y_exact),
                None if y.can_empty => y.suffix.union(&x.suffix).cloned().collect(),
                None => y.suffix.clone(),
            };
        }
    }
    // A match of xy contains some suffix of x followed by some prefix of y: when all of those
    // pairs are long enough, one of them must occur. (When either side is exact, its strings
    // already flow into xy's prefix, suffix or exact set.)
    if x.exact.is_none()
        && y.exact.is_none()
        && x.suffix.len() <= MAX_SET
        && y.prefix.len() <= MAX_SET
        && min_len(&x.suffix) + min_len(&y.prefix) >= 3
    {
        xy.matches = and_capped(xy.matches, trigrams_of_set(&cross(&x.suffix, &y.prefix)));
    }
    xy.simplify(false);
    xy
}

fn alternate(mut x: Info, mut y: Info) -> Info {
    let mut xy = Info {
        can_empty: x.can_empty || y.can_empty,
        exact: None,
        prefix: StringSet::new(),
        suffix: StringSet::new(),
        matches: Plan::All,
    };
    match (&x.exact, &y.exact) {
        (Some(x_exact), Some(y_exact)) => xy.exact = Some(x_exact.union(y_exact).cloned().collect()),
        (Some(x_exact), None) => {
            xy.prefix = x_exact.union(&y.prefix).cloned().collect();
            xy.suffix = x_exact.union(&y.suffix).cloned().collect();
            x.add_exact();
        }
        (None, Some(y_exact)) => {
            xy.prefix = x.prefix.union(y_exact).cloned().collect();
            xy.suffix = x.suffix.union(y_exact).cloned().collect();
            y.add_exact();
        }
        (None, None) => {
            xy.prefix = x.prefix.union(&y.prefix).cloned().collect();
            xy.suffix = x.suffix.union(&y.suffix).cloned().collect();
        }
    }
    xy.matches = cap_intermediate(Plan::or(vec![x.matches, y.matches]));
    xy.simplify(false);
    xy
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> u32 {
        let b = s.as_bytes();
        trigram(b[0], b[1], b[2])
    }

    fn all(list: &[&str]) -> Plan {
        Plan::trigrams(list.iter().map(|s| t(s)).collect())
    }

    /// H5c: `(?s).*=` searched from every line start ran to the file's last `=` each time
    /// (600 KB: no answer in 400 s). The line pattern never matches a terminator, and on a
    /// line it matches exactly what the pattern matches there.
    #[test]
    fn h5c_a_line_pattern_never_crosses_a_line_and_means_the_same_on_one() {
        let text = "a = 1\nbb\r\n= 2\r\n\n x=y=z\n";
        for (pattern, insensitive) in [
            ("(?s).*=", false),
            ("(?s).*.*.*=", false),
            (r"\s+", false),
            (r"[^a]+", false),
            (r"\W", true),
            (r"b\nb", false),
            (r"(?s)b.=", false),
            (r"(?m)^=|=$", false),
            ("B+", true),
            (r"(x|\n)+", false),
        ] {
            let line_regex = regex::RegexBuilder::new(&line_pattern(pattern, insensitive).unwrap())
                .multi_line(true)
                .crlf(true)
                .build()
                .unwrap();
            for found in line_regex.find_iter(text) {
                assert!(!found.as_str().contains(['\n', '\r']), "{pattern}: {:?}", found.as_str());
            }
            let original = regex::RegexBuilder::new(pattern)
                .case_insensitive(insensitive)
                .multi_line(true)
                .crlf(true)
                .build()
                .unwrap();
            for line in text.split(['\n', '\r']) {
                assert_eq!(
                    line_regex.find(line).map(|m| m.range()),
                    original.find(line).map(|m| m.range()),
                    "{pattern} on {line:?}"
                );
            }
        }
    }

    fn plan(pattern: &str) -> Plan {
        plan_regex(pattern, false).unwrap()
    }

    #[test]
    fn literals_and_concatenations() {
        assert_eq!(plan("hello"), all(&["hel", "ell", "llo"]));
        assert_eq!(plan("ab"), Plan::All);
        assert_eq!(plan("abc"), all(&["abc"]));
        assert_eq!(plan(r"\bword\b"), all(&["wor", "ord"]));
        assert_eq!(plan(r"^foo$"), all(&["foo"]));
        assert_eq!(plan("a.*b"), Plan::All);
        assert_eq!(plan("abc.*def"), all(&["abc", "def"]));
        assert_eq!(plan("hello+"), all(&["hel", "ell", "llo"]));
        assert_eq!(plan("(hello)?"), Plan::All);
        assert_eq!(plan("x*"), Plan::All);
    }

    #[test]
    fn alternations_and_classes() {
        assert_eq!(
            plan("(foo|bar)baz"),
            Plan::or(vec![all(&["foo", "oob", "oba", "baz"]), all(&["bar", "arb", "rba", "baz"])])
        );
        assert_eq!(plan("foo|bar"), Plan::or(vec![all(&["foo"]), all(&["bar"])]));
        assert_eq!(plan("foo|b"), Plan::All);
        assert_eq!(plan("ab[cd]"), Plan::or(vec![all(&["abc"]), all(&["abd"])]));
        assert_eq!(plan("ab[a-z]"), Plan::All);
        assert_eq!(plan("ab[a-z]cde"), all(&["cde"]));
        assert_eq!(plan(r"foo\d+bar"), all(&["foo", "bar"]));
    }

    #[test]
    fn case_insensitive_folds_ascii_and_keeps_unicode_variants() {
        assert_eq!(plan_regex("HeLLo", true).unwrap(), all(&["hel", "ell", "llo"]));
        assert_eq!(plan("(?i)hello"), all(&["hel", "ell", "llo"]));
        // (?i)k also matches U+212A KELVIN SIGN, whose bytes give other trigrams.
        let kelvin = plan_regex("kernel", true).unwrap();
        assert!(kelvin.matches(&{
            let mut doc = Vec::new();
            super::super::extract::trigrams_of("\u{212A}ernel".as_bytes(), &mut doc);
            doc
        }));
        assert_ne!(kelvin, Plan::All);
    }

    #[test]
    fn unicode_patterns_use_utf8_bytes() {
        let mut doc = Vec::new();
        super::super::extract::trigrams_of("naïve".as_bytes(), &mut doc);
        let p = plan("naïve");
        assert_ne!(p, Plan::All);
        assert!(p.matches(&doc));
        assert!(plan("na[ïi]ve").matches(&doc));
    }

    #[test]
    fn pathological_patterns_stay_small() {
        let p = plan("(a|b|c|d|e){10}");
        assert_eq!(p, Plan::All);
        let p = plan("(abc|bcd|cde|def|efg|fgh|ghi|hij){20}");
        assert!(p.trigram_count() <= MAX_PLAN_TRIGRAMS);
        let p = plan("(((((((((abcd){3}){3}){3}){3}){3}){3}){3}){3}){3}");
        assert!(p.trigram_count() <= MAX_PLAN_TRIGRAMS);
        let long_alternation: Vec<String> = (0..2000).map(|i| format!("word{i}x")).collect();
        let p = plan(&long_alternation.join("|"));
        assert!(p.trigram_count() <= MAX_PLAN_TRIGRAMS);
    }

    #[test]
    fn invalid_patterns_are_errors_with_the_parser_message() {
        let error = plan_regex("foo(", false).unwrap_err();
        assert!(matches!(&error, IndexError::Pattern { reason } if reason.contains("unclosed group")), "{error}");
        assert!(plan_regex("[z-a]", false).is_err());
    }
}
