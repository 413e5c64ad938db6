//! The data flow of one variable inside one function (`data_flow`): the function's parameters
//! and every occurrence of the variable, classified as a parameter, definition, assignment,
//! use, argument of a call or return value, in source order.
//!
//! Owns the boundary types of the `analyze mode=data_flow` query, the choice of the function
//! the variable belongs to, the one walk of that function's subtree, and shadowing: a nested
//! function or closure that binds the name itself hides its occurrences. The per-language
//! halves (which nodes name variables, which nodes are functions, what one occurrence means,
//! how calls are named) live in `flow/<language>.rs`. Must not do IO or resolve names across
//! files: a call's callee is named the way `CallSite` names it, and the caller follows it.
//!
//! Known limits, all syntactic: names inside Rust macro format strings (`"{x}"`) and other
//! string literals are not seen; a field read without `this.` / `self.` (Java, C#, C++) looks
//! like a variable of that name; block scoping is not modelled (an inner `let x` is another
//! definition of the same `x`, Go's `:=` is always a definition); keyword and splat arguments
//! are uses, not arguments; a C++ declaration the grammar reads as a function prototype
//! (`Foo f(x);`) hides its names.

mod c_family;
mod csharp;
mod go;
mod java;
mod javascript;
mod python;
mod rust;

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Language, Node, Tree};

use crate::facts::{Lang, Span};
use crate::text;
use crate::walk::last_row;

/// The data flow of one name inside one function (or the top level of a file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFlow {
    /// The function analysed: its name (None for an anonymous one, and for the top level).
    pub function: Option<String>,
    /// The lines of the function (of the whole file for the top level).
    pub span: Span,
    /// Its parameters in call order, WITHOUT the receiver (`self` in Rust and Python methods,
    /// `cls` in classmethods; Go receivers are not parameters anyway), so that argument i at a
    /// call site maps to `parameters[i]`. An unnamed parameter is `_`; a destructuring one is
    /// its pattern as written, on one line.
    pub parameters: Vec<String>,
    /// Every occurrence of the name that is the variable, in source order.
    pub events: Vec<FlowEvent>,
}

/// One occurrence of the variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowEvent {
    pub kind: FlowKind,
    /// 1-based line of the occurrence.
    pub line: usize,
    /// 1-based byte column of the occurrence.
    pub column: usize,
}

/// What one occurrence of the variable does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FlowKind {
    /// Declared as a parameter of the function (also a method's receiver when it is the name
    /// asked for, though receivers are not listed in `DataFlow::parameters`).
    Parameter,
    /// A declaration or first binding: `let x =`, `x := `, `var x`, `int x =`, Python's first
    /// `x =`, `for x in`, a pattern binding, `catch (e)`, `with … as x`.
    Definition,
    /// A later write: `x = …`, `x += …`, `x++`.
    Assignment,
    /// A read that is none of the below.
    Use,
    /// Passed directly as argument `index` (0-based, receiver not counted) of a call:
    /// `f(a, x)` → callee `f`, index 1; `obj.m(x)` → callee `m`, receiver `obj`;
    /// `A::new(x)` → callee `new`, qualifier `A`; `new Foo(x)` → callee `Foo`. `&x`, `&mut x`
    /// and `*x` (Rust, C, C++, Go) and parentheses count as passing `x`. Callee, qualifier and
    /// receiver follow the conventions of `CallSite`.
    Argument { callee: String, qualifier: Option<String>, receiver: Option<String>, index: usize },
    /// Returned: `return x` (also one value of Go's and Python's `return x, y`), a Rust tail
    /// expression that is exactly `x`, the expression body of a lambda or arrow function.
    Return,
}

/// The data flow of `name` inside the innermost function, method, closure-bearing function or
/// constructor whose span contains line `line` (1-based): the function's own parameters in
/// order and every occurrence of `name` in it, classified. `None` when no function contains
/// `line` (then callers fall back to the whole file: `line == 0` means "top level of the
/// file", treating module-level code as the scope), and for languages without flow rules
/// (Ruby, PHP, Kotlin).
///
/// When several functions contain `line` (a closure inside a method, two on one line), the
/// innermost one that binds `name` (as a parameter or a local) is chosen; if none binds it, the
/// innermost named one (so a captured variable is followed in its owner rather than in a
/// callback), else the innermost. Occurrences inside a nested function or closure that binds
/// `name` itself are left out; inside one that captures it, they are uses.
///
/// One parse (the thread's parser) and one walk of the outermost such function. Never fails on
/// broken code: whatever parsed is classified.
pub fn data_flow(lang: Lang, text: &str, line: usize, name: &str) -> Option<DataFlow> {
    let table = table(lang)?;
    let compiled = crate::languages::compiled(lang);
    let tree = crate::parse_tree(lang, &compiled.language, text, None)?;
    let analyse = || analyse(table, &tree, text, line, name);
    if cfg!(debug_assertions) {
        // Debug builds (tests) let a bug surface; release builds answer nothing instead.
        return analyse();
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(analyse)).ok().flatten()
}

// ----- the per-language interface ----------------------------------------------------------

/// The language-specific half of the data flow.
pub(crate) struct FlowRules {
    /// Node kinds whose text can name a variable (`identifier`, JS shorthand properties).
    pub(crate) names: &'static [&'static str],
    /// Functions, methods, constructors, closures, lambdas: what `data_flow` can analyse and
    /// what can shadow a name inside it.
    pub(crate) functions: &'static [&'static str],
    /// Other nodes with a scope of their own (Python comprehensions): they can shadow a name
    /// but are never analysed themselves.
    pub(crate) scopes: &'static [&'static str],
    /// Scopes whose names the functions nested in them do not see (Python class bodies).
    pub(crate) class_scopes: &'static [&'static str],
    /// What one occurrence of the name means.
    pub(crate) classify: fn(&Occurrence<'_, '_>) -> Role,
    /// A function's name, None when it has none.
    pub(crate) function_name: fn(&str, Node<'_>) -> Option<String>,
    /// A function's parameters in call order, without the receiver.
    pub(crate) parameters: fn(&str, Node<'_>) -> Vec<String>,
    /// The names the file's top-level imports bind: `a.f()` has qualifier `a` rather than a
    /// receiver when `a` is one of them (as in `CallSite`).
    pub(crate) imported_names: fn(&str, Node<'_>) -> HashSet<String>,
}

/// What an occurrence of the name is, as a language module sees it (relative to the innermost
/// function or scope around it; the engine turns it into a `FlowKind` for the function chosen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    /// Not the variable: a field, a type, a label, a declared function's name, an import path.
    NotVariable,
    /// Python `global x` / `nonlocal x`: the scope's bindings of `x` write the outer variable.
    DeclaresOuter,
    /// Bound as a parameter (or receiver) of the innermost function.
    Parameter,
    /// Declared or bound: binds the name in the innermost scope.
    Definition,
    /// A Python assignment target: a definition when it is the first binding, else an
    /// assignment; binds the name in the innermost scope either way.
    Binding,
    /// Written without being declared.
    Assignment,
    /// Called by name (`x(…)`): a use when the variable is bound in the function, else the name
    /// of some function and not an event.
    Called,
    /// Read.
    Use,
    /// Read by the scope around the innermost function rather than by it (a C++ lambda
    /// capture `[x]`): shadowing inside that function does not hide it.
    UseOutside,
    /// Passed directly as argument `index` of a call.
    Argument(Call, usize),
    /// Returned from the innermost function.
    Return,
}

/// A call as `CallSite` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    callee: String,
    qualifier: Option<String>,
    receiver: Option<String>,
    /// The receiver is a plain dotted path that may name a module or type (`os.path.join`):
    /// decided against the capitalisation and the file's imports, as the walk does.
    ambiguous: bool,
}

impl Call {
    /// `callee(…)`.
    pub(crate) fn plain(callee: &str) -> Option<Call> {
        Call::new(callee, None, None)
    }

    /// `qualifier::callee(…)`, `new qualifier.Callee(…)`.
    pub(crate) fn qualified(callee: &str, qualifier: Option<String>) -> Option<Call> {
        Call::new(callee, qualifier, None)
    }

    /// `receiver.callee(…)` where the receiver is a value.
    pub(crate) fn method(callee: &str, receiver: &str) -> Option<Call> {
        Call::new(callee, None, Some(text::cut(receiver, text::RECEIVER_CHARS)))
    }

    /// `object.callee(…)` where `object` may be a value or a module or type path.
    pub(crate) fn member(callee: &str, object: &str) -> Option<Call> {
        let mut call = Call::method(callee, object)?;
        call.ambiguous = !object.is_empty()
            && object.len() <= 200
            && object.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b':'));
        Some(call)
    }

    fn new(callee: &str, qualifier: Option<String>, receiver: Option<String>) -> Option<Call> {
        if callee.is_empty() {
            return None;
        }
        Some(Call {
            callee: callee.to_owned(),
            qualifier: qualifier.filter(|q| !q.is_empty()),
            receiver: receiver.filter(|r| !r.is_empty()),
            ambiguous: false,
        })
    }
}

/// One occurrence of the name with its ancestors up to the walked function, for a language's
/// `classify`.
pub(crate) struct Occurrence<'s, 't> {
    pub(crate) src: &'t str,
    /// From the walked function down to the occurrence: each node with the field it holds in
    /// its parent (None for the walked function itself).
    stack: &'s [(Node<'t>, Option<&'t str>)],
}

impl<'t> Occurrence<'_, 't> {
    /// The node `up` levels above the occurrence (0 = the occurrence itself).
    pub(crate) fn node(&self, up: usize) -> Option<Node<'t>> {
        let index = self.stack.len().checked_sub(up + 1)?;
        self.stack.get(index).map(|(node, _)| *node)
    }

    /// The kind of the node `up` levels above, "" above the walked function.
    pub(crate) fn kind(&self, up: usize) -> &'t str {
        self.node(up).map_or("", |node| node.kind())
    }

    /// The field the node `up` levels above holds in its parent.
    pub(crate) fn field(&self, up: usize) -> Option<&'t str> {
        let index = self.stack.len().checked_sub(up + 1)?;
        self.stack.get(index).and_then(|(_, field)| *field)
    }

    /// Whether the node `up` levels above has an anonymous child spelled `token`.
    pub(crate) fn has_token(&self, up: usize, token: &str) -> bool {
        let Some(node) = self.node(up) else { return false };
        let mut cursor = node.walk();
        node.children(&mut cursor).any(|child| !child.is_named() && child.kind() == token)
    }

    /// When the node `up` levels above is directly an argument (a named child of an argument
    /// list of kind `lists`, held in the `arguments` field of its parent): that parent (the
    /// call) and the argument's 0-based index, comments not counted.
    pub(crate) fn argument_at(&self, up: usize, lists: &[&str]) -> Option<(Node<'t>, usize)> {
        let argument = self.node(up)?;
        let list = self.node(up + 1)?;
        if !lists.contains(&list.kind()) || self.field(up + 1) != Some("arguments") {
            return None;
        }
        let call = self.node(up + 2)?;
        let mut cursor = list.walk();
        let index = list
            .named_children(&mut cursor)
            .filter(|child| !child.is_extra())
            .position(|child| child.id() == argument.id())?;
        Some((call, index))
    }
}

/// A language's rules with their kind tables, built once.
struct FlowTable {
    rules: &'static FlowRules,
    names: Vec<bool>,
    functions: Vec<bool>,
    scopes: Vec<bool>,
    class_scopes: Vec<bool>,
}

impl FlowTable {
    fn new(rules: &'static FlowRules, language: &Language) -> FlowTable {
        let size = language.node_kind_count() + 1;
        // Named kinds only: `function` and `lambda` are also the keywords' anonymous kinds,
        // which must not open a function.
        let mark = |kinds: &[&str]| {
            let mut table = vec![false; size];
            for kind in kinds {
                let id = language.id_for_node_kind(kind, true) as usize;
                if id != 0 && id < size {
                    table[id] = true;
                }
            }
            table
        };
        FlowTable {
            rules,
            names: mark(rules.names),
            functions: mark(rules.functions),
            scopes: mark(rules.scopes),
            class_scopes: mark(rules.class_scopes),
        }
    }

    fn is(table: &[bool], node: Node<'_>) -> bool {
        table.get(node.kind_id() as usize).copied().unwrap_or(false)
    }

    fn is_function(&self, node: Node<'_>) -> bool {
        FlowTable::is(&self.functions, node)
    }
}

fn rules(lang: Lang) -> Option<&'static FlowRules> {
    let rules = match lang {
        Lang::Rust => &rust::RULES,
        Lang::Python => &python::RULES,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => &javascript::RULES,
        Lang::Go => &go::RULES,
        Lang::Java => &java::RULES,
        Lang::C | Lang::Cpp => &c_family::RULES,
        Lang::CSharp => &csharp::RULES,
        Lang::Ruby | Lang::Php | Lang::Kotlin => return None,
    };
    Some(rules)
}

fn table(lang: Lang) -> Option<&'static FlowTable> {
    static TABLES: [OnceLock<Option<FlowTable>>; 13] = [const { OnceLock::new() }; 13];
    let index = Lang::ALL.iter().position(|candidate| *candidate == lang).unwrap_or(0);
    TABLES[index]
        .get_or_init(|| rules(lang).map(|rules| FlowTable::new(rules, &crate::languages::compiled(lang).language)))
        .as_ref()
}

// ----- the walk ----------------------------------------------------------------------------

/// A function or scope met by the walk.
struct Frame<'t> {
    node: Node<'t>,
    parent: Option<usize>,
    /// A function (or the file, for the top level) rather than a comprehension or class body.
    is_function: bool,
    /// A class body: its bindings do not reach the functions nested in it.
    is_class_body: bool,
    /// Its span contains the line asked for.
    contains_line: bool,
    /// It binds the name itself (parameter or local), hiding any outer variable.
    binds: bool,
    /// Python `global` / `nonlocal`: its bindings write the outer variable.
    passes_through: bool,
}

/// An occurrence as classified by the language, before a function is chosen.
struct Raw {
    frame: usize,
    role: Role,
    line: usize,
    column: usize,
}

/// The state of one analysis: the frames met and the occurrences found, in walk (source)
/// order.
struct Walk<'t> {
    table: &'static FlowTable,
    src: &'t str,
    /// The root of the file (where the imports are).
    root: Node<'t>,
    name: &'t str,
    /// 0-based row asked for; None for the top level.
    row: Option<usize>,
    frames: Vec<Frame<'t>>,
    raws: Vec<Raw>,
}

fn analyse(table: &'static FlowTable, tree: &Tree, src: &str, line: usize, name: &str) -> Option<DataFlow> {
    let root = tree.root_node();
    let row = line.checked_sub(1);
    let walk_root = match row {
        None => root,
        Some(row) => outermost_function(table, root, row)?,
    };
    let mut walk = Walk { table, src, root, name, row, frames: Vec::new(), raws: Vec::new() };
    walk.run(walk_root);
    let chosen = walk.choose()?;
    let events = walk.events(chosen);
    let rules = table.rules;
    let node = walk.frames[chosen].node;
    let flow = match row {
        None => DataFlow {
            function: None,
            span: Span { start_line: 1, end_line: src.lines().count().max(1) },
            parameters: Vec::new(),
            events,
        },
        Some(_) => DataFlow {
            function: (rules.function_name)(src, node),
            span: Span { start_line: node.start_position().row + 1, end_line: last_row(node) + 1 },
            parameters: (rules.parameters)(src, node),
            events,
        },
    };
    Some(flow)
}

fn contains_row(node: Node<'_>, row: usize) -> bool {
    node.start_position().row <= row && row <= last_row(node)
}

/// The first function, in document order, among the outermost ones whose span contains `row`.
fn outermost_function<'t>(table: &FlowTable, root: Node<'t>, row: usize) -> Option<Node<'t>> {
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        if table.is_function(node) {
            return Some(node);
        }
        let before = stack.len();
        stack.extend(node.children(&mut cursor).filter(|child| contains_row(*child, row)));
        stack[before..].reverse();
    }
    None
}

impl<'t> Walk<'t> {
    /// Walks `walk_root` once: opens a frame per function and scope, classifies every node
    /// spelled like the name.
    fn run(&mut self, walk_root: Node<'t>) {
        let table = self.table;
        let mut cursor = walk_root.walk();
        let mut stack: Vec<(Node<'t>, Option<&'t str>)> = Vec::with_capacity(64);
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut depth = 0;
        loop {
            let node = cursor.node();
            stack.truncate(depth);
            stack.push((node, cursor.field_name()));
            while open.last().is_some_and(|(open_depth, _)| *open_depth >= depth) {
                open.pop();
            }
            let is_function = depth == 0 || table.is_function(node);
            let is_class_body = !is_function && FlowTable::is(&table.class_scopes, node);
            if is_function || is_class_body || FlowTable::is(&table.scopes, node) {
                self.frames.push(Frame {
                    node,
                    parent: open.last().map(|(_, frame)| *frame),
                    is_function,
                    is_class_body,
                    contains_line: self.row.is_none_or(|row| contains_row(node, row)),
                    binds: false,
                    passes_through: false,
                });
                open.push((depth, self.frames.len() - 1));
            }
            if FlowTable::is(&table.names, node) && self.is_name(node) {
                let frame = open.last().map_or(0, |(_, frame)| *frame);
                let role = (table.rules.classify)(&Occurrence { src: self.src, stack: &stack });
                match role {
                    Role::NotVariable => {}
                    Role::DeclaresOuter => self.frames[frame].passes_through = true,
                    role => {
                        let frame = match role {
                            Role::UseOutside => self.frames[frame].parent.unwrap_or(frame),
                            _ => frame,
                        };
                        let position = node.start_position();
                        self.raws.push(Raw { frame, role, line: position.row + 1, column: position.column + 1 });
                    }
                }
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    self.settle_bindings();
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                cursor.goto_parent();
                depth -= 1;
            }
        }
    }

    fn is_name(&self, node: Node<'_>) -> bool {
        !self.name.is_empty()
            && node.end_byte() - node.start_byte() == self.name.len()
            && self.src.get(node.start_byte()..node.end_byte()) == Some(self.name)
    }

    /// Marks the frames that bind the name themselves.
    fn settle_bindings(&mut self) {
        for raw in &self.raws {
            let frame = &mut self.frames[raw.frame];
            if matches!(raw.role, Role::Parameter | Role::Definition | Role::Binding) && !frame.passes_through {
                frame.binds = true;
            }
        }
    }

    fn nesting(&self, mut frame: usize) -> usize {
        let mut depth = 0;
        while let Some(parent) = self.frames[frame].parent {
            frame = parent;
            depth += 1;
        }
        depth
    }

    /// The function analysed: the innermost one containing the line that binds the name, else
    /// the innermost named one, else the innermost (the file itself for the top level).
    fn choose(&self) -> Option<usize> {
        if self.row.is_none() {
            return if self.frames.is_empty() { None } else { Some(0) };
        }
        let mut candidates: Vec<usize> =
            (0..self.frames.len()).filter(|&i| self.frames[i].is_function && self.frames[i].contains_line).collect();
        // Innermost first; among equals, the first in the file.
        candidates.sort_by_key(|&i| std::cmp::Reverse(self.nesting(i)));
        let rules = self.table.rules;
        candidates
            .iter()
            .find(|&&i| self.frames[i].binds)
            .or_else(|| candidates.iter().find(|&&i| (rules.function_name)(self.src, self.frames[i].node).is_some()))
            .or(candidates.first())
            .copied()
    }

    /// The events of the function `chosen`: its own occurrences and those of nested functions
    /// that do not bind the name, in source order.
    fn events(&self, chosen: usize) -> Vec<FlowEvent> {
        let mut imported: Option<HashSet<String>> = None;
        let mut bound = false;
        let mut events = Vec::new();
        for raw in &self.raws {
            if !self.visible_from(raw.frame, chosen) {
                continue;
            }
            let own = raw.frame == chosen;
            let kind = match &raw.role {
                Role::NotVariable | Role::DeclaresOuter => continue,
                Role::Parameter if own => FlowKind::Parameter,
                Role::Parameter => continue,
                Role::Definition if own => FlowKind::Definition,
                Role::Binding if own && !bound => FlowKind::Definition,
                Role::Definition | Role::Binding | Role::Assignment => FlowKind::Assignment,
                Role::Called if self.frames[chosen].binds => FlowKind::Use,
                Role::Called => continue,
                Role::Use | Role::UseOutside => FlowKind::Use,
                Role::Return if own => FlowKind::Return,
                Role::Return => FlowKind::Use,
                Role::Argument(call, index) => {
                    let (qualifier, receiver) = self.settle_receiver(call, &mut imported);
                    FlowKind::Argument { callee: call.callee.clone(), qualifier, receiver, index: *index }
                }
            };
            bound |= matches!(kind, FlowKind::Parameter | FlowKind::Definition);
            events.push(FlowEvent { kind, line: raw.line, column: raw.column });
        }
        events.sort_by_key(|event| (event.line, event.column));
        events
    }

    /// Whether an occurrence in `frame` is the variable of `chosen`: `frame` is `chosen` or
    /// nested in it, and no frame in between binds the name itself (a class body's bindings
    /// hide only what is written in the body itself, not in its methods).
    fn visible_from(&self, mut frame: usize, chosen: usize) -> bool {
        let mut in_function = false;
        loop {
            if frame == chosen {
                return true;
            }
            let current = &self.frames[frame];
            if current.binds && !(current.is_class_body && in_function) {
                return false;
            }
            in_function |= current.is_function;
            match self.frames[frame].parent {
                Some(parent) => frame = parent,
                None => return false,
            }
        }
    }

    /// The qualifier and receiver of a call: an ambiguous receiver is a qualifier when its
    /// first segment is capitalised or imported, the rule the walk applies to `CallSite`.
    fn settle_receiver(&self, call: &Call, imported: &mut Option<HashSet<String>>) -> (Option<String>, Option<String>) {
        let (Some(receiver), true) = (call.receiver.as_deref(), call.ambiguous) else {
            return (call.qualifier.clone(), call.receiver.clone());
        };
        let first = receiver.split(['.', ':']).next().unwrap_or(receiver);
        let is_path = first.starts_with(|c: char| c.is_ascii_uppercase())
            || imported.get_or_insert_with(|| (self.table.rules.imported_names)(self.src, self.root)).contains(first);
        if is_path { (Some(receiver.to_owned()), None) } else { (call.qualifier.clone(), Some(receiver.to_owned())) }
    }
}

// ----- helpers the language modules share ---------------------------------------------------

/// The named children of `node` that are not comments.
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).filter(|child| !child.is_extra()).collect()
}

/// The source text of `node`.
pub(crate) fn node_text<'s>(src: &'s str, node: Node<'_>) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// A parameter as listed: its name, or for a pattern its text on one line.
pub(crate) fn parameter_text(src: &str, node: Node<'_>) -> String {
    text::one_line(node_text(src, node))
}

/// The text of a function's `name` field.
pub(crate) fn name_field(src: &str, node: Node<'_>) -> Option<String> {
    node.child_by_field_name("name").map(|name| node_text(src, name).to_owned()).filter(|name| !name.is_empty())
}

/// For languages whose calls never need the file's imports.
pub(crate) fn no_imports(_: &str, _: Node<'_>) -> HashSet<String> {
    HashSet::new()
}
