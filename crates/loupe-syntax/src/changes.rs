//! What changed between two versions of one file, symbol by symbol (`compare`).
//!
//! The definitions a reviewer names are the top-level ones and, inside a type (a class, a
//! struct, an impl, a module), the members that have a body of their own: methods, nested
//! types. A field, an enum member or a function nested in a function is part of its
//! container's text. Both sides' definitions are paired by qualified name (duplicates in source
//! order) and compared by signature, then by their *own* text: their lines without those of
//! the members named on their own, blank lines dropped, trailing whitespace ignored. So a
//! changed method is a changed method, not also a changed class, and a class whose attribute
//! changed is a changed class. An unpaired removal and addition with the same text up to the
//! name is a rename; with the same name and text in another container, a move.

use crate::facts::{Definition, Lang, Span, SymbolKind};

/// How a symbol changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChangeKind {
    /// Its declaration head changed (parameters, return type, bases).
    Signature,
    Removed,
    /// Its own text changed, its head did not.
    Body,
    /// The same text under another name (`from` names the old one).
    Renamed,
    /// The same name and text in another container or file (`from` names where it was).
    Moved,
    Added,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Signature => "signature",
            ChangeKind::Removed => "removed",
            ChangeKind::Body => "body",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Moved => "moved",
            ChangeKind::Added => "added",
        }
    }
}

/// One changed symbol of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolChange {
    pub change: ChangeKind,
    /// The qualified name (`Flask.make_response`, `Config::load`): the new side's, else the old.
    pub name: String,
    pub kind: SymbolKind,
    /// A renamed or moved symbol's old qualified name.
    pub from: Option<String>,
    /// The whole definition on each side that has it.
    pub old: Option<Span>,
    pub new: Option<Span>,
    /// Visible outside its file by the language's rules (`_private` in Python, no `pub` in
    /// Rust, a lower-case Go name are not).
    pub public: bool,
    /// A hash of the definition's own text with every line trimmed: equal for the same code at
    /// another indentation, so a caller can pair a removal in one file with an addition in
    /// another as a move.
    pub text_hash: u64,
}

/// The changed symbols between `old` and `new`, two versions of one file in `lang`, in the new
/// side's source order (removed ones at their old place among them).
pub fn compare(lang: Lang, old: &str, new: &str) -> Vec<SymbolChange> {
    // Declarations are enough (spans, signatures, bodies; no doc text), and for C and Python the
    // parse leaves out bodies that declare nothing: a review parses both sides of every file.
    let old_facts = crate::parse_with(lang, old, crate::Extract::Declarations);
    let new_facts = crate::parse_with(lang, new, crate::Extract::Declarations);
    compare_definitions(lang, (old, &old_facts.definitions), (new, &new_facts.definitions))
}

/// `compare` on definitions already parsed from each side's text.
pub fn compare_definitions(lang: Lang, old: (&str, &[Definition]), new: (&str, &[Definition])) -> Vec<SymbolChange> {
    let old_symbols = named_symbols(lang, old.0, old.1);
    let new_symbols = named_symbols(lang, new.0, new.1);
    let mut changes: Vec<SymbolChange> = Vec::new();
    let mut unpaired_old: Vec<&Named> = Vec::new();
    let mut taken = vec![false; new_symbols.len()];
    // The new side's symbols by name, each name's in source order (pairing takes the first).
    let mut by_name: std::collections::HashMap<&str, std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (at, symbol) in new_symbols.iter().enumerate() {
        by_name.entry(symbol.qualified.as_str()).or_default().push_back(at);
    }
    for symbol in &old_symbols {
        let Some(at) = by_name.get_mut(symbol.qualified.as_str()).and_then(std::collections::VecDeque::pop_front)
        else {
            unpaired_old.push(symbol);
            continue;
        };
        let partner = &new_symbols[at];
        taken[at] = true;
        let change = if symbol.signature != partner.signature && has_signature(partner.kind) {
            ChangeKind::Signature
        } else if symbol.own != partner.own {
            ChangeKind::Body
        } else {
            continue;
        };
        changes.push(partner.change(change, Some(symbol)));
    }
    let mut unpaired_new: Vec<&Named> =
        new_symbols.iter().zip(&taken).filter(|(_, taken)| !**taken).map(|(symbol, _)| symbol).collect();
    // A removal and an addition of one text: a rename (another name, same container) or a move
    // (same name, another container).
    unpaired_old.retain(|gone| {
        let twin = unpaired_new.iter().position(|added| {
            added.kind == gone.kind
                && if added.name == gone.name {
                    added.container != gone.container && added.trimmed_hash == gone.trimmed_hash
                } else {
                    added.container == gone.container && renamed(&gone.own, &gone.name, &added.own, &added.name)
                }
        });
        let Some(twin) = twin else { return true };
        let added = unpaired_new.remove(twin);
        let change = if added.name == gone.name { ChangeKind::Moved } else { ChangeKind::Renamed };
        changes.push(added.change(change, Some(gone)));
        false
    });
    changes.extend(unpaired_new.into_iter().map(|added| added.change(ChangeKind::Added, None)));
    for gone in unpaired_old {
        let mut change = gone.change(ChangeKind::Removed, None);
        (change.old, change.new) = (Some(gone.span), None);
        changes.push(change);
    }
    changes.sort_by_key(|change| change.new.or(change.old).map(|span| span.start_line));
    changes
}

/// A definition a reviewer names, with what it is compared by.
struct Named {
    qualified: String,
    name: String,
    container: Option<String>,
    kind: SymbolKind,
    signature: String,
    span: Span,
    /// Its own lines (members named on their own left out), blank ones dropped, each without
    /// trailing whitespace.
    own: Vec<String>,
    trimmed_hash: u64,
    public: bool,
}

impl Named {
    /// This (new or only) side's change, paired with `old` when there is one.
    fn change(&self, change: ChangeKind, old: Option<&Named>) -> SymbolChange {
        let from = match change {
            ChangeKind::Renamed | ChangeKind::Moved => old.map(|old| old.qualified.clone()),
            _ => None,
        };
        SymbolChange {
            change,
            name: self.qualified.clone(),
            kind: self.kind,
            from,
            old: old.map(|old| old.span),
            new: Some(self.span),
            public: self.public || old.is_some_and(|old| old.public),
            text_hash: self.trimmed_hash,
        }
    }
}

/// The definitions a reviewer names, each with its own text.
fn named_symbols(lang: Lang, text: &str, definitions: &[Definition]) -> Vec<Named> {
    let lines: Vec<&str> = text.lines().collect();
    // Which definitions are named: top-level ones, and inside a named type, the members with a
    // body. (Definitions come in source order, a container before its members.)
    let mut named: Vec<usize> = Vec::new();
    let mut stack: Vec<(usize, bool)> = Vec::new(); // (index into `definitions`, is named)
    let mut parent_of: Vec<Option<usize>> = vec![None; definitions.len()];
    for (at, definition) in definitions.iter().enumerate() {
        while stack.last().is_some_and(|(open, _)| !contains(definitions[*open].span, definition.span)) {
            stack.pop();
        }
        let is_named = match stack.last() {
            None => true,
            Some((open, open_named)) => {
                *open_named && !is_function(definitions[*open].kind) && definition.body.is_some()
            }
        };
        if is_named {
            parent_of[at] = stack.iter().rev().find(|(_, named)| *named).map(|(open, _)| *open);
            named.push(at);
        }
        stack.push((at, is_named));
    }
    // Each named definition's members named on their own, in source order.
    let mut members: Vec<Vec<Span>> = vec![Vec::new(); definitions.len()];
    for &at in &named {
        if let Some(parent) = parent_of[at] {
            members[parent].push(definitions[at].span);
        }
    }
    named
        .iter()
        .map(|&at| {
            let definition = &definitions[at];
            // Its lines, those of its members skipped (they come in order and do not overlap).
            let mut own: Vec<String> = Vec::new();
            let mut line = definition.span.start_line;
            let mut next_member = members[at].iter().peekable();
            while line <= definition.span.end_line {
                if let Some(member) = next_member.peek()
                    && line >= member.start_line
                {
                    line = line.max(member.end_line + 1);
                    next_member.next();
                    continue;
                }
                if let Some(text) = lines.get(line - 1).map(|text| text.trim_end()).filter(|text| !text.is_empty()) {
                    own.push(text.to_owned());
                }
                line += 1;
            }
            let trimmed_hash = {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                for line in &own {
                    line.trim_start().hash(&mut hasher);
                }
                hasher.finish()
            };
            // An impl block is named by its head (`impl Display for Config`): a type has several.
            let qualified = match &definition.container {
                _ if definition.kind == SymbolKind::Impl => definition.signature.clone(),
                Some(container) => format!("{container}{}{}", lang.separator(), definition.name),
                None => definition.name.clone(),
            };
            Named {
                public: is_public(lang, definition, &qualified),
                qualified,
                name: definition.name.clone(),
                container: definition.container.clone(),
                kind: definition.kind,
                signature: definition.signature.clone(),
                span: definition.span,
                own,
                trimmed_hash,
            }
        })
        .collect()
}

/// Kinds whose head is a signature a caller or a subtype depends on; a constant's or a
/// field's head holds its value, whose change is a body's.
fn has_signature(kind: SymbolKind) -> bool {
    !matches!(
        kind,
        SymbolKind::Constant | SymbolKind::Variable | SymbolKind::Field | SymbolKind::EnumMember | SymbolKind::Module
    )
}

fn contains(outer: Span, inner: Span) -> bool {
    outer.start_line <= inner.start_line && inner.end_line <= outer.end_line
}

/// A function-like kind: what is nested in one is part of its text.
pub fn is_function(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor | SymbolKind::Property)
}

/// Whether `old`'s text, with the word `old_name` written `new_name`, is `new`'s, and says
/// enough for that to mean something (two stubs whose body is `pass` are not one renamed).
fn renamed(old: &[String], old_name: &str, new: &[String], new_name: &str) -> bool {
    let said: usize = old.iter().skip(1).map(|line| line.chars().filter(|c| !c.is_whitespace()).count()).sum();
    said >= RENAME_MIN_BODY_CHARS
        && old.len() == new.len()
        && old.iter().zip(new).all(|(old, new)| replace_word(old, old_name, new_name) == *new)
}

/// The non-blank characters after its first line a definition needs to be taken as renamed.
const RENAME_MIN_BODY_CHARS: usize = 16;

/// `text` with every whole-word `word` replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether a definition is visible outside its file by its language's rules: the names a
/// change can break elsewhere. (Rust trait-impl methods, public without `pub`, count as
/// private: the trait's own declaration is the public one.)
pub fn is_public(lang: Lang, definition: &Definition, qualified: &str) -> bool {
    let words = |text: &str, word: &str| text.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == word);
    match lang {
        Lang::Python => qualified.split('.').all(|part| !part.starts_with('_') || part.ends_with("__")),
        Lang::Rust => definition.signature.starts_with("pub") || definition.kind == SymbolKind::Impl,
        Lang::Go => definition.name.chars().next().is_some_and(char::is_uppercase),
        Lang::C | Lang::Cpp => !words(&definition.signature, "static") || definition.depth > 0,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => {
            !definition.name.starts_with('#')
                && !definition.name.starts_with('_')
                && !words(&definition.signature, "private")
        }
        Lang::Java | Lang::CSharp | Lang::Kotlin | Lang::Php => {
            !words(&definition.signature, "private") && !words(&definition.signature, "internal")
        }
        Lang::Ruby => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(lang: Lang, old: &str, new: &str) -> Vec<(ChangeKind, String, Option<String>)> {
        compare(lang, old, new).into_iter().map(|change| (change.change, change.name, change.from)).collect()
    }

    #[test]
    fn a_changed_method_is_not_a_changed_class_and_a_changed_attribute_is() {
        let old = "class A:\n    x = 1\n\n    def f(self):\n        return 1\n\n    def g(self, a):\n        return a\n\ndef top():\n    def inner():\n        pass\n";
        let new = "class A:\n    x = 1\n\n    def f(self):\n        return 2\n\n    def g(self, a, b):\n        return a\n\ndef top():\n    def inner():\n        return 0\n";
        assert_eq!(
            changes(Lang::Python, old, new),
            vec![
                (ChangeKind::Body, "A.f".into(), None),
                (ChangeKind::Signature, "A.g".into(), None),
                (ChangeKind::Body, "top".into(), None),
            ]
        );
        let attribute = old.replace("x = 1", "x = 2");
        assert_eq!(changes(Lang::Python, old, &attribute), vec![(ChangeKind::Body, "A".into(), None)]);
        // Blank lines between members are not a change.
        let spaced = old.replace("\n\n    def g", "\n\n\n    def g");
        assert_eq!(changes(Lang::Python, old, &spaced), vec![]);
    }

    #[test]
    fn additions_removals_renames_and_moves() {
        let old = "def keep():\n    return 1\n\ndef old_name(a):\n    return a + 1 + len([a, a])\n\ndef gone():\n    pass\n\nclass A:\n    def m(self):\n        return 'm'\n\nclass B:\n    def n(self):\n        pass\n";
        let new = "def keep():\n    return 1\n\ndef new_name(a):\n    return a + 1 + len([a, a])\n\nclass A:\n    pass\n\nclass B:\n    def n(self):\n        pass\n\n    def m(self):\n        return 'm'\n\ndef fresh():\n    pass\n";
        assert_eq!(
            changes(Lang::Python, old, new),
            vec![
                (ChangeKind::Renamed, "new_name".into(), Some("old_name".into())),
                (ChangeKind::Body, "A".into(), None),
                (ChangeKind::Removed, "gone".into(), None),
                (ChangeKind::Moved, "B.m".into(), Some("A.m".into())),
                (ChangeKind::Added, "fresh".into(), None),
            ]
        );
    }

    #[test]
    fn rust_members_and_visibility() {
        let old =
            "pub struct S { a: u32 }\nimpl S {\n    pub fn get(&self) -> u32 { self.a }\n    fn hidden(&self) {}\n}\n";
        let new = "pub struct S { a: u64 }\nimpl S {\n    pub fn get(&self) -> u64 { self.a }\n    fn hidden(&self) { let _ = 1; }\n}\n";
        let found = compare(Lang::Rust, old, new);
        let summary: Vec<(ChangeKind, &str, bool)> =
            found.iter().map(|change| (change.change, change.name.as_str(), change.public)).collect();
        assert_eq!(
            summary,
            vec![
                (ChangeKind::Body, "S", true),
                (ChangeKind::Signature, "S::get", true),
                (ChangeKind::Body, "S::hidden", false)
            ]
        );
    }

    #[test]
    fn impls_are_named_by_their_heads_and_a_constants_value_is_its_body() {
        let old = "pub const N: u32 = 1;\npub struct S;\nimpl S {\n    pub fn f(&self) {}\n}\n";
        let new = "pub const N: u32 = 2;\npub struct S;\nimpl S {\n    pub fn f(&self) {}\n}\nimpl Default for S {\n    fn default() -> S {\n        S\n    }\n}\n";
        assert_eq!(
            changes(Lang::Rust, old, new),
            vec![
                (ChangeKind::Body, "N".into(), None),
                (ChangeKind::Added, "impl Default for S".into(), None),
                (ChangeKind::Added, "S::default".into(), None),
            ]
        );
    }

    #[test]
    fn a_word_is_replaced_whole() {
        assert_eq!(replace_word("get(get_x, xget, get)", "get", "fetch"), "fetch(get_x, xget, fetch)");
    }
}
