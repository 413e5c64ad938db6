//! Exclusion rules (§3.1): `.git/`, secrets and configured patterns, with `allow` overriding.
//!
//! A pattern ending in `/` names a directory anywhere in the path; a pattern without `/` is a
//! glob matched against every component; a pattern with an inner `/` is matched against the
//! whole root-relative path.
//!
//! `.git/` is not one rule among others: a path with a `.git` component is refused whatever
//! the lists say, since writing there runs code (hooks, `core.fsmonitor`) and reading there
//! hands out history and credentials. No `allow` lifts it.

use globset::{Glob, GlobMatcher};
use loupe_core::RepoPath;
use loupe_core::config::DEFAULT_EXCLUDE_EXCEPTIONS;

/// The pattern reported for anything inside a `.git` directory (or a `.git` file).
const GIT_PATTERN: &str = ".git/";

#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    matcher: GlobMatcher,
    whole_path: bool,
}

#[derive(Debug, Clone)]
pub struct Exclusions {
    exclude: Vec<Rule>,
    allow: Vec<Rule>,
}

impl Exclusions {
    /// Compiles the lists; an invalid glob is reported with the pattern that failed.
    pub fn new(exclude: &[String], allow: &[String]) -> Result<Exclusions, String> {
        let mut allow_patterns: Vec<String> = allow.to_vec();
        allow_patterns.extend(DEFAULT_EXCLUDE_EXCEPTIONS.iter().map(|s| (*s).to_owned()));
        Ok(Exclusions { exclude: compile(exclude)?, allow: compile(&allow_patterns)? })
    }

    /// The exclude pattern that refuses `path`, unless an `allow` pattern lets it through.
    pub fn matching_pattern(&self, path: &RepoPath) -> Option<&str> {
        // Case-insensitively: on a case-insensitive file system `.GIT/hooks` is `.git/hooks`.
        if path.components().any(|component| component.eq_ignore_ascii_case(".git")) {
            return Some(GIT_PATTERN);
        }
        let hit = self.exclude.iter().find(|rule| rule.matches(path))?;
        if self.allow.iter().any(|rule| rule.matches(path)) {
            return None;
        }
        Some(&hit.pattern)
    }
}

impl Rule {
    fn matches(&self, path: &RepoPath) -> bool {
        if self.whole_path {
            return self.matcher.is_match(path.as_str());
        }
        path.components().any(|component| self.matcher.is_match(component))
    }
}

fn compile(patterns: &[String]) -> Result<Vec<Rule>, String> {
    patterns
        .iter()
        .map(|pattern| {
            let body = pattern.trim_end_matches('/');
            let whole_path = body.contains('/');
            let body = body.trim_start_matches('/');
            let glob = Glob::new(body).map_err(|error| format!("invalid pattern `{pattern}`: {error}"))?;
            Ok(Rule { pattern: pattern.clone(), matcher: glob.compile_matcher(), whole_path })
        })
        .collect()
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
        assert!(Exclusions::new(&["a[".into()], &[]).unwrap_err().contains("a["));
    }

    /// R14: an `allow` rule once lifted `.git/` by component (`.git/.env.example` was written).
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
