//! What the index remembers about each file and each definition: plain, serialisable data.

use loupe_core::{ContentHash, RepoPath};
use loupe_syntax::{Lang, Span, SymbolKind};
use serde::{Deserialize, Serialize};

/// One file of the workspace as last indexed. Its position in the file table is its doc id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: RepoPath,
    pub size: u64,
    pub mtime_ns: u64,
    pub hash: ContentHash,
    pub lang: Option<Lang>,
    /// False for binary files: listed, but not in the text index and never parsed.
    pub text: bool,
    /// False once the file is gone; the slot is reused only by a compaction.
    pub live: bool,
}

/// One definition, as the symbol table keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolRecord {
    pub name: String,
    pub kind: SymbolKind,
    pub container: Option<String>,
    pub signature: String,
    pub span: Span,
    pub name_line: usize,
    pub depth: usize,
}

impl From<loupe_syntax::Definition> for SymbolRecord {
    /// What the table keeps of a parsed definition (its doc comment stays in the file).
    fn from(definition: loupe_syntax::Definition) -> SymbolRecord {
        SymbolRecord {
            name: definition.name,
            kind: definition.kind,
            container: definition.container,
            signature: definition.signature,
            span: definition.span,
            name_line: definition.name_line,
            depth: definition.depth,
        }
    }
}
