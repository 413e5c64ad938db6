//! Exclusion rules (§3.1): `.git/`, secrets and configured patterns, with `allow` overriding.
//!
//! A pattern ending in `/` names a directory anywhere in the path; a pattern without `/` is a
//! glob matched against every component; a pattern with an inner `/` is matched against the
//! whole root-relative path.
//!
//! Exclusions match a name in every spelling a file system may resolve to it (case, Unicode
//! composition, Windows' trailing dots and streams: `Exclusions::matching_pattern`); `allow`
//! patterns match exactly.
//!
//! `.git/` is not one rule among others: a path with a `.git` component is refused whatever
//! the lists say, since writing there runs code (hooks, `core.fsmonitor`) and reading there
//! hands out history and credentials. No `allow` lifts it.

use std::borrow::Cow;

use globset::{Candidate, Glob, GlobSet, GlobSetBuilder};
use loupe_core::RepoPath;
use loupe_core::config::DEFAULT_EXCLUDE_EXCEPTIONS;
use unicode_normalization::UnicodeNormalization;

use crate::VfsError;

/// The pattern reported for anything inside a `.git` directory (or a `.git` file).
const GIT_PATTERN: &str = ".git/";

/// One list of patterns, compiled into two sets: those matched against every component and
/// those matched against the whole path. Every read of the index build and of a search's
/// verification asks it, so it matches each component once against all the patterns (a set),
/// rather than once per pattern (13 default patterns × a kernel path's 6 components was a
/// tenth of a search's time).
#[derive(Debug, Clone)]
struct Rules {
    patterns: Vec<String>,
    /// Patterns without an inner `/`, and the index in `patterns` of each.
    components: GlobSet,
    component_rules: Vec<usize>,
    /// Patterns with an inner `/`, and the index in `patterns` of each.
    whole: GlobSet,
    whole_rules: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Exclusions {
    exclude: Rules,
    allow: Rules,
}

impl Exclusions {
    /// Compiles the lists; an invalid glob is reported with the pattern that failed. Exclusions
    /// match without regard to case; `allow` patterns name what they lift exactly.
    pub fn new(exclude: &[String], allow: &[String]) -> Result<Exclusions, VfsError> {
        let mut allow_patterns: Vec<String> = allow.to_vec();
        allow_patterns.extend(DEFAULT_EXCLUDE_EXCEPTIONS.iter().map(|s| (*s).to_owned()));
        Ok(Exclusions {
            exclude: Rules::compile(exclude, Case::Insensitive)?,
            allow: Rules::compile(&allow_patterns, Case::Sensitive)?,
        })
    }

    /// The exclude pattern that refuses `path`, unless an `allow` pattern lets it through.
    ///
    /// A secret has more spellings than its name: `.ENV` and `Credentials.JSON` are `.env` and
    /// `credentials.json` on the case-insensitive file systems of macOS and Windows, a name may
    /// be composed or decomposed Unicode (macOS writes the decomposed form), and Windows opens
    /// `.env` for `.env.`, `.env ` and `.env::$DATA`. Exclusions are matched against each name
    /// folded (`folded`: lower case, composed), and also as Windows resolves it
    /// (`windows_name`) when that differs, on every platform, so each of those is refused
    /// wherever the tree came from; a name is never matched only in its cut form, so
    /// `cert:old.pem` is still `*.pem`.
    pub fn matching_pattern(&self, path: &RepoPath) -> Option<&str> {
        let folded: Vec<Cow<'_, str>> = path.components().map(folded).collect();
        if folded.iter().any(|name| name == ".git" || windows_name(name) == ".git") {
            return Some(GIT_PATTERN);
        }
        let mut hit = self.exclude.first_match(&folded);
        // Most names are their own Windows name; only the others are matched a second time.
        if folded.iter().any(|name| windows_name(name).len() != name.len()) {
            let resolved: Vec<&str> = folded.iter().map(|name| windows_name(name)).collect();
            hit = match (hit, self.exclude.first_match(&resolved)) {
                (Some(left), Some(right)) => Some(left.min(right)),
                (one, other) => one.or(other),
            };
        }
        let hit = hit?;
        let components: Vec<&str> = path.components().collect();
        if self.allow.first_match(&components).is_some() {
            return None;
        }
        Some(&self.exclude.patterns[hit])
    }
}

/// A non-ASCII name or pattern in the one spelling exclusions compare: composed (NFC), then
/// lower case.
fn fold(text: &str) -> String {
    text.nfc().collect::<String>().to_lowercase()
}

/// A name in lower case and composed Unicode. Case is folded here and the exclude globs are
/// lower case, so globset keeps its literal and extension fast paths (a case-insensitive glob is
/// a regex); a name already in lower case ASCII, most of a tree's, is not copied.
fn folded(component: &str) -> Cow<'_, str> {
    if !component.is_ascii() {
        Cow::Owned(fold(component))
    } else if component.bytes().any(|byte| byte.is_ascii_uppercase()) {
        Cow::Owned(component.to_ascii_lowercase())
    } else {
        Cow::Borrowed(component)
    }
}

/// The name Windows opens for `name`: cut at a `:` (an NTFS stream: `.env::$DATA` is `.env`),
/// without trailing dots and spaces (which it drops). A name that would become empty is kept.
fn windows_name(name: &str) -> &str {
    let cut = match name.find(':') {
        Some(0) | None => name,
        Some(colon) => &name[..colon],
    };
    let trimmed = cut.trim_end_matches(['.', ' ']);
    if trimmed.is_empty() { name } else { trimmed }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Sensitive,
    Insensitive,
}

impl Rules {
    fn compile(patterns: &[String], case: Case) -> Result<Rules, VfsError> {
        let (mut components, mut whole) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let (mut component_rules, mut whole_rules) = (Vec::new(), Vec::new());
        for (index, pattern) in patterns.iter().enumerate() {
            let body = pattern.trim_end_matches('/');
            let whole_path = body.contains('/');
            let body = body.trim_start_matches('/');
            let body: String = match case {
                Case::Insensitive => fold(body),
                Case::Sensitive => body.nfc().collect(),
            };
            let glob = Glob::new(&body)
                .map_err(|error| VfsError::Pattern { pattern: pattern.clone(), reason: error.to_string() })?;
            if whole_path {
                whole.add(glob);
                whole_rules.push(index);
            } else {
                components.add(glob);
                component_rules.push(index);
            }
        }
        let build = |builder: GlobSetBuilder| {
            builder
                .build()
                .map_err(|error| VfsError::Pattern { pattern: patterns.join(", "), reason: error.to_string() })
        };
        Ok(Rules {
            patterns: patterns.to_vec(),
            components: build(components)?,
            component_rules,
            whole: build(whole)?,
            whole_rules,
        })
    }

    /// The index of the first pattern (in list order) that matches the path given by its
    /// components: a whole-path pattern the path, or a component pattern any of its components.
    fn first_match<S: AsRef<str>>(&self, components: &[S]) -> Option<usize> {
        let mut first: Option<usize> = None;
        let mut note = |rule: usize| first = Some(first.map_or(rule, |known| known.min(rule)));
        if !self.whole.is_empty() {
            let joined = components.iter().map(AsRef::as_ref).collect::<Vec<&str>>().join("/");
            let candidate = Candidate::new(joined.as_str());
            for index in self.whole.matches_candidate(&candidate) {
                note(self.whole_rules[index]);
            }
        }
        if !self.components.is_empty() {
            for component in components {
                let candidate = Candidate::new(component.as_ref());
                if self.components.is_match_candidate(&candidate) {
                    for index in self.components.matches_candidate(&candidate) {
                        note(self.component_rules[index]);
                    }
                }
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_core::config::DEFAULT_EXCLUDE;

    fn defaults() -> Exclusions {
        let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
        Exclusions::new(&exclude, &[]).unwrap()
    }

    fn check(exclusions: &Exclusions, path: &str) -> Option<String> {
        exclusions.matching_pattern(&RepoPath::normalize(path).unwrap()).map(str::to_owned)
    }

    #[test]
    fn default_list_refuses_git_and_secrets_but_not_templates() {
        let rules = defaults();
        assert_eq!(check(&rules, ".git/config").as_deref(), Some(".git/"));
        assert_eq!(check(&rules, "sub/.git/HEAD").as_deref(), Some(".git/"));
        assert_eq!(check(&rules, ".env").as_deref(), Some(".env"));
        assert_eq!(check(&rules, "app/.env.production").as_deref(), Some(".env.*"));
        assert_eq!(check(&rules, "certs/server.pem").as_deref(), Some("*.pem"));
        assert_eq!(check(&rules, "home/id_rsa.pub").as_deref(), Some("id_rsa*"));
        assert_eq!(check(&rules, "credentials-prod.json").as_deref(), Some("credentials*.json"));
        assert_eq!(check(&rules, ".env.example"), None);
        assert_eq!(check(&rules, ".env.sample"), None);
        assert_eq!(check(&rules, ".gitignore"), None);
        assert_eq!(check(&rules, "src/keys.rs"), None);
    }

    #[test]
    fn allow_overrides_and_paths_with_slashes_match_whole_path() {
        let rules = Exclusions::new(&["*.pem".into(), "build/out/*.js".into()], &["test/fixture.pem".into()]).unwrap();
        assert_eq!(check(&rules, "test/fixture.pem"), None);
        assert_eq!(check(&rules, "a.pem").as_deref(), Some("*.pem"));
        assert_eq!(check(&rules, "build/out/app.js").as_deref(), Some("build/out/*.js"));
        assert_eq!(check(&rules, "src/out/app.js"), None);
        assert!(
            matches!(Exclusions::new(&["a[".into()], &[]), Err(VfsError::Pattern { pattern, .. }) if pattern == "a[")
        );
    }

    /// The pattern reported is the first in list order that matches, whichever set holds it.
    #[test]
    fn the_first_matching_pattern_in_list_order_is_reported() {
        let patterns: Vec<String> = ["deep/*/x.txt", "*.txt", "x.*", "deep/"].map(str::to_owned).to_vec();
        let rules = Exclusions::new(&patterns, &[]).unwrap();
        assert_eq!(check(&rules, "deep/a/x.txt").as_deref(), Some("deep/*/x.txt"));
        assert_eq!(check(&rules, "other/x.txt").as_deref(), Some("*.txt"));
        assert_eq!(check(&rules, "other/x.md").as_deref(), Some("x.*"));
        assert_eq!(check(&rules, "deep/a/y.md").as_deref(), Some("deep/"));
        let reversed: Vec<String> = patterns.iter().rev().cloned().collect();
        let rules = Exclusions::new(&reversed, &[]).unwrap();
        assert_eq!(check(&rules, "deep/a/x.txt").as_deref(), Some("deep/"));
        assert_eq!(check(&rules, "other/x.txt").as_deref(), Some("x.*"));
        assert_eq!(check(&rules, "other/y.rs"), None);
    }

    /// An `allow` rule once lifted `.git/` by component (`.git/.env.example` was written).
    #[test]
    fn r14_no_allow_rule_lifts_git() {
        let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
        let allow: Vec<String> = [".git/config", "*.example", ".git/", "**", "hooks/*"].map(str::to_owned).to_vec();
        let rules = Exclusions::new(&exclude, &allow).unwrap();
        for path in
            [".git/.env.example", ".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD", ".git", ".GIT/hooks/x"]
        {
            assert_eq!(check(&rules, path).as_deref(), Some(".git/"), "{path}");
        }
        // Without `.git/` in the list at all, it is still refused.
        let bare = Exclusions::new(&[], &["**".into()]).unwrap();
        assert_eq!(check(&bare, ".git/config").as_deref(), Some(".git/"));
        assert_eq!(check(&rules, "a.env.example"), None);
        assert_eq!(check(&rules, ".github/x.yml"), None);
    }
}
