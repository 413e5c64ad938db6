//! A hostile repository's own config (§3.1, issue 14 R9 and R19): what `loupe.toml` or
//! `.loupe/config.toml` at the root may change, and what only the user (their config file,
//! the environment or flags) may. Loaded through `config::load` as the server and the CLI do,
//! and once end to end through the engine.

use std::fs;
use std::path::Path;

use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_core::{Config, RepoPath};
use loupe_engine::Engine;
use loupe_engine::config::{Sources, is_set, load};
use loupe_vfs::Exclusions;
use serde_json::{Value, json};

fn write(dir: &Path, path: &str, text: &str) {
    let full = dir.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, text).unwrap();
}

/// Sources for a repository at `root` with no user config file (`HOME` names an empty
/// directory) unless the test writes one.
fn sources(root: &Path, home: &Path) -> Sources {
    Sources {
        current_dir: root.to_path_buf(),
        env: vec![("HOME".into(), home.display().to_string())],
        ..Sources::default()
    }
}

fn excluded(config: &Config, path: &str) -> Option<String> {
    let exclusions = Exclusions::new(&config.exclude, &config.allow).unwrap();
    exclusions.matching_pattern(&RepoPath::normalize(path).unwrap()).map(str::to_owned)
}

const SECRETS: &[&str] = &[
    ".env",
    "app/.env.production",
    "deploy/prod.pem",
    "tls.key",
    "id_rsa",
    "home/id_ed25519.pub",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "credentials.json",
    ".git/config",
    "sub/.git/HEAD",
];

#[test]
fn r9_repository_config_cannot_drop_secret_exclusions() {
    for file in ["loupe.toml", ".loupe/config.toml"] {
        let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(repo.path(), file, "exclude = []\n");
        let (config, _) = load(&sources(repo.path(), home.path())).unwrap();
        for pattern in DEFAULT_EXCLUDE {
            assert!(config.exclude.iter().any(|kept| kept == pattern), "{file}: `{pattern}` dropped");
        }
        for secret in SECRETS {
            assert!(excluded(&config, secret).is_some(), "{file}: {secret} is no longer excluded");
        }

        // A list there adds to the defaults.
        write(repo.path(), file, "exclude = [\"build/\", \"*.log\"]\n");
        let (config, _) = load(&sources(repo.path(), home.path())).unwrap();
        assert_eq!(excluded(&config, "build/out.js").as_deref(), Some("build/"));
        assert_eq!(excluded(&config, "run.log").as_deref(), Some("*.log"));
        assert_eq!(excluded(&config, ".env").as_deref(), Some(".env"));
        assert_eq!(excluded(&config, "src/main.rs"), None);
    }
}

#[test]
fn r9_repository_config_cannot_allow_default_secrets_or_git() {
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        repo.path(),
        "loupe.toml",
        "allow = [\".env\", \"*.pem\", \"deploy/prod.pem\", \"notes\", \".git/config\", \"**\", \"secrets/\", \
         \"credentials.json\"]\n",
    );
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    for secret in SECRETS.iter().chain(&["notes/.env", "x/notes/id_rsa"]) {
        assert!(excluded(&config, secret).is_some(), "{secret} was lifted by the repository: {:?}", config.allow);
    }
    let warned = |entry: &str| warnings.iter().any(|w| w.contains(&format!("`allow` entry `{entry}` is ignored")));
    for entry in [".env", "*.pem", "deploy/prod.pem", ".git/config", "**", "secrets/", "credentials.json"] {
        assert!(warned(entry), "no warning for `{entry}`: {warnings:?}");
    }
    // `notes` names one file at the root, which nothing excludes: kept, but it lifts nothing
    // beneath a directory of that name.
    assert_eq!(excluded(&config, "notes/.env").as_deref(), Some(".env"));
}

#[test]
fn r9_repository_config_may_allow_a_file_it_excluded_itself() {
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(repo.path(), "loupe.toml", "exclude = [\"fixtures/\"]\nallow = [\"fixtures/keep.txt\"]\n");
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(excluded(&config, "fixtures/keep.txt"), None);
    assert_eq!(excluded(&config, "fixtures/other.txt").as_deref(), Some("fixtures/"));
    assert_eq!(excluded(&config, "fixtures/keep.txt/.env").as_deref(), Some(".env"));
}

#[test]
fn r9_user_config_environment_and_flags_keep_full_power() {
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(repo.path(), "loupe.toml", "allow = [\"test/fixture.pem\"]\n");
    // The user's own file (under $HOME/.config) may lift a default for a named file...
    write(home.path(), ".config/loupe/config.toml", "allow = [\"test/fixture.pem\"]\n");
    let (config, _) = load(&sources(repo.path(), home.path())).unwrap();
    assert_eq!(excluded(&config, "test/fixture.pem"), None);
    assert_eq!(excluded(&config, "other.pem").as_deref(), Some("*.pem"));
    // ... and replace the list; $XDG_CONFIG_HOME wins over $HOME/.config.
    let xdg = tempfile::tempdir().unwrap();
    write(xdg.path(), "loupe/config.toml", "exclude = [\".git/\"]\n");
    let mut with_xdg = sources(repo.path(), home.path());
    with_xdg.env.push(("XDG_CONFIG_HOME".into(), xdg.path().display().to_string()));
    let (config, _) = load(&with_xdg).unwrap();
    assert_eq!(excluded(&config, ".env"), None);
    assert_eq!(excluded(&config, ".git/config").as_deref(), Some(".git/"));
    // The environment and flags replace the lists, as before.
    let mut with_env = sources(repo.path(), tempfile::tempdir().unwrap().path());
    with_env.env.push(("LOUPE_ALLOW".into(), ".env".into()));
    assert_eq!(excluded(&load(&with_env).unwrap().0, ".env"), None);
    with_env.flags.push(("exclude".into(), Value::from("*.log")));
    let (config, _) = load(&with_env).unwrap();
    assert_eq!(config.exclude, vec!["*.log"]);
}

#[test]
fn r19_repository_config_cannot_place_the_index_or_journal_nor_set_read_only() {
    for file in ["loupe.toml", ".loupe/config.toml"] {
        let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(repo.path(), file, "index_dir = \"journal-here\"\nread_only = true\nroot = \"/\"\nmax_range_lines = 7\n");
        let sources = sources(repo.path(), home.path());
        let (config, warnings) = load(&sources).unwrap();
        assert_eq!(config.index_dir, None, "{file}");
        assert!(!config.read_only, "{file}");
        assert_eq!(config.root.as_deref(), Some(repo.path()));
        assert_eq!(config.max_range_lines, 7, "the other keys still apply");
        for key in ["index_dir", "read_only", "root"] {
            assert!(
                warnings.iter().any(|w| w.contains(&format!("`{key}` is ignored in a repository's own config"))),
                "{file}: no warning names `{key}`: {warnings:?}"
            );
        }
        assert!(!is_set(&sources, &config, "index_dir"));
        assert!(is_set(&sources, &config, "max_range_lines"));
    }
    // The user's file, the environment and flags may.
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(home.path(), ".config/loupe/config.toml", "index_dir = \"/var/cache/mine\"\nread_only = true\n");
    let mut sources = sources(repo.path(), home.path());
    let (config, _) = load(&sources).unwrap();
    assert_eq!(config.index_dir.as_deref(), Some(Path::new("/var/cache/mine")));
    assert!(config.read_only);
    assert!(is_set(&sources, &config, "index_dir"));
    sources.env.push(("LOUPE_INDEX_DIR".into(), "/var/cache/env".into()));
    assert_eq!(load(&sources).unwrap().0.index_dir.as_deref(), Some(Path::new("/var/cache/env")));
}

#[test]
fn r9_repository_config_is_not_read_through_a_link_or_a_fifo() {
    let (repo, home, outside) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // A link to a file outside the root: a parse error would echo its first line.
    write(outside.path(), "credentials", "aws_secret_access_key = AKIA-not-toml [\n");
    std::os::unix::fs::symlink(outside.path().join("credentials"), repo.path().join("loupe.toml")).unwrap();
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    assert_eq!(config.exclude, Config::default().exclude);
    assert!(warnings.iter().any(|w| w.contains("symbolic link")), "{warnings:?}");
    assert!(!warnings.iter().any(|w| w.contains("AKIA")), "{warnings:?}");

    // `.loupe` as a link to a directory outside.
    fs::remove_file(repo.path().join("loupe.toml")).unwrap();
    write(outside.path(), "config.toml", "gate_mode = \"off\"\n");
    std::os::unix::fs::symlink(outside.path(), repo.path().join(".loupe")).unwrap();
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    assert_eq!(config.gate_mode, Config::default().gate_mode, "{warnings:?}");

    // A FIFO never blocks start-up.
    fs::remove_file(repo.path().join(".loupe")).unwrap();
    let made = std::process::Command::new("mkfifo").arg(repo.path().join("loupe.toml")).status().unwrap();
    assert!(made.success());
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    assert_eq!(config.exclude, Config::default().exclude);
    assert!(warnings.iter().any(|w| w.contains("not a regular file")), "{warnings:?}");
}

/// End to end: a repository whose `loupe.toml` says `exclude = []` (and tries to allow the
/// file by name) still gets `PATH_EXCLUDED` for `.env`, through the engine's `read`.
#[test]
fn r9_repository_config_cannot_drop_secret_exclusions_end_to_end() {
    let (repo, home, index) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(repo.path(), "loupe.toml", "exclude = []\nallow = [\".env\"]\ngate_mode = \"off\"\n");
    write(repo.path(), ".env", "SECRET=hunter2\n");
    write(repo.path(), "src/lib.rs", "pub fn a() {}\n");
    let mut sources = sources(repo.path(), home.path());
    sources.flags.push(("index_dir".into(), Value::from(index.path().display().to_string())));
    sources.flags.push(("analytics".into(), Value::Bool(false)));
    let (config, _) = load(&sources).unwrap();
    let engine = Engine::new(config).unwrap();
    for target in [".env", "./.env"] {
        let response = engine.call("read", json!({"mode": "file", "target": target}));
        assert_eq!(response.error_code(), Some("PATH_EXCLUDED"), "{}", response.face);
        assert!(!response.face.contains("hunter2"), "{}", response.face);
    }
    let response = engine.call("read", json!({"mode": "file", "target": "src/lib.rs"}));
    assert!(response.ok, "{}", response.face);
}
