//! Hand-written expectations for the cases the index and `analyze` lean on hardest: method
//! containers, out-of-line C++ methods, Python relative imports, TS arrow functions, Go
//! receivers and embedding, doc comments inside spans, and recovery from broken code.
//!
//! Owns assertions written from the API user's side; must not duplicate the fixture
//! snapshots wholesale.

use loupe_syntax::{Definition, FileFacts, ImportKind, Lang, RelationKind, SymbolKind, parse};
use loupe_syntax::{Extract, parse_with};

fn definition<'f>(facts: &'f FileFacts, name: &str, kind: SymbolKind) -> &'f Definition {
    facts
        .definitions
        .iter()
        .find(|d| d.name == name && d.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} {name} in {:#?}", facts.definitions))
}

#[test]
fn rust_impl_methods_are_contained_by_the_type() {
    let facts = parse(
        Lang::Rust,
        "struct Config;\nimpl Config {\n    pub fn load() -> Self { Config::new() }\n}\nimpl Display for Config {\n    fn fmt(&self) {}\n}\n",
    );
    let load = definition(&facts, "load", SymbolKind::Method);
    assert_eq!(load.container.as_deref(), Some("Config"));
    assert_eq!(load.depth, 1);
    assert_eq!(load.signature, "pub fn load() -> Self");
    let fmt = definition(&facts, "fmt", SymbolKind::Method);
    assert_eq!(fmt.container.as_deref(), Some("Config"));
    let call = facts.calls.iter().find(|c| c.callee == "new").unwrap();
    assert_eq!(call.qualifier.as_deref(), Some("Config"));
    assert_eq!(call.container.as_deref(), Some("Config::load"));
    let relation = &facts.type_relations[0];
    assert_eq!((relation.subtype.as_str(), relation.supertype.as_str()), ("Config", "Display"));
    assert_eq!(relation.kind, RelationKind::Impl);
}

#[test]
fn rust_nested_modules_qualify_with_double_colons() {
    let facts = parse(Lang::Rust, "mod outer {\n    mod inner {\n        fn deep() { helper(); }\n    }\n}\n");
    assert_eq!(definition(&facts, "deep", SymbolKind::Function).container.as_deref(), Some("outer::inner"));
    assert_eq!(facts.calls[0].container.as_deref(), Some("outer::inner::deep"));
}

#[test]
fn rust_use_trees_are_flattened() {
    let facts = parse(Lang::Rust, "use a::{b::{c, d as e}, f::*};\npub use crate::x::Y;\nmod m;\n");
    let imports: Vec<(ImportKind, &str, Vec<&str>, Option<&str>)> = facts
        .imports
        .iter()
        .map(|i| (i.kind, i.module.as_str(), i.names.iter().map(String::as_str).collect(), i.alias.as_deref()))
        .collect();
    assert_eq!(
        imports,
        vec![
            (ImportKind::Use, "a::b", vec!["c"], None),
            (ImportKind::Use, "a::b", vec!["d"], Some("e")),
            (ImportKind::Use, "a::f", vec!["*"], None),
            (ImportKind::Export, "crate::x", vec!["Y"], None),
            (ImportKind::Mod, "m", vec![], None),
        ]
    );
}

#[test]
fn rust_imports_inside_inline_modules_count_them() {
    let text = "use a::b;\nmod outer {\n    mod file_child;\n    mod tests {\n        fn t() { use super::*; }\n    }\n}\nimpl X { fn f() { use self::y; } }\n";
    let facts = parse(Lang::Rust, text);
    let imports: Vec<(ImportKind, &str, usize)> =
        facts.imports.iter().map(|i| (i.kind, i.module.as_str(), i.relative_level)).collect();
    assert_eq!(
        imports,
        vec![
            (ImportKind::Use, "a", 0),
            (ImportKind::Mod, "outer::file_child", 1),
            (ImportKind::Use, "super", 2),
            (ImportKind::Use, "self", 0),
        ]
    );
}

#[test]
fn cpp_out_of_line_method_is_contained_by_its_class() {
    let facts = parse(
        Lang::Cpp,
        "namespace ns {\nclass Foo { void bar(); };\n}\nvoid ns::Foo::bar() { baz(); }\nFoo::Foo() {}\n",
    );
    let bar: Vec<&Definition> = facts.definitions.iter().filter(|d| d.name == "bar").collect();
    assert_eq!(bar.len(), 2);
    assert_eq!(bar[0].container.as_deref(), Some("ns::Foo"));
    assert_eq!(bar[1].container.as_deref(), Some("ns::Foo"));
    assert_eq!(bar[1].kind, SymbolKind::Method);
    assert_eq!(bar[1].depth, 0);
    assert_eq!((bar[0].signature.as_str(), bar[1].signature.as_str()), ("void bar();", "void ns::Foo::bar()"));
    assert_eq!(facts.calls[0].container.as_deref(), Some("ns::Foo::bar"));
    assert_eq!(definition(&facts, "Foo", SymbolKind::Constructor).container.as_deref(), Some("Foo"));
}

#[test]
fn c_prototypes_pointers_and_macros() {
    let facts = parse(
        Lang::C,
        "#include <stdio.h>\n#define CALL(x) do_call(x)\nint add(int a, int b);\nint (*handler)(int);\nchar *dup(const char *s) { return CALL(s); }\n",
    );
    assert!(facts.imports[0].is_system);
    assert_eq!(facts.imports[0].module, "stdio.h");
    // A prototype says what it is with its `;`; the definition and a function pointer do not.
    assert_eq!(definition(&facts, "add", SymbolKind::Function).signature, "int add(int a, int b);");
    assert_eq!(definition(&facts, "handler", SymbolKind::Variable).signature, "int (*handler)(int)");
    assert_eq!(definition(&facts, "dup", SymbolKind::Function).signature, "char *dup(const char *s)");
    let through_macro = facts.calls.iter().find(|c| c.callee == "do_call").unwrap();
    assert_eq!(through_macro.container.as_deref(), Some("CALL"));
    assert_eq!((through_macro.line, through_macro.column), (2, 17));
}

#[test]
fn python_relative_imports_keep_their_level() {
    let facts = parse(Lang::Python, "from . import a\nfrom ..pkg.mod import b as c, d\nimport os.path as p\n");
    let levels: Vec<(&str, usize, Vec<&str>, Option<&str>)> = facts
        .imports
        .iter()
        .map(|i| {
            (i.module.as_str(), i.relative_level, i.names.iter().map(String::as_str).collect(), i.alias.as_deref())
        })
        .collect();
    assert_eq!(
        levels,
        vec![
            ("", 1, vec!["a"], None),
            ("pkg.mod", 2, vec!["d"], None),
            ("pkg.mod", 2, vec!["b"], Some("c")),
            ("os.path", 0, vec![], Some("p")),
        ]
    );
    assert_eq!(facts.imports[1].kind, ImportKind::From);
}

#[test]
fn python_methods_decorators_and_docstrings() {
    let text = "import os\nclass Parser(Base):\n    \"\"\"Parses.\"\"\"\n\n    @staticmethod\n    def parse(text):\n        \"\"\"One line.\"\"\"\n        return os.path.join(text)\n";
    let facts = parse(Lang::Python, text);
    let class = definition(&facts, "Parser", SymbolKind::Class);
    assert_eq!(class.signature, "class Parser(Base):");
    assert_eq!(class.doc.as_deref(), Some("Parses."));
    let parse_method = definition(&facts, "parse", SymbolKind::Method);
    assert_eq!(parse_method.container.as_deref(), Some("Parser"));
    assert_eq!(parse_method.span.start_line, 5, "the decorator is in the span");
    assert_eq!(parse_method.name_line, 6);
    assert_eq!(parse_method.doc.as_deref(), Some("One line."));
    let call = &facts.calls[0];
    assert_eq!(call.qualifier.as_deref(), Some("os.path"));
    assert_eq!(call.container.as_deref(), Some("Parser.parse"));
}

#[test]
fn typescript_arrow_function_const_is_a_function() {
    let facts = parse(
        Lang::TypeScript,
        "/** Doubles. */\nexport const double = (x: number): number => x * 2;\nconst LIMIT = 3;\n",
    );
    let double = definition(&facts, "double", SymbolKind::Function);
    assert_eq!(double.signature, "export const double = (x: number): number");
    assert_eq!(double.doc.as_deref(), Some("Doubles."));
    assert_eq!(double.span.start_line, 1);
    definition(&facts, "LIMIT", SymbolKind::Constant);
}

#[test]
fn typescript_new_is_a_call_and_heritage_is_recorded() {
    let facts = parse(Lang::Tsx, "class A extends B<T> implements C { m() { return new D(); } }\n");
    assert_eq!(facts.calls[0].callee, "D");
    let relations: Vec<(&str, RelationKind)> =
        facts.type_relations.iter().map(|r| (r.supertype.as_str(), r.kind)).collect();
    assert_eq!(relations, vec![("B", RelationKind::Extends), ("C", RelationKind::Implements)]);
}

#[test]
fn go_method_container_and_embedding() {
    let text = "package p\nimport str \"strings\"\ntype S struct {\n\t*Base\n\tname string\n}\ntype I interface {\n\tio.Reader\n}\nfunc (s *S) Run() { str.ToUpper(s.name); s.stop() }\n";
    let facts = parse(Lang::Go, text);
    let run = definition(&facts, "Run", SymbolKind::Method);
    assert_eq!(run.container.as_deref(), Some("S"));
    assert_eq!(run.depth, 0);
    let relations: Vec<(&str, &str, RelationKind)> =
        facts.type_relations.iter().map(|r| (r.subtype.as_str(), r.supertype.as_str(), r.kind)).collect();
    assert_eq!(relations, vec![("S", "Base", RelationKind::Embeds), ("I", "io.Reader", RelationKind::Embeds)]);
    let upper = facts.calls.iter().find(|c| c.callee == "ToUpper").unwrap();
    assert_eq!(upper.qualifier.as_deref(), Some("str"));
    assert_eq!(upper.container.as_deref(), Some("S.Run"));
    let stop = facts.calls.iter().find(|c| c.callee == "stop").unwrap();
    assert_eq!(stop.receiver.as_deref(), Some("s"));
}

#[test]
fn doc_comments_are_inside_spans() {
    let rust = parse(Lang::Rust, "\n/// Doc.\n#[inline]\npub fn f() {}\n");
    let f = definition(&rust, "f", SymbolKind::Function);
    assert_eq!((f.span.start_line, f.span.end_line, f.name_line), (2, 4, 4));
    assert_eq!(f.doc.as_deref(), Some("Doc."));

    let java = parse(Lang::Java, "/**\n * Doc.\n */\n@Deprecated\nclass A {}\n");
    let a = definition(&java, "A", SymbolKind::Class);
    assert_eq!((a.span.start_line, a.doc.as_deref(), a.signature.as_str()), (1, Some("Doc."), "class A"));

    let go = parse(Lang::Go, "package p\n\n// Run runs.\n// Twice.\nfunc Run() {}\n");
    let run = definition(&go, "Run", SymbolKind::Function);
    assert_eq!((run.span.start_line, run.doc.as_deref()), (3, Some("Run runs.\nTwice.")));

    let separated = parse(Lang::C, "/* license */\n\nint f(void);\n");
    let f = definition(&separated, "f", SymbolKind::Function);
    assert_eq!((f.span.start_line, f.doc.as_deref()), (3, None), "a blank line ends a doc comment");

    let trailing = parse(Lang::C, "int a; /* about a */\nint b;\n");
    assert_eq!(definition(&trailing, "b", SymbolKind::Variable).doc, None, "a trailing comment is not a doc");
}

#[test]
fn broken_code_keeps_what_surrounds_the_damage() {
    let cases = [
        (Lang::Rust, "fn before() {}\nfn broken( {\n  let = ;\n\nfn after() {}\n", ["before", "after"]),
        (
            Lang::Python,
            "def before():\n    pass\n\ndef broken():\n    x = = 1 @@@ $$\n\ndef after():\n    pass\n",
            ["before", "after"],
        ),
        (
            Lang::C,
            "int before(void) { return 1; }\nint broken( { ;;; \nint after(void) { return 2; }\n",
            ["before", "after"],
        ),
    ];
    for (lang, text, names) in cases {
        let facts = parse(lang, text);
        assert!(facts.error_nodes > 0, "{lang:?}");
        for name in names {
            assert!(facts.definitions.iter().any(|d| d.name == name), "{lang:?} lost {name}: {:#?}", facts.definitions);
        }
    }
}

#[test]
fn references_are_uses_not_definitions() {
    let facts = parse(Lang::Rust, "fn f(x: Foo) -> Bar { let y = x.field; g(y) }\n");
    let names: Vec<&str> = facts.references.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["Foo", "Bar", "x", "field", "g", "y"]);
    assert!(facts.references.iter().all(|r| r.container.as_deref() == Some("f")));
}

#[test]
fn empty_and_odd_input_never_fails() {
    for lang in Lang::ALL {
        for text in ["", "\n", "\u{feff}", "}}}}", "\0\0\0", "é", "/*", "\"", "#"] {
            let facts = parse(*lang, text);
            assert_eq!(facts.lang, *lang);
        }
    }
}

#[test]
fn languages_come_from_extensions() {
    let cases = [
        ("src/lib.rs", Some(Lang::Rust)),
        ("a/b.pyi", Some(Lang::Python)),
        ("x.mts", Some(Lang::TypeScript)),
        ("x.tsx", Some(Lang::Tsx)),
        ("x.jsx", Some(Lang::JavaScript)),
        ("x.cjs", Some(Lang::JavaScript)),
        ("x.h", Some(Lang::C)),
        ("x.hh", Some(Lang::Cpp)),
        ("X.CPP", Some(Lang::Cpp)),
        ("x.kts", Some(Lang::Kotlin)),
        ("Makefile", None),
        (".gitignore", None),
        ("dir.rs/file", None),
    ];
    for (path, expected) in cases {
        assert_eq!(Lang::from_path(path), expected, "{path}");
    }
    assert_eq!(Lang::ALL.len(), 13);
    assert_eq!(Lang::Cpp.name(), "cpp");
}

#[test]
fn declarations_skip_clean_c_bodies_but_keep_their_macros_and_what_recovery_swallowed() {
    let source = "int local_types(void)\n{\n\tstruct inner { int a; } x;\n\treturn helper(x.a);\n}\n\n\
                  int tables(void)\n{\n#define ROW(n) { n, #n }\n\treturn 0;\n}\n\nint after(void) { return 1; }\n";
    let full = parse(Lang::C, source);
    let declarations = parse_with(Lang::C, source, Extract::Declarations);
    let names = |facts: &FileFacts| facts.definitions.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    assert!(names(&full).contains(&"inner".to_owned()));
    assert_eq!(names(&declarations), ["local_types", "tables", "ROW", "after"]);
    assert!(declarations.calls.is_empty() && declarations.references.is_empty());
    assert!(full.calls.iter().any(|call| call.callee == "helper"));
}

/// The declarations parse of C leaves long function bodies unparsed; what it reports must not
/// change where the bodies were ordinary, and a struct after an attribute keeps its fields.
#[test]
fn declarations_of_c_skim_function_bodies_without_losing_spans_or_fields() {
    let body =
        "\tint total = 0;\n\tfor (int i = 0; i < n; i++) {\n\t\ttotal += weigh(i, \"}\");\n\t}\n\treturn total;\n";
    let source = format!(
        "/* Sums. */\nstatic int sum(int n)\n{{\n{body}}}\n\n\
         SYSCALL_DEFINE1(sum, int, n)\n{{\n\tint local_total = 0;\n{body}}}\n\n\
         typedef struct __attribute__((packed)) {{\n\tint alpha_field;\n\tint beta_field;\n\tint gamma_field;\n\tint delta_field;\n}} row_t;\n\n\
         int after(void) {{ return sum(3); }}\n"
    );
    let declarations = parse_with(Lang::C, &source, Extract::Declarations);
    let found = |name: &str| declarations.definitions.iter().find(|d| d.name == name).map(|d| (d.kind, d.span));
    assert_eq!(found("sum").map(|(_, span)| (span.start_line, span.end_line)), Some((1, 9)));
    assert_eq!(found("alpha_field").map(|(kind, _)| kind), Some(SymbolKind::Field));
    assert_eq!(found("delta_field").map(|(kind, _)| kind), Some(SymbolKind::Field));
    assert_eq!(found("after").map(|(_, span)| (span.start_line, span.end_line)), Some((28, 28)));
    // A macro's block at file scope was parsed as a block of statements: its locals are not
    // the file's variables.
    assert_eq!(found("local_total"), None);
}

#[test]
fn javascript_es5_classes_prototype_methods_exports_and_object_members() {
    let source = r#"var Subject = (function (_super) {
    __extends(Subject, _super);
    function Subject() {
        return _super.call(this) || this;
    }
    Subject.create = function (destination) {
        return new Subject();
    };
    Subject.prototype.next = function (value) {
        this.value = value;
    };
    return Subject;
}(Observable));
Other.prototype.close = function () {};
exports.timeoutProvider = {
    setTimeout: function (handler) { return handler; },
    clearTimeout: (handle) => handle,
    delegate: undefined,
};
exports.noop = function () {};
"#;
    let facts = parse(Lang::JavaScript, source);
    let found = |name: &str| {
        facts
            .definitions
            .iter()
            .filter(|d| d.name == name)
            .map(|d| (d.kind, d.container.clone(), d.span.start_line))
            .collect::<Vec<_>>()
    };
    assert_eq!(found("Subject"), [(SymbolKind::Class, None, 1), (SymbolKind::Constructor, Some("Subject".into()), 3)]);
    assert_eq!(found("create"), [(SymbolKind::Method, Some("Subject".into()), 6)]);
    assert_eq!(found("next"), [(SymbolKind::Method, Some("Subject".into()), 9)]);
    assert_eq!(found("close"), [(SymbolKind::Method, Some("Other".into()), 14)]);
    assert_eq!(found("setTimeout"), [(SymbolKind::Method, None, 16)]);
    assert_eq!(found("clearTimeout"), [(SymbolKind::Method, None, 17)]);
    assert!(found("delegate").is_empty(), "a value member is not a definition");
    assert_eq!(found("noop"), [(SymbolKind::Function, None, 20)]);
}

#[test]
fn javascript_variables_inside_anonymous_functions_are_locals() {
    let source = "var __read = (this && this.__read) || function (o, n) {\n    var m = o, i, r;\n    return m;\n};\nvar top = 1;\n(function () { var hidden = 2; })();\n";
    let facts = parse(Lang::JavaScript, source);
    let names: Vec<&str> = facts.definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["__read", "top"]);
}

/// Around an unexpanded macro tree-sitter recovers with a keyword as the declarator; no
/// keyword is ever a definition, while the names a C file may use (`new`) still are.
#[test]
fn c_keywords_are_never_definitions() {
    let src = "static __initdata struct {\n\tconst char *compat;\n} hyper_node = {\"xen\"};\n\n\
               struct alpha_machine_vector xlt_mv __initmv = {\n\t.vector_name = \"XLT\",\n};\n\n\
               int new(int class) { return class; }\n";
    for lang in [Lang::C, Lang::Cpp] {
        let facts = parse(lang, src);
        let names: Vec<&str> = facts.definitions.iter().map(|d| d.name.as_str()).collect();
        for keyword in ["struct", "static", "const"] {
            assert!(!names.contains(&keyword), "{lang:?}: {names:?}");
        }
        assert_eq!(names.contains(&"new"), lang == Lang::C, "{lang:?}: {names:?}");
    }
}

/// The index's parse leaves out Python function bodies that can hold nothing it keeps; what
/// bodies do hold (a nested function or class, an import, a type alias) it still finds, exactly
/// as the full parse does.
#[test]
fn python_bodies_the_index_skips_hide_nothing_it_keeps() {
    let src = "import os\n\n\
               def plain(a, default=None):\n    content_type = a\n    return content_type or default\n\n\
               def outer():\n    def inner():\n        return 1\n    return inner\n\n\
               def lazy():\n    from django.db import models\n    return models\n\n\
               def factory():\n    class Local(Base):\n        pass\n    return Local\n\n\
               def aliases():\n    type Pair = tuple[int, int]\n    return Pair\n\n\
               class Holder:\n    def method(self):\n        self.x = 1\n\n    def nested(self):\n        def helper():\n            pass\n";
    let full = parse(Lang::Python, src);
    let declarations = parse_with(Lang::Python, src, Extract::Declarations);
    let names = |facts: &FileFacts| -> Vec<(String, Option<String>, usize, usize)> {
        facts
            .definitions
            .iter()
            .map(|d| (d.name.clone(), d.container.clone(), d.span.start_line, d.span.end_line))
            .collect()
    };
    assert_eq!(names(&declarations), names(&full));
    for name in ["inner", "Local", "Pair", "helper", "method"] {
        assert!(names(&full).iter().any(|(found, ..)| found == name), "{name} in {:?}", names(&full));
    }
    assert_eq!(declarations.imports, full.imports);
    assert!(full.imports.iter().any(|import| import.module == "django.db"));
    assert_eq!(declarations.type_relations, full.type_relations);
}
