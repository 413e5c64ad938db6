//! The parameter table: every tool's parameters, once, as plain data (name, type, the modes it
//! is valid in, aliases, a description).
//!
//! Everything that names a parameter is derived from here: the engine's unknown-parameter and
//! "only valid for mode" checks (`args.rs`), the MCP `inputSchema` (built in `loupe-mcp`, so the
//! engine knows nothing of MCP), and the CLI's flags (`crates/loupe`). A test proves the three
//! agree. Semantics beyond shape (defaults, clamping, combinations) stay with each tool's parser.

use loupe_core::config::MetadataLevel;

/// The shape of one parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    String,
    /// A non-negative integer (numeric strings are accepted too); `max` is advisory: tools clamp
    /// or refuse above it with their own message.
    Integer {
        min: u64,
        max: Option<u64>,
    },
    Boolean,
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
    /// A list of strings (a JSON array, or one comma-separated string).
    StringList,
    /// A list of edit objects, each described by the given fields: `edit`'s `edits` ([`EDIT_ITEM`]),
    /// or a legacy name's (`crate::legacy`).
    EditList(&'static [Param]),
}

/// One parameter of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub ty: ParamType,
    pub description: &'static str,
    pub required: bool,
    /// The selector values (`mode`, `command`, `operation`) it is valid for; empty: all of them.
    pub only_for: &'static [&'static str],
    /// Other names accepted for it: the conventions agents know (§1.6) and the seeds' names.
    pub aliases: &'static [&'static str],
    /// The command line takes it as a positional argument rather than a `--flag`.
    pub positional: bool,
    /// The longest value accepted, in bytes (for a list: each item). Free text is bounded
    /// before anything plans with it: a 50 MB query must cost an error, not the machine.
    pub max_bytes: usize,
    /// `tools/list` shows it. An unlisted parameter is accepted (and a `--flag` on the command
    /// line) but costs no token in every agent's context: the knobs programs and people set
    /// (`metadata`, `session_id`, byte and preview caps), which `manage guidance` names (§4).
    pub listed: bool,
}

/// The longest name, path, query or id a parameter takes, in bytes.
pub const MAX_TEXT_BYTES: usize = 4096;
/// The longest search query, in bytes: longer literals and patterns are not what a search is
/// for, and planning and matching cost grows with them.
pub const MAX_QUERY_BYTES: usize = 1000;
/// The longest text an edit or a proposed content carries, in bytes.
pub const MAX_CONTENT_BYTES: usize = 8 << 20;
/// The most items a list parameter takes (globs, kinds, edits).
pub const MAX_LIST_ITEMS: usize = 1000;

/// What a tool does to the world, for clients that ask (MCP annotations, §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

/// One tool: its description and its parameters in the order errors list them.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The parameter whose value picks the operation and that `only_for` refers to.
    pub selector: Option<&'static str>,
    pub params: &'static [Param],
    pub effects: Effects,
}

impl ToolSpec {
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|param| param.name == name)
    }

    /// The canonical names, in table order.
    pub fn names(&self) -> Vec<&'static str> {
        self.params.iter().map(|param| param.name).collect()
    }
}

impl Param {
    pub(crate) const fn new(name: &'static str, ty: ParamType, description: &'static str) -> Param {
        Param {
            name,
            ty,
            description,
            required: false,
            only_for: &[],
            aliases: &[],
            positional: false,
            max_bytes: MAX_TEXT_BYTES,
            listed: true,
        }
    }

    const fn unlisted(self) -> Param {
        Param { listed: false, ..self }
    }

    pub(crate) const fn required(self) -> Param {
        Param { required: true, ..self }
    }

    const fn only_for(self, only_for: &'static [&'static str]) -> Param {
        Param { only_for, ..self }
    }

    const fn aliases(self, aliases: &'static [&'static str]) -> Param {
        Param { aliases, ..self }
    }

    const fn positional(self) -> Param {
        Param { positional: true, ..self }
    }

    /// Text that may be as long as a file (an edit's strings, a proposed content).
    pub(crate) const fn content(self) -> Param {
        Param { max_bytes: MAX_CONTENT_BYTES, ..self }
    }

    const fn max_bytes(self, max_bytes: usize) -> Param {
        Param { max_bytes, ..self }
    }

    /// True when the parameter may be given with the selector set to `value`.
    pub fn valid_for(&self, value: &str) -> bool {
        self.only_for.is_empty() || self.only_for.contains(&value)
    }
}

pub(crate) const fn string(name: &'static str, description: &'static str) -> Param {
    Param::new(name, ParamType::String, description)
}

pub(crate) const fn integer(name: &'static str, min: u64, description: &'static str) -> Param {
    Param::new(name, ParamType::Integer { min, max: None }, description)
}

const fn bounded(name: &'static str, min: u64, max: u64, description: &'static str) -> Param {
    Param::new(name, ParamType::Integer { min, max: Some(max) }, description)
}

pub(crate) const fn boolean(name: &'static str, description: &'static str) -> Param {
    Param::new(name, ParamType::Boolean, description)
}

pub(crate) const fn choice(name: &'static str, choices: &'static [&'static str], description: &'static str) -> Param {
    Param::new(name, ParamType::Choice(choices), description)
}

const fn list(name: &'static str, description: &'static str) -> Param {
    Param::new(name, ParamType::StringList, description)
}

/// An enum for a choice the parameter table lists (a mode, a type, a command, a baseline): one
/// variant per value, `parse` from and `as_str` back to the name the caller writes, and
/// `CHOICES`, the names in order, which the table takes (so each choice is written once). Values
/// after `; inferred` are the tool's own (never a caller's choice, not in `CHOICES`).
macro_rules! choice_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($variant:ident = $text:literal),+ $(,)? $(; inferred $($inferred:ident = $inferred_text:literal),+ $(,)?)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($variant,)+
            $($($inferred,)+)?
        }

        impl $name {
            /// The values a caller may pass, in the table's order.
            $vis const CHOICES: &'static [&'static str] = &[$($text),+];

            #[allow(dead_code)]
            $vis fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            #[allow(dead_code)]
            $vis fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                    $($($name::$inferred => $inferred_text,)+)?
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str(self.as_str())
            }
        }
    };
}

choice_enum! {
    /// What `read` does, fixed by `mode`.
    pub(crate) enum ReadMode {
        File = "file",
        Snippet = "snippet",
        Symbol = "symbol",
        Outline = "outline",
        DiffPreview = "diff_preview",
    }
}

impl ReadMode {
    /// Whether the relevance guard (§9.5) judges a read in this mode made without a ref: not a
    /// diff of the working tree, nor a read by an exact name or an outline (§9.7).
    pub(crate) fn judged_by_relevance(self) -> bool {
        matches!(self, ReadMode::File | ReadMode::Snippet)
    }
}

choice_enum! {
    /// What `diff_preview` compares with (`against`).
    pub(crate) enum Against {
        Head = "HEAD",
        Index = "INDEX",
        Worktree = "WORKTREE",
    }
}

choice_enum! {
    /// What a search answers with (`output`): the hits, the files with their counts, or counts.
    pub(crate) enum Output {
        Matches = "matches",
        Files = "files",
        Count = "count",
    }
}

choice_enum! {
    /// What a search looks for (`type`); `auto` infers one of the others from the query.
    /// `terms` is only ever inferred (a question or several words, searched as its terms).
    pub(crate) enum SearchKind {
        Auto = "auto",
        Text = "text",
        Regex = "regex",
        Symbol = "symbol",
        File = "file",
        Directory = "directory",
        ; inferred Terms = "terms",
    }
}

choice_enum! {
    /// Which relationship `analyze` follows (`mode`).
    pub(crate) enum AnalyzeMode {
        Dependencies = "dependencies",
        Impact = "impact",
        Calls = "calls",
        References = "references",
        Types = "types",
        DataFlow = "data_flow",
    }
}

choice_enum! {
    /// What `target` names (`target_type`); `auto` takes an existing file as a file, and text
    /// with `..` that is no path as a revision range (impact of what it changed).
    pub(crate) enum TargetType {
        Auto = "auto",
        File = "file",
        Symbol = "symbol",
        Range = "range",
    }
}

choice_enum! {
    /// Which way a walk goes (`direction`).
    pub(crate) enum Direction {
        Upstream = "upstream",
        Downstream = "downstream",
        Both = "both",
    }
}

choice_enum! {
    /// The `manage` commands.
    pub(crate) enum ManageCommand {
        Status = "status",
        Metrics = "metrics",
        Guidance = "guidance",
        Undo = "undo",
        Redo = "redo",
        History = "history",
        Reindex = "reindex",
    }
}

choice_enum! {
    /// How much of the payload a read sends (`preview_mode`).
    pub(crate) enum PreviewMode {
        None = "none",
        Snippet = "snippet",
    }
}

choice_enum! {
    /// What an edit does (`operation`).
    pub(crate) enum EditOperation {
        Replace = "replace",
        ReplaceLines = "replace_lines",
        Insert = "insert",
        Create = "create",
        Delete = "delete",
        ReplaceSymbol = "replace_symbol",
        InsertBeforeSymbol = "insert_before_symbol",
        InsertAfterSymbol = "insert_after_symbol",
        DeleteSymbol = "delete_symbol",
        RenameSymbol = "rename_symbol",
    }
}

choice_enum! {
    /// Which extra sites a rename changes (`include`).
    pub(crate) enum RenameInclude {
        NameOnly = "name_only",
    }
}

choice_enum! {
    /// What an edit that leaves a file unparsable gets (`check_syntax`).
    pub(crate) enum SyntaxCheck {
        Warn = "warn",
        Block = "block",
        Off = "off",
    }
}

const METADATA: Param =
    choice("metadata", MetadataLevel::CHOICES, "structuredContent detail (default standard)").unlisted();
const SESSION_ID: Param = string("session_id", "pins the session (default: this connection)").unlisted();

pub const READ: ToolSpec = ToolSpec {
    name: "read",
    title: "Read code",
    description: "Read code within a budget; lines prefixed `N ` (line number, not content). \
Modes: file (offset/limit), snippet (start_line..end_line, context_lines), \
symbol (name, Type.method or candidate_id; path disambiguates), outline (names, or signatures; file or directory), \
diff_preview (vs HEAD, INDEX or a revision, main...: since the fork; directory: changed symbols, uses; path+symbol: one). \
A whole file needs a search first (a hit in it); symbol, outline and windows up to 200 lines do not. \
Lines already sent come back as a reference line (fresh: true resends). \
A cut answer ends with the call for the rest; file_hash guards edits.",
    selector: Some("mode"),
    params: &[
        choice("mode", ReadMode::CHOICES, "what to read").required(),
        string("target", "path (relative, or absolute inside the root), or a symbol")
            .required()
            .aliases(&["file_path"])
            .positional(),
        integer("offset", 0, "first line (diff_preview: of the diff)"),
        integer("limit", 1, "file: lines (max 300)"),
        integer("max_tokens", 1, "cap on the answer's tokens"),
        integer("max_bytes", 1, "payload byte cap").only_for(&["file", "snippet", "symbol"]).unlisted(),
        integer("max_lines", 1, "line cap").only_for(&["file", "snippet", "symbol"]).unlisted(),
        integer("max_preview_chars", 1, "payload char cap").unlisted(),
        choice("preview_mode", PreviewMode::CHOICES, "none: metadata only").unlisted(),
        string("cursor", "next_cursor of a cut read"),
        METADATA,
        string("candidate_id", "ref: a search hit's id"),
        string("bundle_id", "ref: a search's bundle_id").unlisted(),
        SESSION_ID,
        boolean("fresh", "resend lines already sent"),
        integer("start_line", 1, "first line").only_for(&["snippet"]),
        integer("end_line", 1, "last line").only_for(&["snippet"]),
        integer("context_lines", 0, "lines around").only_for(&["snippet", "diff_preview"]),
        string("line_range", "\"10-20\"").only_for(&["snippet"]).unlisted(),
        string("path", "the symbol's file").only_for(&["symbol", "diff_preview"]),
        integer("include_context", 0, "lines around").only_for(&["symbol"]).unlisted(),
        boolean("body", "false: signature only").only_for(&["symbol"]),
        integer("depth", 1, "nesting shown (default 2)").only_for(&["outline"]),
        // Named by a names-only outline's header (`signatures=true adds lines`).
        boolean("signatures", "each definition's signature (default: small files)").only_for(&["outline"]).unlisted(),
        boolean("include_docs", "doc comments too").only_for(&["outline"]).unlisted(),
        string("against", "HEAD (default), INDEX, WORKTREE or a revision").only_for(&["diff_preview"]),
        string("revision", "as of a commit (branch, tag, id)").only_for(&["file", "snippet", "symbol", "outline"]),
        string("content", "proposed text").only_for(&["diff_preview"]).content(),
    ],
    effects: Effects { read_only: true, destructive: false, idempotent: true },
};

pub const SEARCH: ToolSpec = ToolSpec {
    name: "search",
    title: "Search code",
    description: "Find code before reading it. type auto: glob/path -> file, trailing / -> directory, \
identifier -> symbol (then text), words -> the phrase (then its terms), else text. \
Ranked (definitions first), paged. Text hits name their function; symbol hits have a candidate_id to read; \
file hits are paths.",
    selector: None,
    params: &[
        string("query", "what to find").required().aliases(&["pattern"]).positional().max_bytes(MAX_QUERY_BYTES),
        choice("type", SearchKind::CHOICES, "default auto"),
        string("path", "subtree or glob"),
        list("glob", "only paths matching").aliases(&["include"]),
        list("exclude", "globs to leave out"),
        list("file_types", "extensions, e.g. [\"rs\"]"),
        list("kinds", "symbol kinds: function, method, class, struct..."),
        boolean("case_sensitive", "default: smart case"),
        boolean("whole_word", "match whole words"),
        bounded("max_results", 1, 100, "per page (default 20; text: 40)").aliases(&["limit"]),
        string("cursor", "next_cursor of the previous page"),
        integer("offset", 0, "hits to skip").unlisted(),
        choice("output", Output::CHOICES, "default matches"),
        bounded("context_lines", 0, 20, "lines around each hit"),
        integer("max_preview_chars", 20, "characters per preview").unlisted(),
        SESSION_ID,
        METADATA,
    ],
    effects: Effects { read_only: true, destructive: false, idempotent: true },
};

pub const ANALYZE: ToolSpec = ToolSpec {
    name: "analyze",
    title: "Analyze relationships",
    description: "Relationships of a file or symbol, as a tree. \
dependencies: imports and importers; impact: what depends on it (a range: on its changes), nearest first; \
calls: callers/callees; references: uses by containing symbol; types: super/subtypes; \
data_flow: function.variable defs and uses, followed into callees. \
Edges carry confidence exact|scoped|name_only; an ambiguous name lists candidates.",
    selector: Some("mode"),
    params: &[
        string("target", "file, symbol (name, Type::method) or range (main...)").required().positional(),
        choice("target_type", TargetType::CHOICES, "default auto"),
        choice("mode", AnalyzeMode::CHOICES, "which relationship").required(),
        choice("direction", Direction::CHOICES, "default both"),
        integer("max_depth", 1, "default per mode: calls 1, impact 20"),
        bounded("max_nodes", 1, 500, "default 50"),
        string("path", "file defining the target"),
        METADATA,
        SESSION_ID,
    ],
    effects: Effects { read_only: true, destructive: false, idempotent: true },
};

pub const EDIT: ToolSpec = ToolSpec {
    name: "edit",
    title: "Edit files",
    description: "Change files; all edits apply or none. Each edit: operation + path: \
replace (old_string -> new_string; one exact match unless replace_all/expected_count), \
replace_lines (start_line..end_line; \"\" deletes), insert (after line; 0 = top), create (content), delete; \
by symbol (no old text): replace_symbol, insert_before/after_symbol, delete_symbol, rename_symbol (every resolved use). \
Returns +/- and hash per file, small diffs, a transaction_id (manage undo).",
    selector: None,
    params: &[
        Param::new("edits", ParamType::EditList(EDIT_ITEM), "the edits, applied in order").required(),
        boolean("dry_run", "diffs only, nothing written"),
        boolean("diff", "full diffs"),
        boolean("create_missing_dirs", "create parent directories").aliases(&["create_missing_directories"]),
        boolean("fuzzy", "whitespace-tolerant unique match").aliases(&["ignore_mistakes"]),
        choice("check_syntax", SyntaxCheck::CHOICES, "default warn"),
        SESSION_ID,
        METADATA,
    ],
    effects: Effects { read_only: false, destructive: true, idempotent: false },
};

/// The fields of one entry of `edit`'s `edits`; `operation` is their selector.
pub const EDIT_ITEM: &[Param] = &[
    string("path", "file to change").aliases(&["file_path", "target"]),
    choice("operation", EditOperation::CHOICES, "inferred from the fields when left out"),
    string("old_string", "exact text to replace").only_for(&["replace"]).aliases(&["targetString"]),
    string("new_string", "new text")
        .only_for(&["replace", "replace_lines", "insert", "create", "insert_before_symbol", "insert_after_symbol"])
        .aliases(&["replacementString"]),
    boolean("replace_all", "every match").only_for(&["replace"]),
    integer("expected_count", 1, "matches that must exist").only_for(&["replace"]),
    integer("start_line", 1, "first line replaced").only_for(&["replace_lines"]),
    integer("end_line", 1, "last line replaced").only_for(&["replace_lines"]),
    integer("line", 0, "insert after it").only_for(&["insert"]),
    string("content", "the new file").only_for(&["create"]).content(),
    boolean("overwrite", "replace an existing file").only_for(&["create"]),
    string("symbol", "Type.method or name").only_for(&[
        "replace_symbol",
        "insert_before_symbol",
        "insert_after_symbol",
        "delete_symbol",
        "rename_symbol",
    ]),
    string("new_body", "the body only").only_for(&["replace_symbol"]).content(),
    string("new_text", "the whole definition").only_for(&["replace_symbol"]).content(),
    string("new_name", "").only_for(&["rename_symbol"]),
    choice("include", RenameInclude::CHOICES, "also change name-only sites").only_for(&["rename_symbol"]).unlisted(),
    boolean("in_comments", "also comments and strings").only_for(&["rename_symbol"]).unlisted(),
    boolean("force", "delete while still used").only_for(&["delete_symbol"]).unlisted(),
    string("expected_hash", "guard: a read's file_hash"),
    string("expected_text", "current text of the lines").only_for(&["replace_lines", "insert"]).content(),
];

pub const MANAGE: ToolSpec = ToolSpec {
    name: "manage",
    title: "Manage workspace",
    description: "Workspace and session: undo/redo an edit transaction (default the last), history, status (root, index, budget), metrics, guidance.",
    selector: Some("command"),
    params: &[
        choice("command", ManageCommand::CHOICES, "what to do").required().positional(),
        SESSION_ID,
        string("transaction_id", "default: the last one").only_for(&["undo", "redo"]),
        string("path", "default: all").only_for(&["reindex"]),
        boolean("force", "over later changes").only_for(&["undo", "redo"]),
        METADATA,
        integer("limit", 1, "transactions listed").only_for(&["history"]),
    ],
    // undo and redo write, and each is undone by the other: not destructive (status, metrics,
    // guidance and history only read).
    effects: Effects { read_only: false, destructive: false, idempotent: false },
};

/// Every tool, in the order `tools/list` shows them.
pub const TOOLS: &[&ToolSpec] = &[&READ, &SEARCH, &ANALYZE, &EDIT, &MANAGE];

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().copied().find(|spec| spec.name == name)
}

/// The tools' names, in order.
pub fn tool_names() -> Vec<&'static str> {
    TOOLS.iter().map(|spec| spec.name).collect()
}
