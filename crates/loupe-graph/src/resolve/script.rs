//! TypeScript and JavaScript: relative specifiers with extension probing, `tsconfig.json` /
//! `jsconfig.json` `paths` and `baseUrl` (the nearest config above the importer, following
//! `extends`), and workspace packages (every `package.json` with a `name`; a directory
//! matched by some `workspaces` glob wins a name clash).
//!
//! Probing follows TypeScript's `bundler`/`node` resolution: the written path, a written
//! `.js`/`.jsx`/`.mjs`/`.cjs` naming a `.ts`/`.tsx`/`.mts`/`.cts` source, the path plus
//! `.ts .tsx .d.ts .js .jsx .mjs .cjs .mts .cts`, then `index.*` inside it. Must not look into
//! `node_modules` conventions beyond what the file list holds.

use loupe_syntax::Import;
use rustc_hash::FxHashMap;
use serde_json::Value;

use super::Found;
use super::files::{FileId, Files, ancestors, file_name, join, join_normalized, parent};

/// Extensions tried after a specifier, in order.
const EXTENSIONS: [&str; 9] = [".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
/// How many `extends` links are followed from one config.
const MAX_EXTENDS: usize = 4;

/// The workspace's TypeScript configs and packages.
pub(crate) struct ScriptLayout {
    /// Directory → the `tsconfig.json` (else `jsconfig.json`) there, `extends` applied.
    configs: FxHashMap<Box<str>, Config>,
    /// Package name → the package.
    packages: FxHashMap<Box<str>, Package>,
}

/// The module-resolution part of a compiler config.
#[derive(Debug, Clone, Default)]
struct Config {
    /// `compilerOptions.baseUrl`, as a workspace directory.
    base_url: Option<String>,
    paths: Vec<PathPattern>,
    /// The directory `paths` targets are relative to (`baseUrl`, else the declaring config's).
    paths_base: String,
}

/// One `paths` (or `exports`) entry: `prefix*suffix` → targets.
#[derive(Debug, Clone)]
struct PathPattern {
    prefix: String,
    /// `None` for a pattern without `*` (an exact match).
    suffix: Option<String>,
    targets: Vec<String>,
}

struct Package {
    dir: Box<str>,
    entry: Option<FileId>,
    /// `exports` subpaths (`./feature` or `./*`) with targets relative to `dir`.
    exports: Vec<PathPattern>,
    in_workspaces: bool,
}

impl ScriptLayout {
    pub(crate) fn new(files: &Files, read: &dyn Fn(FileId) -> Option<String>) -> ScriptLayout {
        let packages = read_packages(files, read);
        let mut configs = FxHashMap::default();
        let mut cache: FxHashMap<FileId, Option<Config>> = FxHashMap::default();
        for name in ["jsconfig.json", "tsconfig.json"] {
            for &id in files.named(name) {
                let dir = parent(files.path(id).as_str());
                if let Some(config) = load_config(files, read, &packages, id, 0, &mut cache) {
                    configs.insert(dir.into(), config);
                }
            }
        }
        ScriptLayout { configs, packages }
    }

    pub(crate) fn package_count(&self) -> usize {
        self.packages.len()
    }

    pub(crate) fn resolve(&self, files: &Files, from: &str, import: &Import, found: &mut Found) {
        let specifier = import.module.as_str();
        let from_dir = parent(from);
        if is_relative(specifier) {
            let clean = specifier.split(['?', '#']).next().unwrap_or(specifier);
            match join_normalized(from_dir, clean).and_then(|base| probe(files, &base)) {
                Some(id) => found.file(id),
                None => found.external(specifier),
            }
            return;
        }
        if specifier.is_empty() || specifier.starts_with('/') || specifier.contains("${") || specifier.contains("://") {
            // Absolute paths, template strings, URLs: kept whole.
            found.external(specifier);
            return;
        }
        if specifier.contains(':') {
            // `node:fs`, `bun:test`: built-in modules.
            found.external(package_name(specifier).0);
            return;
        }
        if let Some(id) = self.through_config(files, from_dir, specifier) {
            found.file(id);
            return;
        }
        let (name, subpath) = package_name(specifier);
        if let Some(id) = self.packages.get(name).and_then(|package| package_file(files, package, subpath)) {
            found.file(id);
            return;
        }
        found.external(name);
    }

    /// A bare specifier through the nearest config's `paths`, then its `baseUrl`.
    fn through_config(&self, files: &Files, from_dir: &str, specifier: &str) -> Option<FileId> {
        let config = ancestors(from_dir).find_map(|dir| self.configs.get(dir))?;
        if let Some((pattern, star)) = best_pattern(&config.paths, specifier) {
            for target in &pattern.targets {
                let target = target.replacen('*', star, 1);
                if let Some(id) = join_normalized(&config.paths_base, &target).and_then(|base| probe(files, &base)) {
                    return Some(id);
                }
            }
        }
        let base_url = config.base_url.as_deref()?;
        join_normalized(base_url, specifier).and_then(|base| probe(files, &base))
    }
}

fn is_relative(specifier: &str) -> bool {
    specifier == "." || specifier == ".." || specifier.starts_with("./") || specifier.starts_with("../")
}

/// The package a bare specifier names (`@scope/pkg` kept whole) and the subpath after it.
fn package_name(specifier: &str) -> (&str, &str) {
    let mut slashes = specifier.match_indices('/').map(|(index, _)| index);
    let cut = if specifier.starts_with('@') { slashes.nth(1) } else { slashes.next() };
    match cut {
        Some(index) => (&specifier[..index], &specifier[index + 1..]),
        None => (specifier, ""),
    }
}

/// The file a path without (or with) an extension names: the path itself, a TypeScript
/// source for a written `.js`, the path plus an extension, `index.*` inside it.
fn probe(files: &Files, base: &str) -> Option<FileId> {
    if let Some(id) = files.id(base) {
        return Some(id);
    }
    let name = file_name(base);
    if let Some((stem_len, written)) = name.rfind('.').map(|dot| (base.len() - name.len() + dot, &name[dot..])) {
        let sources: &[&str] = match written {
            ".js" => &[".ts", ".tsx", ".d.ts"],
            ".jsx" => &[".tsx"],
            ".mjs" => &[".mts", ".d.mts"],
            ".cjs" => &[".cts", ".d.cts"],
            _ => &[],
        };
        let stem = &base[..stem_len];
        for source in sources {
            if let Some(id) = files.id(&format!("{stem}{source}")) {
                return Some(id);
            }
        }
    }
    let mut candidate = String::with_capacity(base.len() + 10);
    for directory_index in [false, true] {
        if directory_index && !files.is_dir(base) {
            break;
        }
        for extension in EXTENSIONS {
            candidate.clear();
            candidate.push_str(base);
            if directory_index {
                if !base.is_empty() {
                    candidate.push('/');
                }
                candidate.push_str("index");
            }
            candidate.push_str(extension);
            if let Some(id) = files.id(&candidate) {
                return Some(id);
            }
        }
    }
    None
}

/// `probe`, then the same path with a build directory (`dist/`, `lib/`, `build/`, `out/`)
/// swapped for `src/`: a package's `main` usually names build output the workspace lacks.
fn probe_target(files: &Files, dir: &str, target: &str) -> Option<FileId> {
    let target = target.trim_start_matches("./");
    if let Some(id) = join_normalized(dir, target).and_then(|base| probe(files, &base)) {
        return Some(id);
    }
    let (build, rest) = target.split_once('/')?;
    if !matches!(build, "dist" | "lib" | "build" | "out" | "esm" | "cjs") {
        return None;
    }
    let rest = rest.strip_prefix("esm/").or_else(|| rest.strip_prefix("cjs/")).unwrap_or(rest);
    let stem = rest.strip_suffix(".d.ts").unwrap_or(rest);
    join_normalized(dir, &format!("src/{stem}")).and_then(|base| probe(files, &base))
}

/// The first of `targets` (paths relative to `dir`) naming a file; a TypeScript source
/// (`.ts`, not `.d.ts`) goes first, since a package that ships its source through a custom
/// condition (`"@zod/source": "./src/index.ts"`) is better read there than in its build output.
fn pick_target<'t>(files: &Files, dir: &str, targets: impl Iterator<Item = &'t str> + Clone) -> Option<FileId> {
    let is_source = |target: &str| {
        let name = file_name(target);
        [".ts", ".tsx", ".mts", ".cts"].iter().any(|extension| name.ends_with(extension)) && !name.contains(".d.")
    };
    let sources = targets.clone().filter(|target| is_source(target));
    sources.chain(targets.filter(|target| !is_source(target))).find_map(|target| probe_target(files, dir, target))
}

/// The file `package` + `subpath` names: its entry, an `exports` subpath, or the subpath
/// probed inside the package.
fn package_file(files: &Files, package: &Package, subpath: &str) -> Option<FileId> {
    if subpath.is_empty() {
        return package.entry;
    }
    let key = format!("./{subpath}");
    if let Some((pattern, star)) = best_pattern(&package.exports, &key) {
        let targets: Vec<String> = pattern.targets.iter().map(|target| target.replacen('*', star, 1)).collect();
        if let Some(id) = pick_target(files, &package.dir, targets.iter().map(String::as_str)) {
            return Some(id);
        }
    }
    probe_target(files, &package.dir, subpath)
}

/// The pattern matching `specifier` with the longest prefix, and the text `*` stands for.
fn best_pattern<'p, 's>(patterns: &'p [PathPattern], specifier: &'s str) -> Option<(&'p PathPattern, &'s str)> {
    let mut best: Option<(&PathPattern, &str)> = None;
    for pattern in patterns {
        let star = match &pattern.suffix {
            None if pattern.prefix == specifier => return Some((pattern, "")),
            None => continue,
            Some(suffix) => {
                let fits = specifier.len() >= pattern.prefix.len() + suffix.len()
                    && specifier.starts_with(pattern.prefix.as_str())
                    && specifier.ends_with(suffix.as_str());
                if !fits {
                    continue;
                }
                &specifier[pattern.prefix.len()..specifier.len() - suffix.len()]
            }
        };
        if best.is_none_or(|(current, _)| pattern.prefix.len() > current.prefix.len()) {
            best = Some((pattern, star));
        }
    }
    best
}

fn pattern(key: &str, targets: Vec<String>) -> PathPattern {
    match key.split_once('*') {
        Some((prefix, suffix)) => PathPattern { prefix: prefix.to_owned(), suffix: Some(suffix.to_owned()), targets },
        None => PathPattern { prefix: key.to_owned(), suffix: None, targets },
    }
}

/// Reads a config and the configs it extends (the nearer config's settings win).
fn load_config(
    files: &Files,
    read: &dyn Fn(FileId) -> Option<String>,
    packages: &FxHashMap<Box<str>, Package>,
    id: FileId,
    depth: usize,
    cache: &mut FxHashMap<FileId, Option<Config>>,
) -> Option<Config> {
    if let Some(config) = cache.get(&id) {
        return config.clone();
    }
    // A cycle reads as no config rather than recursing forever.
    cache.insert(id, None);
    let value = parse_jsonc(&read(id)?)?;
    let dir = parent(files.path(id).as_str());
    let mut config = Config { paths_base: dir.to_owned(), ..Config::default() };
    let mut inherited_paths = false;
    if depth < MAX_EXTENDS {
        let extends: Vec<&str> = match value.get("extends") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for target in extends {
            let Some(base_id) = extended_config(files, packages, dir, target) else { continue };
            let Some(base) = load_config(files, read, packages, base_id, depth + 1, cache) else { continue };
            if base.base_url.is_some() {
                config.base_url = base.base_url;
            }
            if !base.paths.is_empty() {
                config.paths = base.paths;
                config.paths_base = base.paths_base;
                inherited_paths = true;
            }
        }
    }
    let options = value.get("compilerOptions");
    if let Some(base_url) = options.and_then(|options| options.get("baseUrl")).and_then(Value::as_str) {
        config.base_url = join_normalized(dir, base_url);
        if inherited_paths && let Some(base_url) = &config.base_url {
            config.paths_base = base_url.clone();
        }
    }
    if let Some(Value::Object(paths)) = options.and_then(|options| options.get("paths")) {
        config.paths = paths
            .iter()
            .map(|(key, targets)| {
                let targets = match targets {
                    Value::Array(list) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                    Value::String(one) => vec![one.clone()],
                    _ => Vec::new(),
                };
                pattern(key, targets)
            })
            .collect();
        config.paths_base = config.base_url.clone().unwrap_or_else(|| dir.to_owned());
    }
    cache.insert(id, Some(config.clone()));
    Some(config)
}

/// The file an `extends` names: relative to the config, or inside a workspace package.
fn extended_config(files: &Files, packages: &FxHashMap<Box<str>, Package>, dir: &str, target: &str) -> Option<FileId> {
    let base = if is_relative(target) {
        join_normalized(dir, target)?
    } else {
        let (name, subpath) = package_name(target);
        let package = packages.get(name)?;
        join(&package.dir, if subpath.is_empty() { "tsconfig.json" } else { subpath })
    };
    files.id(&base).or_else(|| files.id(&format!("{base}.json"))).or_else(|| files.id(&join(&base, "tsconfig.json")))
}

/// Every `package.json` with a `name`, the one inside a `workspaces` glob winning a clash,
/// then the shallowest.
fn read_packages(files: &Files, read: &dyn Fn(FileId) -> Option<String>) -> FxHashMap<Box<str>, Package> {
    let mut manifests: Vec<(&str, Value)> = Vec::new();
    for &id in files.named("package.json") {
        if let Some(value) = read(id).as_deref().and_then(parse_jsonc) {
            manifests.push((parent(files.path(id).as_str()), value));
        }
    }
    let mut globs: Vec<String> = Vec::new();
    for (dir, value) in &manifests {
        let patterns = match value.get("workspaces") {
            Some(Value::Array(list)) => list.as_slice(),
            Some(Value::Object(object)) => {
                object.get("packages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
            }
            _ => &[],
        };
        for glob in patterns.iter().filter_map(Value::as_str) {
            if let Some(glob) = join_normalized(dir, glob) {
                globs.push(glob);
            }
        }
    }
    let mut packages: FxHashMap<Box<str>, Package> = FxHashMap::default();
    for (dir, value) in &manifests {
        let Some(name) = value.get("name").and_then(Value::as_str) else { continue };
        let in_workspaces = globs.iter().any(|glob| glob_matches(glob, dir));
        let rank = |in_workspaces: bool, dir: &str| (!in_workspaces, super::files::depth(dir), dir.to_owned());
        if let Some(existing) = packages.get(name)
            && rank(existing.in_workspaces, &existing.dir) <= rank(in_workspaces, dir)
        {
            continue;
        }
        let package = Package {
            dir: (*dir).into(),
            entry: package_entry(files, dir, value),
            exports: export_subpaths(value),
            in_workspaces,
        };
        packages.insert(name.into(), package);
    }
    packages
}

/// Whether a `workspaces` glob (`packages/*`, `apps/**`, `tools/cli`) matches `dir`.
fn glob_matches(glob: &str, dir: &str) -> bool {
    if let Some(prefix) = glob.strip_suffix("/**") {
        return dir != prefix && super::files::is_within(dir, prefix);
    }
    if let Some(prefix) = glob.strip_suffix("/*") {
        return parent(dir) == prefix && dir != prefix;
    }
    glob == dir
}

/// The file a package's bare name resolves to: `types`, `typings`, `module`, `main`,
/// `exports["."]`, else `src/index.*` or `index.*`.
fn package_entry(files: &Files, dir: &str, value: &Value) -> Option<FileId> {
    let mut targets: Vec<String> = Vec::new();
    for field in ["types", "typings", "module", "main"] {
        if let Some(target) = value.get(field).and_then(Value::as_str) {
            targets.push(target.to_owned());
        }
    }
    match value.get("exports") {
        Some(Value::Object(map)) if map.keys().any(|key| key.starts_with('.')) => {
            if let Some(root) = map.get(".") {
                condition_targets(root, 0, &mut targets);
            }
        }
        Some(exports) => condition_targets(exports, 0, &mut targets),
        None => {}
    }
    pick_target(files, dir, targets.iter().map(String::as_str))
        .or_else(|| probe(files, &join(dir, "src")))
        .or_else(|| probe(files, dir))
}

/// The `exports` subpaths other than `.`, with their targets.
fn export_subpaths(value: &Value) -> Vec<PathPattern> {
    let Some(Value::Object(map)) = value.get("exports") else { return Vec::new() };
    map.iter()
        .filter(|(key, _)| key.starts_with("./"))
        .map(|(key, target)| {
            let mut targets = Vec::new();
            condition_targets(target, 0, &mut targets);
            pattern(key, targets)
        })
        .collect()
}

/// The path strings of an `exports` value: a string, or a conditions object read in the
/// order `types`, `import`, `module`, `default`, `require`, `node`, then the rest.
fn condition_targets(value: &Value, depth: usize, out: &mut Vec<String>) {
    match value {
        Value::String(target) => out.push(target.clone()),
        Value::Array(list) if depth < 4 => list.iter().for_each(|item| condition_targets(item, depth + 1, out)),
        Value::Object(map) if depth < 4 => {
            const PREFERRED: [&str; 6] = ["types", "import", "module", "default", "require", "node"];
            for key in PREFERRED {
                if let Some(inner) = map.get(key) {
                    condition_targets(inner, depth + 1, out);
                }
            }
            for (key, inner) in map {
                if !PREFERRED.contains(&key.as_str()) {
                    condition_targets(inner, depth + 1, out);
                }
            }
        }
        _ => {}
    }
}

/// Parses JSON with comments and trailing commas (how `tsconfig.json` is written).
fn parse_jsonc(text: &str) -> Option<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    serde_json::from_str(&strip_trailing_commas(&strip_comments(text))).ok()
}

/// `text` without `//` and `/* */` comments outside strings.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for next in chars.by_ref() {
                    if previous == '*' && next == '/' {
                        break;
                    }
                    previous = next;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// `text` without a `,` that only whitespace separates from a closing `}` or `]`.
fn strip_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = bytes[index + 1..].iter().find(|byte| !byte.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{package_name, parse_jsonc};
    use crate::resolve::tests::{check, import, layout};
    use loupe_syntax::{Import, ImportKind, Lang};

    fn es(module: &str) -> Import {
        import(ImportKind::Import, module, &["x"])
    }

    #[test]
    fn relative_specifiers_probe_extensions_and_index_files() {
        let files = &[
            "src/app.ts",
            "src/util.ts",
            "src/view.tsx",
            "src/types.d.ts",
            "src/legacy.js",
            "src/esm.mts",
            "src/components/index.tsx",
            "src/style.css",
            "src/node/lib.cjs",
        ];
        let layout = layout(files, &[]);
        let from = "src/app.ts";
        check(&layout, from, Lang::TypeScript, &es("./util"), &["src/util.ts"]);
        check(&layout, from, Lang::TypeScript, &es("./view"), &["src/view.tsx"]);
        check(&layout, from, Lang::TypeScript, &es("./types"), &["src/types.d.ts"]);
        check(&layout, from, Lang::TypeScript, &es("./legacy"), &["src/legacy.js"]);
        check(&layout, from, Lang::TypeScript, &es("./components"), &["src/components/index.tsx"]);
        check(&layout, from, Lang::TypeScript, &es("./style.css"), &["src/style.css"]);
        check(&layout, from, Lang::TypeScript, &es("./node/lib.cjs"), &["src/node/lib.cjs"]);
        check(&layout, "src/components/index.tsx", Lang::Tsx, &es(".."), &["ext:.."]);
        check(&layout, "src/components/index.tsx", Lang::Tsx, &es("../view"), &["src/view.tsx"]);
        check(&layout, "src/components/x.tsx", Lang::Tsx, &es("."), &["src/components/index.tsx"]);
        check(&layout, from, Lang::TypeScript, &es("./missing"), &["ext:./missing"]);
        check(&layout, from, Lang::TypeScript, &es("../../outside"), &["ext:../../outside"]);
    }

    #[test]
    fn written_js_names_the_typescript_source() {
        let layout = layout(&["src/a.ts", "src/b.ts", "src/c.mts", "src/d.tsx"], &[]);
        check(&layout, "src/a.ts", Lang::TypeScript, &es("./b.js"), &["src/b.ts"]);
        check(&layout, "src/a.ts", Lang::TypeScript, &es("./c.mjs"), &["src/c.mts"]);
        check(&layout, "src/a.ts", Lang::TypeScript, &es("./d.jsx"), &["src/d.tsx"]);
        check(&layout, "src/a.ts", Lang::TypeScript, &es("./d.js"), &["src/d.tsx"]);
    }

    #[test]
    fn tsconfig_paths_and_base_url() {
        let files = &[
            "app/src/main.ts",
            "app/src/lib/math.ts",
            "app/src/env.ts",
            "shared/ui/button.tsx",
            "other/x.ts",
            "web/src/page.ts",
            "web/src/shared/ui/button.tsx",
        ];
        let configs = &[
            (
                "tsconfig.base.json",
                "{\n  // shared settings\n  \"compilerOptions\": {\n    \"baseUrl\": \".\",\n    \"paths\": {\n      \"@ui/*\": [\"shared/ui/*\"], /* ui kit */\n      \"@lib/*\": [\"app/src/lib/*\"],\n    },\n  },\n}\n",
            ),
            ("app/tsconfig.json", "{ \"extends\": \"../tsconfig.base\", \"compilerOptions\": { \"strict\": true } }"),
            (
                "web/tsconfig.json",
                "{ \"extends\": [\"../tsconfig.base.json\"], \"compilerOptions\": { \"baseUrl\": \"src\" } }",
            ),
        ];
        let layout = layout(files, configs);
        let from = "app/src/main.ts";
        check(&layout, from, Lang::TypeScript, &es("@ui/button"), &["shared/ui/button.tsx"]);
        check(&layout, from, Lang::TypeScript, &es("@lib/math"), &["app/src/lib/math.ts"]);
        // The inherited baseUrl (the workspace root).
        check(&layout, from, Lang::TypeScript, &es("app/src/env"), &["app/src/env.ts"]);
        check(&layout, from, Lang::TypeScript, &es("react"), &["ext:react"]);
        // A nearer baseUrl: inherited paths resolve below it, as TypeScript does.
        check(&layout, "web/src/page.ts", Lang::TypeScript, &es("@ui/button"), &["web/src/shared/ui/button.tsx"]);
        check(&layout, "web/src/page.ts", Lang::TypeScript, &es("page"), &["web/src/page.ts"]);
        // No config above `other/`: bare names are packages only.
        check(&layout, "other/x.ts", Lang::TypeScript, &es("app/src/env"), &["ext:app"]);
    }

    #[test]
    fn paths_without_base_url_are_relative_to_their_config() {
        let files = &["pkg/src/a.ts", "pkg/src/internal/b.ts"];
        let configs = &[(
            "pkg/tsconfig.json",
            "{\"compilerOptions\":{\"paths\":{\"#internal/*\":[\"./src/internal/*\"],\"exact\":[\"./src/a.ts\"]}}}",
        )];
        let layout = layout(files, configs);
        check(&layout, "pkg/src/a.ts", Lang::TypeScript, &es("#internal/b"), &["pkg/src/internal/b.ts"]);
        check(&layout, "pkg/src/internal/b.ts", Lang::TypeScript, &es("exact"), &["pkg/src/a.ts"]);
    }

    #[test]
    fn workspace_packages_resolve_by_name() {
        let files = &[
            "packages/core/src/index.ts",
            "packages/core/src/util/strings.ts",
            "packages/web/src/app.tsx",
            "packages/cli/lib/main.ts",
            "packages/ui/index.js",
            "packages/feature/src/feature.ts",
            "examples/copy/index.ts",
            "packages/shipped/index.d.cts",
            "packages/shipped/src/index.ts",
            "packages/shipped/v3/index.d.cts",
            "packages/shipped/src/v3/index.ts",
        ];
        let configs = &[
            ("package.json", "{\"private\": true, \"workspaces\": [\"packages/*\"]}"),
            (
                "packages/core/package.json",
                "{\"name\": \"@acme/core\", \"main\": \"./dist/index.js\", \"types\": \"./dist/index.d.ts\"}",
            ),
            (
                "packages/cli/package.json",
                "{\"name\": \"acme-cli\", \"exports\": {\".\": {\"import\": \"./lib/main.ts\"}}}",
            ),
            ("packages/ui/package.json", "{\"name\": \"ui\"}"),
            (
                "packages/feature/package.json",
                "{\"name\": \"feature\", \"exports\": {\".\": \"./src/feature.ts\", \"./extra/*\": \"./src/*.ts\"}}",
            ),
            ("examples/copy/package.json", "{\"name\": \"@acme/core\"}"),
            (
                "packages/shipped/package.json",
                "{\"name\": \"shipped\", \"exports\": {\".\": {\"types\": \"./index.d.cts\", \"@shipped/source\": \"./src/index.ts\"}, \"./v3\": {\"types\": \"./v3/index.d.cts\", \"@shipped/source\": \"./src/v3/index.ts\"}}}",
            ),
        ];
        let layout = layout(files, configs);
        let from = "packages/web/src/app.tsx";
        check(&layout, from, Lang::Tsx, &es("@acme/core"), &["packages/core/src/index.ts"]);
        check(&layout, from, Lang::Tsx, &es("@acme/core/src/util/strings"), &["packages/core/src/util/strings.ts"]);
        check(&layout, from, Lang::Tsx, &es("@acme/core/util/strings"), &["ext:@acme/core"]);
        check(&layout, from, Lang::Tsx, &es("acme-cli"), &["packages/cli/lib/main.ts"]);
        check(&layout, from, Lang::Tsx, &es("ui"), &["packages/ui/index.js"]);
        check(&layout, from, Lang::Tsx, &es("feature"), &["packages/feature/src/feature.ts"]);
        check(&layout, from, Lang::Tsx, &es("feature/extra/feature"), &["packages/feature/src/feature.ts"]);
        // Shipped build output and declarations lose to the source a custom condition names.
        check(&layout, from, Lang::Tsx, &es("shipped"), &["packages/shipped/src/index.ts"]);
        check(&layout, from, Lang::Tsx, &es("shipped/v3"), &["packages/shipped/src/v3/index.ts"]);
        check(&layout, from, Lang::Tsx, &es("@other/pkg/deep"), &["ext:@other/pkg"]);
        check(&layout, from, Lang::JavaScript, &es("node:fs"), &["ext:node:fs"]);
        check(&layout, from, Lang::JavaScript, &es("lodash/fp"), &["ext:lodash"]);
        check(&layout, from, Lang::JavaScript, &es("https://esm.sh/preact@10"), &["ext:https://esm.sh/preact@10"]);
        check(&layout, from, Lang::JavaScript, &es("./locale/${lang}"), &["ext:./locale/${lang}"]);
    }

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let value =
            parse_jsonc("{ \"a\": \"http://x\", // c\n \"b\": [1, 2,], /* d */ \"c\": \"/* no */\", }").unwrap();
        assert_eq!(value["a"], "http://x");
        assert_eq!(value["b"].as_array().unwrap().len(), 2);
        assert_eq!(value["c"], "/* no */");
        assert_eq!(package_name("@scope/pkg/sub/x"), ("@scope/pkg", "sub/x"));
        assert_eq!(package_name("pkg"), ("pkg", ""));
    }
}
