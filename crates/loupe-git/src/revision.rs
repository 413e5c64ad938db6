//! Revisions as a baseline: a branch, a tag, a commit id, `HEAD~2`, `v1^`, `@{upstream}`, and
//! the ranges `A..B` (the two commits) and `A...B` (the merge base of `A` and `B`, and `B`: what
//! `B` did since it forked), resolved in-process with gix's `rev_parse` and `merge_base`.
//!
//! A side left empty is `HEAD` on the left (`..B`) and the working tree on the right (`main...`
//! is what this branch did, uncommitted work included, as `git diff main...` shows it; `main..`
//! is `main`). Every side must name a commit (a tag is peeled to it); a blob or tree spec
//! (`HEAD:src`) is refused like an unknown name.

use gix::bstr::ByteSlice;

use crate::{GitError, Repository, read_error};

/// A side of a comparison: a commit and the name it was given by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub name: String,
    pub commit: gix::ObjectId,
}

/// A revision argument, resolved: the commit whose files are the old side, and the new side
/// when it is a commit rather than the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The old side (for `A...B`, the merge base, named `merge base`).
    pub old: Side,
    /// The new side; `None`: the working tree.
    pub new: Option<Side>,
    /// For `A...B`: the two tips whose merge base `old` is.
    pub merge_base_of: Option<[Side; 2]>,
}

/// Why a revision argument does not resolve.
#[derive(Debug)]
pub enum RevisionError {
    /// No commit by that name (`name` is the side that failed; `message` is gix's reason).
    Unknown {
        name: String,
        message: String,
    },
    /// `A...B` where the two have no common history, or where the history that would hold it
    /// was not fetched (`shallow`: the repository is a shallow clone).
    NoMergeBase {
        left: String,
        right: String,
        shallow: bool,
    },
    Git(GitError),
}

impl std::fmt::Display for RevisionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RevisionError::Unknown { name, message } => write!(f, "`{name}` does not name a commit here: {message}"),
            RevisionError::NoMergeBase { left, right, shallow: true } => write!(
                f,
                "no merge base of `{left}` and `{right}` in this shallow clone: the commit they share was not fetched"
            ),
            RevisionError::NoMergeBase { left, right, shallow: false } => {
                write!(f, "`{left}` and `{right}` share no history: they have no merge base")
            }
            RevisionError::Git(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for RevisionError {}

impl Repository {
    /// Resolves a revision argument (see the module comment for its forms).
    pub fn resolve(&self, spec: &str) -> Result<Resolved, RevisionError> {
        let spec = spec.trim();
        if let Some((left, right)) = spec.split_once("...") {
            let (left, right) = (side(left), right.trim());
            let left_id = self.commit(left)?;
            let (right_name, right_id) =
                if right.is_empty() { ("HEAD", self.commit("HEAD")?) } else { (right, self.commit(right)?) };
            let base =
                self.repo.merge_base(left_id, right_id).map_err(|error| RevisionError::Git(read_error(error)))?;
            let Some(base) = base else {
                return Err(RevisionError::NoMergeBase {
                    left: left.to_owned(),
                    right: right_name.to_owned(),
                    shallow: self.repo.is_shallow().unwrap_or(false),
                });
            };
            let right_side = Side { name: right_name.to_owned(), commit: right_id };
            return Ok(Resolved {
                old: Side { name: "merge base".into(), commit: base.detach() },
                new: (!right.is_empty()).then(|| right_side.clone()),
                merge_base_of: Some([Side { name: left.to_owned(), commit: left_id }, right_side]),
            });
        }
        let named = |name: &str| self.commit(name).map(|commit| Side { name: name.to_owned(), commit });
        if let Some((left, right)) = spec.split_once("..") {
            let right = right.trim();
            let new = if right.is_empty() { None } else { Some(named(right)?) };
            return Ok(Resolved { old: named(side(left))?, new, merge_base_of: None });
        }
        Ok(Resolved { old: named(spec)?, new: None, merge_base_of: None })
    }

    /// The commit a name resolves to (a tag peeled to its commit).
    pub fn commit(&self, name: &str) -> Result<gix::ObjectId, RevisionError> {
        let unknown = |message: String| RevisionError::Unknown { name: name.to_owned(), message };
        // `rev_parse` reads `:/text` as a search of commit messages and `A^{/text}` alike: a
        // walk of the whole history for an argument that is a name; refused as not one.
        if name.is_empty() || name.contains(":/") || name.contains("{/") {
            return Err(unknown("not a revision name".into()));
        }
        let id = self.repo.rev_parse_single(name.as_bytes().as_bstr()).map_err(|error| {
            // gix says "couldn't parse revision" of a plain name it has no reference for.
            let plain = name.chars().all(|c| c.is_alphanumeric() || "_-./".contains(c));
            unknown(if plain { "no branch, tag or commit by that name".into() } else { error.to_string() })
        })?;
        let object = id.object().map_err(|error| unknown(error.to_string()))?;
        let commit = object.peel_to_commit().map_err(|_| unknown("it names an object that is not a commit".into()))?;
        Ok(commit.id)
    }

    /// The short names of the branches, remote branches and tags, for a name that did not
    /// resolve (the caller ranks them by nearness).
    pub fn ref_names(&self) -> Vec<String> {
        let Ok(references) = self.repo.references() else { return Vec::new() };
        let Ok(all) = references.all() else { return Vec::new() };
        let mut names: Vec<String> = all
            .filter_map(Result::ok)
            .map(|reference| reference.name().shorten().to_str_lossy().into_owned())
            .filter(|name| name != "HEAD" && !name.ends_with("/HEAD"))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// A commit id as `git log --oneline` shows it: its first 7 hex digits.
    pub fn short(&self, id: gix::ObjectId) -> String {
        id.to_hex_with_len(7).to_string()
    }
}

/// A range's left side, `HEAD` when it is left out (`..main`, `...main`).
fn side(name: &str) -> &str {
    let name = name.trim();
    if name.is_empty() { "HEAD" } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    fn commit(dir: &std::path::Path, file: &str, text: &str) -> gix::ObjectId {
        std::fs::write(dir.join(file), text).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", text]);
        gix::ObjectId::from_hex(git(dir, &["rev-parse", "HEAD"]).as_bytes()).unwrap()
    }

    /// main: a ─ b ─ d (main moved on after the fork); feature: b ─ c.
    #[test]
    fn every_form_resolves_to_the_commit_git_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q"]);
        let a = commit(&root, "a.txt", "a");
        let b = commit(&root, "a.txt", "b");
        git(&root, &["tag", "-a", "v1", "-m", "v1"]);
        git(&root, &["checkout", "-qb", "feature"]);
        let c = commit(&root, "c.txt", "c");
        git(&root, &["checkout", "-q", "main"]);
        let d = commit(&root, "d.txt", "d");
        git(&root, &["checkout", "-q", "feature"]);
        let repo = Repository::discover(&root).unwrap();

        let single = |spec: &str| repo.resolve(spec).unwrap();
        let side = |name: &str, commit| Side { name: name.into(), commit };
        assert_eq!(single("main"), Resolved { old: side("main", d), new: None, merge_base_of: None });
        assert_eq!(single("v1").old.commit, b, "an annotated tag is peeled to its commit");
        assert_eq!(single(&a.to_hex_with_len(6).to_string()).old.commit, a);
        assert_eq!(single("HEAD~1").old.commit, b);
        assert_eq!(single("main^").old.commit, b);
        assert_eq!(
            single("main..feature"),
            Resolved { old: side("main", d), new: Some(side("feature", c)), merge_base_of: None }
        );
        let three = single("main...");
        assert_eq!((three.old, three.new), (side("merge base", b), None), "from the merge base, to the worktree");
        assert_eq!(three.merge_base_of, Some([side("main", d), side("HEAD", c)]));
        assert_eq!(single("main...feature").new, Some(side("feature", c)));
        assert_eq!(single("feature...main").old.commit, b);

        for bad in ["nope", "main...nope", "HEAD:a.txt", ":/b", "HEAD^{/b}", ""] {
            assert!(matches!(repo.resolve(bad), Err(RevisionError::Unknown { .. })), "{bad}");
        }
        let error = repo.resolve("mian").unwrap_err().to_string();
        assert_eq!(error, "`mian` does not name a commit here: no branch, tag or commit by that name");
        let names = repo.ref_names();
        assert_eq!(names, ["feature", "main", "v1"]);
        assert_eq!(repo.short(a).len(), 7);

        // Unrelated history has no merge base.
        git(&root, &["checkout", "-q", "--orphan", "alone"]);
        commit(&root, "z.txt", "z");
        let error = repo.resolve("main...alone").unwrap_err();
        assert!(matches!(error, RevisionError::NoMergeBase { shallow: false, .. }), "{error}");
    }
}
