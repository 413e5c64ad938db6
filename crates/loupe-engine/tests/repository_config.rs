//! A hostile repository's own config (§3.1; findings R9 and R19 in docs/findings.md): what
//! `loupe.toml` or `.loupe/config.toml` at the root may change, and what only the user (their
//! config file, the environment or flags) may. Loaded through `config::load` as the server and the
//! CLI do, and once end to end through the engine.

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
    // ... and lift a default by `allow`; $XDG_CONFIG_HOME wins over $HOME/.config.
    let xdg = tempfile::tempdir().unwrap();
    write(xdg.path(), "loupe/config.toml", "allow = [\".env\"]\n");
    let mut with_xdg = sources(repo.path(), home.path());
    with_xdg.env.push(("XDG_CONFIG_HOME".into(), xdg.path().display().to_string()));
    let (config, _) = load(&with_xdg).unwrap();
    assert_eq!(excluded(&config, ".env"), None);
    assert_eq!(excluded(&config, ".git/config").as_deref(), Some(".git/"));
    // The environment and flags replace the `allow` list, as before.
    let mut with_env = sources(repo.path(), tempfile::tempdir().unwrap().path());
    with_env.env.push(("LOUPE_ALLOW".into(), ".env".into()));
    assert_eq!(excluded(&load(&with_env).unwrap().0, ".env"), None);
}

/// H3a: an exclusion added by a flag, `LOUPE_EXCLUDE` or the user's file (`--exclude build/`)
/// used to replace the default list, so `.env` and `id_rsa` were served. Every layer adds.
#[test]
fn h3a_an_added_exclusion_keeps_every_default() {
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut by_flag = sources(repo.path(), home.path());
    by_flag.flags.push(("exclude".into(), Value::from("build/")));
    let mut by_env = sources(repo.path(), home.path());
    by_env.env.push(("LOUPE_EXCLUDE".into(), "node_modules/".into()));
    let user_home = tempfile::tempdir().unwrap();
    write(user_home.path(), ".config/loupe/config.toml", "exclude = [\"dist/\"]\n");
    let by_user_file = sources(repo.path(), user_home.path());
    for (layer, sources, added) in [
        ("flag", by_flag, "build/x.js"),
        ("env", by_env, "node_modules/x.js"),
        ("user file", by_user_file, "dist/x.js"),
    ] {
        let (config, _) = load(&sources).unwrap();
        assert!(excluded(&config, added).is_some(), "{layer}: {added} not excluded");
        for secret in SECRETS {
            assert!(excluded(&config, secret).is_some(), "{layer}: {secret} is no longer excluded");
        }
    }
}

/// H3: exclusions matched names byte for byte, so `.ENV`, `ID_RSA` or `SERVER.PEM` were served,
/// though macOS and Windows open them as the secret. They match without regard to case, to
/// Unicode composition, and to the spellings Windows resolves (trailing dots and spaces, an
/// NTFS stream), on every platform; `allow` stays exact.
#[test]
fn h3_secrets_by_another_spelling_are_excluded() {
    let config = Config::default();
    for secret in [
        ".Env",
        ".ENV",
        ".ENV.PRODUCTION",
        "ID_RSA",
        "keys/Id_Ed25519.PUB",
        "SERVER.PEM",
        "tls.Key",
        "Credentials.JSON",
        ".NPMRC",
        ".PyPiRc",
        "cert.P12",
        "cert.PFX",
        ".env.",
        ".env ",
        ".env::$DATA",
        "sub/.GIT/config",
        ".git./config",
        "cert:old.PEM",
        "keys/id_rsa:backup",
        "\u{2126}/.env",
    ] {
        assert!(excluded(&config, secret).is_some(), "{secret:?} is served");
    }
    // A user pattern written composed matches a name stored decomposed (as macOS writes it).
    let with_accent = Config { exclude: vec!["caf\u{e9}/".into()], ..Config::default() };
    assert_eq!(excluded(&with_accent, "cafe\u{301}/menu.txt").as_deref(), Some("caf\u{e9}/"));
    assert_eq!(excluded(&with_accent, "CAF\u{c9}/menu.txt").as_deref(), Some("caf\u{e9}/"));
    // Templates stay readable, and ordinary names are not caught.
    for path in [".env.example", ".env.sample", "src/environment.rs", "docs/KEYS.md", "pem.rs"] {
        assert_eq!(excluded(&config, path), None, "{path}");
    }
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
        assert_eq!(config.max_range_lines, Config::default().max_range_lines, "a gate setting is the user's");
        for key in ["index_dir", "read_only", "root", "max_range_lines"] {
            assert!(
                warnings.iter().any(|w| w.contains(&format!("`{key}` is ignored in a repository's own config"))),
                "{file}: no warning names `{key}`: {warnings:?}"
            );
        }
        assert!(!is_set(&sources, &config, "index_dir"));
        assert!(!is_set(&sources, &config, "max_range_lines"));
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
    loupe_vfs::testing::symlink(outside.path().join("credentials"), repo.path().join("loupe.toml")).unwrap();
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    assert_eq!(config.exclude, Config::default().exclude);
    assert!(warnings.iter().any(|w| w.contains("symbolic link")), "{warnings:?}");
    assert!(!warnings.iter().any(|w| w.contains("AKIA")), "{warnings:?}");

    // `.loupe` as a link to a directory outside.
    fs::remove_file(repo.path().join("loupe.toml")).unwrap();
    write(outside.path(), "config.toml", "gate_mode = \"off\"\n");
    loupe_vfs::testing::symlink(outside.path(), repo.path().join(".loupe")).unwrap();
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
    write(repo.path(), "loupe.toml", "exclude = []\nallow = [\".env\"]\n");
    write(repo.path(), ".env", "SECRET=hunter2\n");
    write(repo.path(), "src/lib.rs", "pub fn a() {}\n");
    let mut sources = sources(repo.path(), home.path());
    sources.flags.push(("index_dir".into(), Value::from(index.path().display().to_string())));
    sources.flags.push(("analytics".into(), Value::Bool(false)));
    sources.flags.push(("gate_mode".into(), Value::from("off")));
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

/// H4: a repository's `loupe.toml` raised the per-answer ceilings (a 13 MB file answered whole),
/// turned the session gate off and listed the legacy tools. It may set `exclude` and `allow`
/// only; every other key is the user's, ignored there with a warning that says where to set it.
#[test]
fn h4_a_repository_config_sets_only_exclude_and_allow() {
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let keys = [
        ("max_single_read_lines", "100000000"),
        ("max_preview_chars", "100000000"),
        ("max_response_tokens", "100000000"),
        ("max_file_bytes", "100000000000"),
        ("max_index_file_bytes", "100000000000"),
        ("gate_mode", "\"off\""),
        ("relevance", "\"off\""),
        ("max_reads_per_session", "100000000"),
        ("max_total_read_lines", "100000000"),
        ("legacy_tools", "\"listed\""),
        ("structured_content", "\"full\""),
        ("dedup_window_tokens", "1"),
        ("analytics", "false"),
        ("strict_session_id", "true"),
        ("session_ttl_secs", "100000000"),
        ("log", "\"trace\""),
    ];
    let text: String = keys.iter().map(|(key, value)| format!("{key} = {value}\n")).collect();
    write(repo.path(), "loupe.toml", &format!("{text}exclude = [\"gen/\"]\n"));
    let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
    let mut expected = Config::default();
    expected.exclude.push("gen/".into());
    expected.root = config.root.clone();
    expected.root_chosen_by = config.root_chosen_by.clone();
    assert_eq!(format!("{config:?}"), format!("{expected:?}"), "{warnings:?}");
    for (key, _) in keys {
        assert!(
            warnings.iter().any(|w| w.contains(&format!("`{key}` is ignored in a repository's own config"))
                && w.contains(&loupe_core::config::Key::named(key).unwrap().flag.typed(key))),
            "no warning names `{key}`: {warnings:?}"
        );
    }
}

/// H4: a malformed or hostile repository config stopped the server at start (a nesting bomb
/// overflowed the parser's stack; a wrong type or a parse error was fatal). Now it is ignored
/// with one warning, and the warning quotes nothing of the file; a file with another hard link
/// (which may be a file outside the root) is not read at all.
#[test]
fn h4_a_hostile_repository_config_never_stops_the_server() {
    let bomb = format!("exclude = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(&str, String, &str)> = vec![
        ("nesting", bomb, "nests arrays or tables deeper"),
        ("inline tables", format!("a = {}1{}\n", "{b = ".repeat(50_000), "}".repeat(50_000)), "nests"),
        ("wrong type", "exclude = 42\n".into(), "the key is ignored"),
        ("wrong list item", "allow = [{ a = 1 }]\n".into(), "the key is ignored"),
        ("not toml", "aws_secret_access_key = AKIA-not-toml [\n".into(), "not valid TOML (line 1)"),
    ];
    for (case, text, expected) in cases {
        let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(repo.path(), "loupe.toml", &text);
        let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(config.exclude, Config::default().exclude, "{case}");
        assert!(warnings.iter().any(|w| w.contains(expected)), "{case}: {warnings:?}");
        assert!(!warnings.iter().any(|w| w.contains("AKIA")), "{case}: {warnings:?}");
    }
    // A hard link to a file outside the root (same file system): its text is never read.
    let (repo, home, outside) = (
        tempfile::tempdir_in(std::env::temp_dir()).unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    write(outside.path(), "credentials", "aws_secret_access_key = AKIA-not-toml [\n");
    if fs::hard_link(outside.path().join("credentials"), repo.path().join("loupe.toml")).is_ok() {
        let (config, warnings) = load(&sources(repo.path(), home.path())).unwrap();
        assert_eq!(config.exclude, Config::default().exclude);
        assert!(warnings.iter().any(|w| w.contains("other hard links")), "{warnings:?}");
        assert!(!warnings.iter().any(|w| w.contains("AKIA")), "{warnings:?}");
    }
}
