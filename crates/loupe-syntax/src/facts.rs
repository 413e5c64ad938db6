//! The plain data `parse` returns: languages, definitions, imports, calls, type relations and
//! references of one file.
//!
//! Owns the boundary types and their serde shape (snapshot tests and the index read them as
//! JSON). Must not hold tree-sitter types or behaviour beyond trivial lookups: extraction lives
//! in `walk` and the language modules.

use serde::{Deserialize, Serialize};

/// A language loupe can parse. Chosen by file extension (`Lang::from_path`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Kotlin,
}

impl Lang {
    /// Every language, in declaration order.
    pub const ALL: &[Lang] = &[
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
        Lang::Ruby,
        Lang::Php,
        Lang::Kotlin,
    ];

    /// The language of a path, by its extension (ASCII case-insensitive). `.h` is C; `.jsx`
    /// is JavaScript (its grammar parses JSX).
    pub fn from_path(path: &str) -> Option<Lang> {
        let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let (_, extension) = file_name.rsplit_once('.')?;
        let lang = match extension.to_ascii_lowercase().as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Lang::Cpp,
            "cs" => Lang::CSharp,
            "rb" => Lang::Ruby,
            "php" => Lang::Php,
            "kt" | "kts" => Lang::Kotlin,
            _ => return None,
        };
        Some(lang)
    }

    /// A short stable name: `rust`, `python`, `typescript`, `tsx`, `javascript`, `go`, `java`,
    /// `c`, `cpp`, `csharp`, `ruby`, `php`, `kotlin`.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::CSharp => "csharp",
            Lang::Ruby => "ruby",
            Lang::Php => "php",
            Lang::Kotlin => "kotlin",
        }
    }

    /// The separator of qualified names: `::` for Rust and C++, `.` for the others.
    pub fn separator(self) -> &'static str {
        match self {
            Lang::Rust | Lang::Cpp => "::",
            _ => ".",
        }
    }
}

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Module,
    Namespace,
    Class,
    Struct,
    Union,
    Enum,
    EnumMember,
    Interface,
    Trait,
    Impl,
    Function,
    Method,
    Constructor,
    Field,
    Property,
    Constant,
    Variable,
    TypeAlias,
    Macro,
}

impl SymbolKind {
    /// Every kind, in declaration order (a kind's position is its compact code).
    pub const ALL: [SymbolKind; 19] = [
        SymbolKind::Module,
        SymbolKind::Namespace,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Union,
        SymbolKind::Enum,
        SymbolKind::EnumMember,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Impl,
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Constructor,
        SymbolKind::Field,
        SymbolKind::Property,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::TypeAlias,
        SymbolKind::Macro,
    ];

    /// The kind's name as serialised (`type_alias`), without going through serde.
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Module => "module",
            SymbolKind::Namespace => "namespace",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Union => "union",
            SymbolKind::Enum => "enum",
            SymbolKind::EnumMember => "enum_member",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Impl => "impl",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Constructor => "constructor",
            SymbolKind::Field => "field",
            SymbolKind::Property => "property",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::TypeAlias => "type_alias",
            SymbolKind::Macro => "macro",
        }
    }
}

/// Lines `start_line..=end_line`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub start_line: usize,
    pub end_line: usize,
}

/// A named definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    pub kind: SymbolKind,
    /// Qualified name of the enclosing definition (`Config` for a method, `outer::inner` for a
    /// nested module); for a Go method its receiver type, for C++ `Foo::bar` its scope `Foo`.
    pub container: Option<String>,
    /// The declaration head on one line, whitespace collapsed, without body, attributes or
    /// decorators; cut to about 200 characters (a cut ends with `…`). A C/C++ function
    /// declared without its body (a prototype) ends with `;`.
    pub signature: String,
    /// Doc comment or docstring, comment markers stripped.
    pub doc: Option<String>,
    /// The whole definition, including its doc comment and attributes or decorators.
    pub span: Span,
    /// The line of the name itself.
    pub name_line: usize,
    /// The name's 1-based byte column on `name_line`.
    pub name_column: usize,
    /// The body as byte offsets into the parsed text: from where the head a body replacement
    /// keeps ends (the `{` of a block; in Python after the `:`, or after the docstring) to the
    /// definition's end. `None` for a definition without a body (a prototype, a field).
    pub body: Option<(usize, usize)>,
    /// Number of enclosing definitions (0 = top level).
    pub depth: usize,
}

impl Definition {
    /// A C/C++ function declared without its body (a prototype): see `is_prototype`.
    pub fn is_prototype(&self) -> bool {
        is_prototype(&self.signature)
    }
}

/// Whether `signature` is a prototype's: the walk ends those with `;` and strips a trailing
/// `;` from every other signature.
pub fn is_prototype(signature: &str) -> bool {
    signature.ends_with(';')
}

/// How a module was brought in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportKind {
    /// Rust `use` and `extern crate`, C++ `using`.
    Use,
    /// Rust `mod x;` (inside an inline `mod a { }` its module is `a::x`).
    Mod,
    /// `import` of Python, JS/TS (also dynamic `import()`), Go, Java, Kotlin; C# `using`; PHP `use`.
    Import,
    /// Python `from x import y`.
    From,
    /// C/C++ `#include`, PHP `include`.
    Include,
    /// CommonJS `require`, TS `import x = require()`, Ruby `require`, PHP `require`.
    Require,
    /// A re-export: Rust `pub use`, JS/TS `export … from`.
    Export,
}

/// One import statement (or one part of it: an aliased name gets its own `Import`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    pub kind: ImportKind,
    /// The module as written: `crate::a::b`, `os.path`, `./util`, `stdio.h`, `github.com/x/y`.
    /// Python relative imports drop their leading dots (see `relative_level`).
    pub module: String,
    /// Imported names; `*` for a glob; `default` for a JS default import.
    pub names: Vec<String>,
    pub alias: Option<String>,
    pub line: usize,
    /// Python's leading dots; 1 for Ruby `require_relative`; for Rust `use` and `mod x;`, the
    /// number of inline `mod m { … }` blocks around it (`use super::*` in `mod tests { }` is 1).
    pub relative_level: usize,
    /// C/C++ `#include <...>`.
    pub is_system: bool,
}

/// A call (also `new X()`, a Rust macro invocation `name!`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    /// The called name: the last path segment (`load` in `Config::load`, `println!`).
    pub callee: String,
    /// The static path before it: `Config` in `Config::load`, `os.path` in `os.path.join`.
    pub qualifier: Option<String>,
    /// The receiver expression of a method call, cut to 60 characters: `self`, `self.parser`.
    pub receiver: Option<String>,
    pub line: usize,
    /// 1-based byte column of the callee name in its line.
    pub column: usize,
    /// Qualified name of the enclosing definition: `Config::load`, `Parser.parse`.
    pub container: Option<String>,
}

/// How one type relates to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    Extends,
    Implements,
    /// Rust `impl Trait for Type`.
    Impl,
    /// Go struct and interface embedding.
    Embeds,
}

/// `subtype` extends / implements / embeds `supertype` (names as written, generic arguments
/// dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeRelation {
    pub subtype: String,
    pub supertype: String,
    pub kind: RelationKind,
    pub line: usize,
}

/// A use of an identifier (not its definition): names, type names, field names of accesses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub name: String,
    pub line: usize,
    /// 1-based byte column.
    pub column: usize,
    pub container: Option<String>,
}

/// Everything `parse` found in one file. Each list is in source order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    pub lang: Lang,
    pub definitions: Vec<Definition>,
    pub imports: Vec<Import>,
    pub calls: Vec<CallSite>,
    pub type_relations: Vec<TypeRelation>,
    pub references: Vec<Reference>,
    /// Number of ERROR and MISSING nodes: 0 for code that parsed cleanly.
    pub error_nodes: usize,
}

impl FileFacts {
    /// Facts with nothing in them.
    pub fn empty(lang: Lang) -> FileFacts {
        FileFacts {
            lang,
            definitions: Vec::new(),
            imports: Vec::new(),
            calls: Vec::new(),
            type_relations: Vec::new(),
            references: Vec::new(),
            error_nodes: 0,
        }
    }
}
