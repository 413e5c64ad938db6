//! C and C++: function definitions and prototypes, structs / unions / enums with members,
//! typedefs, `#define` (object- and function-like, with the calls written in their bodies),
//! file-scope variables and constants; C++ adds classes, namespaces, methods in class and out
//! of line (`Foo::bar` has container `Foo`), constructors, templates, `using` declarations
//! and aliases, base classes; `#include "x"` and `<x>`; calls, `new X()`.
//!
//! Must not expand macros: a macro body is scanned as tokens for `name(` calls and
//! identifiers, never parsed as code.

use tree_sitter::Node;

use super::shared::{children, named_children};
use crate::facts::{ImportKind, Lang, RelationKind, SymbolKind};
use crate::text;
use crate::walk::{DocStyle, Flow, Rules, Walker};

const HANDLED: &[&str] = &[
    "function_definition",
    "declaration",
    "field_declaration",
    "struct_specifier",
    "union_specifier",
    "enum_specifier",
    "class_specifier",
    "enumerator",
    "type_definition",
    "preproc_def",
    "preproc_function_def",
    "preproc_include",
    "call_expression",
    "new_expression",
    "namespace_definition",
    "alias_declaration",
    "using_declaration",
    "parameter_declaration",
    "optional_parameter_declaration",
    "type_parameter_declaration",
    "optional_type_parameter_declaration",
    "compound_statement",
];

pub(crate) static C: Rules = Rules {
    lang: Lang::C,
    language: || tree_sitter_c::LANGUAGE.into(),
    references: &["identifier", "type_identifier", "field_identifier"],
    comments: &["comment"],
    attributes: &[],
    handled: HANDLED,
    opaque: &["string_literal", "char_literal", "raw_string_literal", "system_lib_string", "number_literal"],
    decorations: &["attribute_specifier", "attribute_declaration", "ms_declspec_modifier"],
    not_references: &[],
    doc_style: DocStyle::AnyComment,
    visit,
};

pub(crate) static CPP: Rules = Rules {
    lang: Lang::Cpp,
    language: || tree_sitter_cpp::LANGUAGE.into(),
    references: &["identifier", "type_identifier", "field_identifier", "namespace_identifier"],
    ..C
};

fn visit<'a>(w: &mut Walker<'a>, node: Node<'a>) -> Flow {
    match w.kind(node) {
        "function_definition" => function_definition(w, node),
        "compound_statement" if skippable_body(w, node) => return Flow::Skip,
        "declaration" | "field_declaration" => declaration(w, node),
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier"
            if w.ancestor_kind(1) != "type_definition" =>
        {
            record_type(w, node, None);
        }
        "enumerator" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::EnumMember, name);
            def.opens_scope = false;
            w.define(def);
        }
        "type_definition" => type_definition(w, node),
        "preproc_def" | "preproc_function_def" => macro_definition(w, node),
        "preproc_include" => {
            let Some(path) = node.child_by_field_name("path") else { return Flow::Descend };
            let raw = w.text(path);
            let is_system = path.kind() == "system_lib_string";
            let module = raw.trim_matches(|c| matches!(c, '"' | '<' | '>'));
            let mut import = w.simple_import(ImportKind::Include, module);
            import.is_system = is_system;
            w.import(import);
        }
        "call_expression" => {
            if let Some(function) = node.child_by_field_name("function") {
                call_target(w, function);
            }
        }
        "new_expression" => {
            let Some(type_node) = node.child_by_field_name("type") else { return Flow::Descend };
            let (scope, name) = split_qualified(w.src, type_node);
            let name = base_name_node(name);
            let callee = w.text(name);
            w.call(name, callee, scope, None);
        }
        "namespace_definition" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::Namespace, name);
            def.body = node.child_by_field_name("body").map(|body| body.start_byte());
            w.define(def);
        }
        "alias_declaration" => {
            let Some(name) = node.child_by_field_name("name") else { return Flow::Descend };
            let mut def = w.def(SymbolKind::TypeAlias, name);
            def.outer = template_lifted(w, w.depth);
            def.opens_scope = false;
            w.define(def);
        }
        "using_declaration" => {
            let Some(path) = named_children(node).into_iter().find(|c| c.kind() != "comment") else {
                return Flow::Descend;
            };
            let path_text = w.text(path);
            let is_namespace = children(node).iter().any(|c| c.kind() == "namespace");
            let (module, name) =
                if is_namespace { (path_text, "*") } else { path_text.rsplit_once("::").unwrap_or(("", path_text)) };
            let mut import = w.simple_import(ImportKind::Use, module);
            import.names.push(name.to_owned());
            w.import(import);
        }
        "parameter_declaration" | "optional_parameter_declaration" => {
            if let Some(declared) = node.child_by_field_name("declarator").and_then(unwrap_declarator) {
                w.suppress(declared.name);
            }
        }
        "type_parameter_declaration" | "optional_type_parameter_declaration" => {
            let name = node
                .child_by_field_name("name")
                .or_else(|| named_children(node).into_iter().find(|c| c.kind() == "type_identifier"));
            if let Some(name) = name {
                w.suppress(name);
            }
        }
        _ => {}
    }
    Flow::Descend
}

/// Without uses, a function body holds nothing worth its walk (a third of the parse time),
/// unless it defines macros, or error recovery swallowed the functions that follow it.
/// Types declared inside a body are the price: the index does not list them.
fn skippable_body(w: &Walker<'_>, body: Node<'_>) -> bool {
    !w.collects_uses()
        && w.ancestor_kind(1) == "function_definition"
        && !body.has_error()
        && memchr::memmem::find(w.text(body).as_bytes(), b"define").is_none()
}

/// What a declarator declares: the name node and whether it is a function (as opposed to a
/// pointer to one, or a variable).
pub(crate) struct Declared<'a> {
    pub(crate) name: Node<'a>,
    pub(crate) is_function: bool,
}

pub(crate) fn unwrap_declarator(node: Node<'_>) -> Option<Declared<'_>> {
    let mut node = node;
    let mut innermost_is_function = false;
    for _ in 0..16 {
        match node.kind() {
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name"
            | "template_function"
            | "operator_cast" => {
                return Some(Declared { name: node, is_function: innermost_is_function });
            }
            "function_declarator" => {
                innermost_is_function = true;
                node = node.child_by_field_name("declarator")?;
            }
            "parenthesized_declarator" => node = node.named_child(0)?,
            "pointer_declarator"
            | "reference_declarator"
            | "array_declarator"
            | "init_declarator"
            | "attributed_declarator" => {
                innermost_is_function = false;
                node = node.child_by_field_name("declarator").or_else(|| {
                    named_children(node)
                        .into_iter()
                        .find(|c| !matches!(c.kind(), "type_qualifier" | "ms_pointer_modifier"))
                })?;
            }
            _ => return None,
        }
    }
    None
}

/// `a::b::Foo<T>::bar` → (`a::b::Foo`, `bar`); a plain name has no scope.
pub(crate) fn split_qualified<'a>(src: &str, node: Node<'a>) -> (Option<String>, Node<'a>) {
    let mut name = node;
    for _ in 0..16 {
        if name.kind() != "qualified_identifier" {
            break;
        }
        match name.child_by_field_name("name") {
            Some(inner) => name = inner,
            None => break,
        }
    }
    if name.start_byte() == node.start_byte() {
        return (None, name);
    }
    let scope = src.get(node.start_byte()..name.start_byte()).unwrap_or("").trim_end_matches("::");
    let scope = scope.split("::").map(|segment| text::strip_generics(segment.trim())).collect::<Vec<_>>().join("::");
    (if scope.is_empty() { None } else { Some(scope) }, name)
}

/// `foo<int>` → `foo`; `Widget<T>` (a template type) → `Widget`.
pub(crate) fn base_name_node(node: Node<'_>) -> Node<'_> {
    match node.kind() {
        "template_function" | "template_type" | "template_method" => node.child_by_field_name("name").unwrap_or(node),
        _ => node,
    }
}

/// The depth of the outermost `template<…>` wrapping the node at `depth`.
fn template_lifted(w: &Walker<'_>, depth: usize) -> usize {
    let mut outer = depth;
    while outer > 0 && w.ancestor_kind(w.depth - outer + 1) == "template_declaration" {
        outer -= 1;
    }
    outer
}

fn function_definition<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(declared) = node.child_by_field_name("declarator").and_then(unwrap_declarator) else { return };
    let (scope, name) = split_qualified(w.src, declared.name);
    let name = base_name_node(name);
    if is_reserved(w.lang, w.text(name)) {
        return;
    }
    let kind = method_kind(w, scope.as_deref(), w.text(name));
    let mut def = w.def(kind, name);
    def.container = scope;
    def.outer = template_lifted(w, w.depth);
    def.body = node.child_by_field_name("body").map(|body| body.start_byte());
    w.define(def);
}

/// Whether `name` is a keyword of the file's language (C's in C, C's and C++'s in C++), which
/// no declaration can define. tree-sitter's error recovery names one now and then: around an
/// unexpanded macro (`static __initdata struct { … } node = …;`, `struct vector xlt_mv
/// __initmv = {`) the keyword becomes the declarator, and Linux had 2,730 "definitions" of
/// `struct` that ranked first in every text search for it.
fn is_reserved(lang: Lang, name: &str) -> bool {
    // C++'s own; C code may name a function `new` or `class`.
    const CPP: &[&str] = &[
        "alignas",
        "alignof",
        "bool",
        "catch",
        "class",
        "const_cast",
        "constexpr",
        "decltype",
        "delete",
        "dynamic_cast",
        "explicit",
        "false",
        "friend",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "nullptr",
        "private",
        "protected",
        "public",
        "reinterpret_cast",
        "static_assert",
        "static_cast",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typeid",
        "typename",
        "using",
        "virtual",
    ];
    C_KEYWORDS.contains(&name) || (lang == Lang::Cpp && CPP.binary_search(&name).is_ok())
}

/// Function, method or constructor, from where a function is declared.
fn method_kind(w: &Walker<'_>, scope: Option<&str>, name: &str) -> SymbolKind {
    if w.lang != Lang::Cpp {
        return SymbolKind::Function;
    }
    let owner = match scope {
        Some(scope) => scope.rsplit("::").next(),
        None if w.in_type() => w.scope_name(),
        None => return SymbolKind::Function,
    };
    if owner == Some(name) { SymbolKind::Constructor } else { SymbolKind::Method }
}

fn declaration<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let declarators: Vec<Node<'a>> = {
        let mut cursor = node.walk();
        node.children_by_field_name("declarator", &mut cursor).collect()
    };
    let local = w.in_function();
    let is_field = node.kind() == "field_declaration";
    let is_const = children(node).iter().any(|c| c.kind() == "type_qualifier" && w.text(*c) == "const");
    let single = declarators.len() == 1;
    for declarator in declarators {
        let Some(declared) = unwrap_declarator(declarator) else { continue };
        if local && !declared.is_function {
            w.suppress(declared.name);
            continue;
        }
        let (scope, name) = split_qualified(w.src, declared.name);
        let name = base_name_node(name);
        if is_reserved(w.lang, w.text(name)) {
            continue;
        }
        let kind = if declared.is_function {
            method_kind(w, scope.as_deref(), w.text(name))
        } else if is_field {
            SymbolKind::Field
        } else if scope.is_some() {
            // `int Foo::count = 0;`: the definition of a static member.
            SymbolKind::Field
        } else if is_const {
            SymbolKind::Constant
        } else {
            SymbolKind::Variable
        };
        let mut def = w.def(kind, name);
        def.container = scope;
        def.opens_scope = false;
        def.outer = template_lifted(w, w.depth);
        def.declaration_only = declared.is_function;
        if !single {
            def.signature = Some(text::one_line(&format!("{} {}", declaration_head(w, node), w.text(declarator))));
        }
        w.define(def);
    }
}

/// The type part of a declaration (everything before its first declarator).
fn declaration_head<'a>(w: &Walker<'a>, node: Node<'a>) -> &'a str {
    let first = node.child_by_field_name("declarator").map_or(node.end_byte(), |d| d.start_byte());
    w.src.get(node.start_byte()..first).unwrap_or("")
}

/// A struct, union, enum or class with a body. When it is the type of a `typedef` (visited
/// node), `typedef_name` names it if it is anonymous.
fn record_type<'a>(w: &mut Walker<'a>, node: Node<'a>, typedef: Option<(Node<'a>, Option<Node<'a>>)>) -> bool {
    let Some(body) = node.child_by_field_name("body") else { return false };
    let typedef_name = typedef.and_then(|(_, name)| name);
    let Some(name) = node.child_by_field_name("name").or(typedef_name) else { return false };
    let kind = match node.kind() {
        "struct_specifier" => SymbolKind::Struct,
        "union_specifier" => SymbolKind::Union,
        "enum_specifier" => SymbolKind::Enum,
        _ => SymbolKind::Class,
    };
    let (_, name) = split_qualified(w.src, name);
    let name = base_name_node(name);
    let type_name = w.text(name);
    for clause in children(node).into_iter().filter(|c| c.kind() == "base_class_clause") {
        for base in named_children(clause) {
            if matches!(base.kind(), "access_specifier" | "virtual" | "comment") {
                continue;
            }
            let supertype = text::strip_generics(w.text(base));
            w.relation(type_name, supertype, RelationKind::Extends, base);
        }
    }
    let mut def = w.def(kind, name);
    def.body = Some(body.start_byte());
    match typedef {
        None => {
            let mut outer = w.depth;
            if matches!(w.ancestor_kind(1), "declaration" | "field_declaration") {
                outer -= 1;
            }
            def.outer = template_lifted(w, outer);
        }
        Some((typedef_node, Some(_))) => {
            def.signature_node = Some(node);
            let head = w.src.get(typedef_node.start_byte()..body.start_byte()).unwrap_or("");
            let tail = w.src.get(body.end_byte()..typedef_node.end_byte()).unwrap_or("");
            def.signature = Some(text::one_line(&format!("{head} {{ … }}{tail}")));
        }
        Some((_, None)) => def.signature_node = Some(node),
    }
    w.define(def);
    true
}

/// `typedef struct {…} name;` defines the struct under the typedef's name; `typedef struct
/// s {…} s_t;` defines `s` and the alias `s_t`; other typedefs are aliases.
fn type_definition<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let declarators: Vec<Node<'a>> = {
        let mut cursor = node.walk();
        node.children_by_field_name("declarator", &mut cursor)
            .filter_map(|d| unwrap_declarator(d).map(|d| d.name))
            .collect()
    };
    let type_node = node.child_by_field_name("type");
    let record = type_node.filter(|t| {
        matches!(t.kind(), "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier")
            && t.child_by_field_name("body").is_some()
    });
    let mut aliases = declarators.as_slice();
    let mut opened_scope = false;
    if let Some(record) = record {
        let anonymous = record.child_by_field_name("name").is_none();
        let typedef_name = if anonymous { declarators.first().copied() } else { None };
        opened_scope = record_type(w, record, Some((node, typedef_name)));
        if opened_scope && anonymous {
            aliases = declarators.get(1..).unwrap_or(&[]);
        }
    }
    for alias in aliases {
        let mut def = w.def(SymbolKind::TypeAlias, *alias);
        def.opens_scope = false;
        def.outside_scopes = usize::from(opened_scope);
        if record.is_some() {
            let head = type_node.map_or("", |t| {
                let body_start = t.child_by_field_name("body").map_or(t.end_byte(), |b| b.start_byte());
                w.src.get(node.start_byte()..body_start).unwrap_or("")
            });
            def.signature = Some(text::one_line(&format!("{head} {{ … }} {}", w.text(*alias))));
        }
        w.define(def);
    }
}

fn call_target<'a>(w: &mut Walker<'a>, function: Node<'a>) {
    match function.kind() {
        "identifier" => {
            let callee = w.text(function);
            w.call(function, callee, None, None);
        }
        "field_expression" => {
            let (Some(argument), Some(field)) =
                (function.child_by_field_name("argument"), function.child_by_field_name("field"))
            else {
                return;
            };
            let (_, field) = split_qualified(w.src, field);
            let field = base_name_node(field);
            let receiver = Some(text::cut(w.text(argument), text::RECEIVER_CHARS));
            let callee = w.text(field);
            w.call(field, callee, None, receiver);
        }
        "qualified_identifier" | "template_function" => {
            let (scope, name) = split_qualified(w.src, function);
            let name = base_name_node(name);
            let callee = w.text(name);
            w.call(name, callee, scope, None);
        }
        _ => {}
    }
}

fn macro_definition<'a>(w: &mut Walker<'a>, node: Node<'a>) {
    let Some(name) = node.child_by_field_name("name") else { return };
    let raw = w.text(node).replace("\\\r\n", " ").replace("\\\n", " ");
    let mut def = w.def(SymbolKind::Macro, name);
    def.signature = Some(text::one_line(&raw));
    w.define(def);
    let Some(value) = node.child_by_field_name("value") else { return };
    if !w.collects_uses() {
        return;
    }
    let parameter_nodes = node.child_by_field_name("parameters").map(named_children).unwrap_or_default();
    for parameter in &parameter_nodes {
        w.suppress(*parameter);
    }
    let parameters: Vec<&str> = parameter_nodes.iter().map(|parameter| w.text(*parameter)).collect();
    scan_macro_body(w, value, &parameters);
}

/// Calls (`name(`, `recv->name(`) and identifiers written in a macro body.
fn scan_macro_body<'a>(w: &mut Walker<'a>, value: Node<'a>, parameters: &[&str]) {
    let body = w.text(value).as_bytes();
    let start = value.start_position();
    let (mut row, mut line_start) = (start.row, 0usize);
    let column_base = start.column;
    let mut previous_identifier: Option<(usize, usize)> = None;
    let mut previous_operator = false;
    let mut i = 0;
    while i < body.len() {
        let byte = body[i];
        match byte {
            b'\n' => {
                row += 1;
                line_start = i + 1;
                i += 1;
            }
            b'"' | b'\'' => {
                i += 1;
                while i < body.len() && body[i] != byte && body[i] != b'\n' {
                    i += if body[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                previous_identifier = None;
                previous_operator = false;
            }
            b'/' if body.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < body.len() && !(body[i] == b'*' && body[i + 1] == b'/') {
                    if body[i] == b'\n' {
                        row += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            b'/' if body.get(i + 1) == Some(&b'/') => {
                while i < body.len() && body[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' => {
                // `#x` stringifies and `a##b` pastes: neither is a name.
                i += 1;
                while i < body.len() && (body[i] == b'#' || body[i].is_ascii_alphanumeric() || body[i] == b'_') {
                    i += 1;
                }
                previous_identifier = None;
                previous_operator = false;
            }
            b'0'..=b'9' => {
                while i < body.len() && (body[i].is_ascii_alphanumeric() || body[i] == b'_' || body[i] == b'.') {
                    i += 1;
                }
                previous_identifier = None;
                previous_operator = false;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let begin = i;
                while i < body.len() && (body[i].is_ascii_alphanumeric() || body[i] == b'_') {
                    i += 1;
                }
                if body.get(i..i + 2) == Some(b"##") {
                    previous_identifier = None;
                    continue;
                }
                let word = std::str::from_utf8(&body[begin..i]).unwrap_or("");
                let column = if row == start.row { column_base + begin } else { begin - line_start };
                let mut next = i;
                while next < body.len() && matches!(body[next], b' ' | b'\t') {
                    next += 1;
                }
                let is_keyword = C_KEYWORDS.contains(&word) || MACRO_NON_IDENTIFIERS.contains(&word);
                if !is_keyword && !parameters.contains(&word) && word != "__VA_ARGS__" {
                    if body.get(next) == Some(&b'(') {
                        let receiver = if previous_operator {
                            previous_identifier
                                .and_then(|(a, b)| std::str::from_utf8(&body[a..b]).ok())
                                .map(str::to_owned)
                        } else {
                            None
                        };
                        w.call_at(row, column, word, None, receiver);
                    }
                    w.reference_at(row, column, word);
                }
                previous_identifier = Some((begin, i));
                previous_operator = false;
            }
            b'.' => {
                previous_operator = true;
                i += 1;
            }
            b'-' if body.get(i + 1) == Some(&b'>') => {
                previous_operator = true;
                i += 2;
            }
            b' ' | b'\t' | b'\r' | b'\\' => i += 1,
            _ => {
                previous_identifier = None;
                previous_operator = false;
                i += 1;
            }
        }
    }
}

/// C's keywords: never an identifier in a macro body, never a name a C declaration defines
/// (`is_reserved`).
const C_KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Generic",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
];

/// Words a macro body's scan does not take for identifiers besides C's keywords: C23's and
/// GNU's spellings, the preprocessor's `defined`, and C++'s keywords.
const MACRO_NON_IDENTIFIERS: &[&str] = &[
    "bool",
    "true",
    "false",
    "typeof",
    "__typeof__",
    "__attribute__",
    "__asm__",
    "asm",
    "__extension__",
    "defined",
    "__inline",
    "__inline__",
    "__restrict",
    "__volatile__",
    "class",
    "new",
    "delete",
    "this",
    "template",
    "typename",
    "namespace",
    "nullptr",
    "decltype",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "alignof",
    "noexcept",
    "operator",
    "throw",
    "try",
    "catch",
];
