//! Hand-written expectations for `data_flow` on what the `analyze mode=data_flow` query leans
//! on hardest, per language: parameter against definition against assignment, argument
//! indexes with and without a receiver, qualifiers against receivers, returns, fields and
//! called names that are not the variable, receivers left out of the parameters, shadowing by
//! nested functions; and the edges of the API (top level, no function, unsupported language,
//! broken code, the serde shape).
//!
//! Owns assertions written from the API user's side; must not duplicate the fixture snapshots
//! of `flow.rs`.

use loupe_syntax::{DataFlow, FlowEvent, FlowKind, Lang, data_flow};

fn flow(lang: Lang, text: &str, line: usize, name: &str) -> DataFlow {
    data_flow(lang, text, line, name).unwrap_or_else(|| panic!("no function contains line {line}"))
}

/// The events as `line:kind`; an argument as `line:callee[index]`, written `recv.callee[i]`
/// with a receiver and `qual::callee[i]` with a qualifier.
fn events(flow: &DataFlow) -> Vec<String> {
    flow.events
        .iter()
        .map(|event| {
            let kind = match &event.kind {
                FlowKind::Parameter => "parameter".to_owned(),
                FlowKind::Definition => "definition".to_owned(),
                FlowKind::Assignment => "assignment".to_owned(),
                FlowKind::Use => "use".to_owned(),
                FlowKind::Return => "return".to_owned(),
                FlowKind::Argument { callee, qualifier, receiver, index } => match (qualifier, receiver) {
                    (Some(qualifier), _) => format!("{qualifier}::{callee}[{index}]"),
                    (None, Some(receiver)) => format!("{receiver}.{callee}[{index}]"),
                    (None, None) => format!("{callee}[{index}]"),
                },
            };
            format!("{}:{kind}", event.line)
        })
        .collect()
}

fn events_of(lang: Lang, text: &str, line: usize, name: &str) -> Vec<String> {
    events(&flow(lang, text, line, name))
}

// ----- Rust ----------------------------------------------------------------------------------

#[test]
fn rust_parameter_definition_assignment_and_tail_return() {
    let text = "impl A {\n    fn f(&self, x: i32) -> i32 {\n        let y = x;\n        let x = y + 1;\n        x += 2;\n        x = 3;\n        x\n    }\n}\n";
    let flow = flow(Lang::Rust, text, 3, "x");
    assert_eq!(flow.function.as_deref(), Some("f"));
    assert_eq!(flow.parameters, ["x"], "self is the receiver, not a parameter");
    assert_eq!((flow.span.start_line, flow.span.end_line), (2, 8));
    assert_eq!(events(&flow), ["2:parameter", "3:use", "4:definition", "5:assignment", "6:assignment", "7:return"]);
}

#[test]
fn rust_arguments_count_from_zero_without_the_receiver() {
    let text = "fn g(v: Vec<u8>, buf: &mut Buf) {\n    push(buf, &v);\n    buf.extend(&mut v, *v);\n    Vec::from(v);\n    helper::<u8>(v);\n    println!(\"{:?}\", v);\n    v.len();\n    wrap(v.len());\n}\n";
    assert_eq!(
        events_of(Lang::Rust, text, 1, "v"),
        [
            "1:parameter",
            "2:push[1]",
            "3:buf.extend[0]",
            "3:buf.extend[1]",
            "4:Vec::from[0]",
            "5:helper[0]",
            "6:use",
            "7:use",
            "8:use"
        ]
    );
}

#[test]
fn rust_fields_and_called_functions_are_not_the_variable() {
    let text =
        "fn h(&self) {\n    let a = self.count;\n    count(a);\n    other.count += 1;\n    Total { count: 1 };\n}\n";
    assert_eq!(events_of(Lang::Rust, text, 2, "count"), Vec::<String>::new());
    // A called local (a closure) is a use of it.
    let text = "fn k() {\n    let f = |x: u8| x;\n    f(1);\n}\n";
    assert_eq!(events_of(Lang::Rust, text, 3, "f"), ["2:definition", "3:use"]);
}

#[test]
fn rust_closures_capture_unless_they_rebind() {
    let text = "fn s(x: u8) -> u8 {\n    let c = |x: u8| x + 1;\n    let d = || x * 2;\n    return x;\n}\n";
    assert_eq!(events_of(Lang::Rust, text, 1, "x"), ["1:parameter", "3:use", "4:return"]);
    // Asked on the closure's line, the closure that binds `x` is the function analysed.
    let closure = flow(Lang::Rust, text, 2, "x");
    assert_eq!((closure.function.as_deref(), closure.parameters.as_slice()), (None, &["x".to_owned()][..]));
    assert_eq!(events(&closure), ["2:parameter", "2:use"]);
}

// ----- Python --------------------------------------------------------------------------------

#[test]
fn python_receivers_are_not_parameters() {
    let text = "class A:\n    def m(self, a, *args, b=1, **kw):\n        pass\n\n    @classmethod\n    def c(cls, a):\n        pass\n\n    @staticmethod\n    def s(a, b):\n        pass\n\ndef f(self, a):\n    pass\n";
    assert_eq!(flow(Lang::Python, text, 3, "a").parameters, ["a", "*args", "b", "**kw"]);
    assert_eq!(flow(Lang::Python, text, 7, "a").parameters, ["a"]);
    assert_eq!(flow(Lang::Python, text, 11, "a").parameters, ["a", "b"]);
    assert_eq!(flow(Lang::Python, text, 14, "a").parameters, ["self", "a"], "a function's `self` is a parameter");
}

#[test]
fn python_first_binding_defines_and_later_ones_assign() {
    let text = "def f():\n    x = 1\n    x = 2\n    x += 3\n    y, x = 4, 5\n    return x\n\ndef g(x):\n    x = 1\n";
    assert_eq!(
        events_of(Lang::Python, text, 2, "x"),
        ["2:definition", "3:assignment", "4:assignment", "5:assignment", "6:return"]
    );
    assert_eq!(events_of(Lang::Python, text, 9, "x"), ["8:parameter", "9:assignment"]);
}

#[test]
fn python_arguments_attributes_and_keywords() {
    let text = "import os\n\ndef f(x, obj):\n    obj.m(1, x)\n    os.path.join(x)\n    g(key=x)\n    g(*x)\n    obj.x = 2\n    print(obj.x)\n    self.x = x\n";
    assert_eq!(
        events_of(Lang::Python, text, 4, "x"),
        ["3:parameter", "4:obj.m[1]", "5:os.path::join[0]", "6:use", "7:use", "10:use"]
    );
}

/// Regression: the `lambda` keyword shares its kind name with the lambda node and was taken
/// for a function of its own.
#[test]
fn python_lambda_keyword_is_not_a_function() {
    let flow = flow(Lang::Python, "g = lambda: (\n    q)\n", 1, "q");
    assert_eq!((flow.span.start_line, flow.span.end_line), (1, 2));
    assert_eq!(events(&flow), ["2:return"]);
}

#[test]
fn python_nested_scopes_shadow_and_capture() {
    let text = "def f(x):\n    g = lambda x: x\n    h = lambda: x\n    [x for x in range(3)]\n    def inner():\n        return x\n    return h\n";
    assert_eq!(events_of(Lang::Python, text, 1, "x"), ["1:parameter", "3:use", "6:use"]);
}

#[test]
fn python_match_captures_bind() {
    let text = "def f(data):\n    match data:\n        case [first, *rest] if first:\n            return rest\n        case Point(x=px) | {\"k\": px} as whole:\n            return px\n        case Color.RED:\n            pass\n";
    assert_eq!(events_of(Lang::Python, text, 2, "first"), ["3:definition", "3:use"]);
    assert_eq!(events_of(Lang::Python, text, 2, "rest"), ["3:definition", "4:return"]);
    assert_eq!(events_of(Lang::Python, text, 2, "px"), ["5:definition", "5:definition", "6:return"]);
    assert_eq!(events_of(Lang::Python, text, 2, "whole"), ["5:definition"]);
    assert_eq!(events_of(Lang::Python, text, 2, "x"), Vec::<String>::new(), "a keyword pattern's name");
    assert_eq!(events_of(Lang::Python, text, 2, "Color"), ["7:use"]);
}

// ----- TypeScript, JavaScript, TSX ------------------------------------------------------------

#[test]
fn typescript_properties_are_not_the_variable() {
    let text =
        "class C {\n  set(x: number) {\n    this.x = x;\n    const o = { x: 1, y: x, x };\n    o.x = x.x;\n  }\n}\n";
    assert_eq!(events_of(Lang::TypeScript, text, 3, "x"), ["2:parameter", "3:use", "4:use", "4:use", "5:use"]);
}

#[test]
fn javascript_calls_name_their_callee_like_call_sites() {
    let text = "import * as fs from \"fs\";\nfunction f(p) {\n  fs.readFile(p);\n  cache.get(1, p);\n  new Map(p);\n  new ns.Thing(p);\n  g(1, (p));\n  Config.load(p);\n}\n";
    assert_eq!(
        events_of(Lang::JavaScript, text, 3, "p"),
        [
            "2:parameter",
            "3:fs::readFile[0]",
            "4:cache.get[1]",
            "5:Map[0]",
            "6:ns::Thing[0]",
            "7:g[1]",
            "8:Config::load[0]"
        ]
    );
}

#[test]
fn typescript_destructuring_and_this_parameters() {
    let text = "function f(this: Window, { a, b }: P, [c]: Q, d = 1, ...rest: R) {\n  return a;\n}\n";
    let flow = flow(Lang::TypeScript, text, 2, "a");
    assert_eq!(flow.parameters, ["{ a, b }", "[c]", "d", "rest"]);
    assert_eq!(events(&flow), ["1:parameter", "2:return"]);
}

#[test]
fn javascript_loops_catch_and_arrow_bodies() {
    let text = "function f(items) {\n  let k;\n  for (k in items) {}\n  for (const k of items) {}\n  try {} catch (k) { log(k); }\n  const twice = (k) => k * 2;\n}\n";
    assert_eq!(
        events_of(Lang::JavaScript, text, 2, "k"),
        ["2:definition", "3:assignment", "4:definition", "5:definition", "5:log[0]"]
    );
    let arrow = flow(Lang::JavaScript, "const id = (k) => k;\n", 1, "k");
    assert_eq!(arrow.function.as_deref(), Some("id"));
    assert_eq!(events(&arrow), ["1:parameter", "1:return"]);
}

#[test]
fn tsx_jsx_expressions_are_uses_and_components_are_not_arguments() {
    let text = "function List({ items }: Props) {\n  return <ul>{items.map((item) => <Item key={item.id} item={item} />)}</ul>;\n}\n";
    assert_eq!(events_of(Lang::Tsx, text, 1, "items"), ["1:parameter", "2:use"]);
    assert_eq!(events_of(Lang::Tsx, text, 1, "item"), Vec::<String>::new(), "only the arrow binds `item`");
}

// ----- Go --------------------------------------------------------------------------------------

#[test]
fn go_receiver_definitions_and_package_qualifiers() {
    let text = "package p\n\nimport \"strings\"\n\nfunc (c *Conn) Send(msg string, n int) (err error) {\n\tmsg = strings.ToUpper(msg)\n\tbuf := msg + \"\\n\"\n\tc.write(msg)\n\thelper(n, msg)\n\treturn nil\n}\n";
    let flow = flow(Lang::Go, text, 6, "msg");
    assert_eq!(flow.parameters, ["msg", "n"], "the receiver is not a parameter");
    assert_eq!(
        events(&flow),
        ["5:parameter", "6:assignment", "6:strings::ToUpper[0]", "7:use", "8:c.write[0]", "9:helper[1]"]
    );
    assert_eq!(events_of(Lang::Go, text, 6, "c"), ["5:parameter", "8:use"]);
    assert_eq!(events_of(Lang::Go, text, 6, "buf"), ["7:definition"]);
}

#[test]
fn go_struct_keys_and_fields_are_not_the_variable() {
    let text = "package p\n\nfunc f(name string, m map[string]int) T {\n\tt := T{name: name}\n\tm2 := map[string]int{name: 1}\n\tt.name = name\n\treturn t\n}\n";
    assert_eq!(events_of(Lang::Go, text, 4, "name"), ["3:parameter", "4:use", "5:use", "6:use"]);
}

// ----- Java ------------------------------------------------------------------------------------

#[test]
fn java_fields_methods_and_qualifiers() {
    let text = "class A {\n  int x;\n  void set(int x) {\n    this.x = x;\n    x(x);\n    Math.max(x, 1);\n    list.add(0, x);\n    x++;\n    Runnable r = () -> use(x);\n    Function<Integer, Integer> g = x -> x;\n  }\n}\n";
    assert_eq!(
        events_of(Lang::Java, text, 4, "x"),
        ["3:parameter", "4:use", "5:x[0]", "6:Math::max[0]", "7:list.add[1]", "8:assignment", "9:use[0]"]
    );
}

// ----- C and C++ ------------------------------------------------------------------------------

#[test]
fn c_fields_pointers_and_prototypes() {
    let text = "int g(int *a, struct s *p);\n\nint f(struct s *p, int n) {\n    p->n = n;\n    g(&n, p);\n    n = n + 1;\n    return n;\n}\n";
    assert!(data_flow(Lang::C, text, 1, "p").is_none(), "a prototype is not a function");
    let flow = flow(Lang::C, text, 4, "n");
    assert_eq!(flow.parameters, ["p", "n"]);
    assert_eq!(events(&flow), ["3:parameter", "4:use", "5:g[0]", "6:assignment", "6:use", "7:return"]);
    assert_eq!(events_of(Lang::C, text, 4, "p"), ["3:parameter", "4:use", "5:g[1]"]);
}

/// Regression: a function pointer (`int (*cb)(int)`) is a variable, not a declared function,
/// and a function returning one takes its parameters from the declarator naming it.
#[test]
fn c_function_pointers_are_variables() {
    let text = "int (*pick(int which, int (*cb)(int)))(int) {\n    int (*fp)(int) = cb;\n    int *make(int n);\n    fp(which);\n    return fp;\n}\n";
    let flow = flow(Lang::C, text, 2, "fp");
    assert_eq!(flow.function.as_deref(), Some("pick"));
    assert_eq!(flow.parameters, ["which", "cb"]);
    assert_eq!(events(&flow), ["2:definition", "4:use", "5:return"]);
    assert_eq!(events_of(Lang::C, text, 2, "cb"), ["1:parameter", "2:use"]);
    assert_eq!(events_of(Lang::C, text, 2, "n"), Vec::<String>::new(), "a local prototype's parameter");
}

#[test]
fn cpp_methods_qualified_calls_and_this() {
    let text = "void Foo::run(Task t) {\n    this->t = t;\n    std::move(t);\n    auto w = new Worker(t);\n    w->take(t);\n    ns::t = 1;\n}\n";
    let flow = flow(Lang::Cpp, text, 2, "t");
    assert_eq!(flow.function.as_deref(), Some("run"));
    assert_eq!(events(&flow), ["1:parameter", "2:use", "3:std::move[0]", "4:Worker[0]", "5:w.take[0]"]);
}

// ----- C# ------------------------------------------------------------------------------------

#[test]
fn csharp_types_members_and_extension_receivers() {
    let text = "static class E {\n    public static int Scale(this Item item, int by, params int[] rest) {\n        Item copy = new Item(by);\n        item.by = by;\n        item.Apply(ref by, name: by);\n        Math.Abs(by);\n        by++;\n        Func<int, int> f = by => by;\n        return by;\n    }\n}\n";
    let flow = flow(Lang::CSharp, text, 3, "by");
    assert_eq!(flow.parameters, ["by", "rest"], "an extension method's `this` parameter is the receiver");
    assert_eq!(
        events(&flow),
        ["2:parameter", "3:Item[0]", "4:use", "5:item.Apply[0]", "5:use", "6:Math::Abs[0]", "7:assignment", "9:return"]
    );
    assert_eq!(events_of(Lang::CSharp, text, 3, "Item"), Vec::<String>::new(), "type names are not variables");
}

// ----- the edges of the API -----------------------------------------------------------------

#[test]
fn line_zero_is_the_top_level() {
    let text = "const limit = 10;\nfunction f(limit) { return limit; }\nfunction g() { return check(limit); }\n";
    let flow = flow(Lang::JavaScript, text, 0, "limit");
    assert_eq!((flow.function.as_deref(), flow.parameters.len()), (None, 0));
    assert_eq!((flow.span.start_line, flow.span.end_line), (1, 3));
    assert_eq!(events(&flow), ["1:definition", "3:check[0]"], "f's parameter is another variable");
}

#[test]
fn no_function_no_rules_no_name() {
    let text = "x = 1\n\ndef f(x):\n    return x\n";
    assert!(data_flow(Lang::Python, text, 1, "x").is_none(), "module-level line: the caller asks for line 0");
    assert!(data_flow(Lang::Python, text, 99, "x").is_none());
    assert!(data_flow(Lang::Ruby, "def f(x)\n  x\nend\n", 2, "x").is_none(), "no flow rules for Ruby");
    assert!(flow(Lang::Python, text, 4, "").events.is_empty());
    assert!(flow(Lang::Python, text, 4, "missing").events.is_empty());
}

#[test]
fn broken_code_still_answers() {
    let text = "def f(x):\n    y = x +\n    return g(x)\n";
    let flow = flow(Lang::Python, text, 3, "x");
    assert_eq!(flow.events.first().map(|event| &event.kind), Some(&FlowKind::Parameter));
    assert!(flow.events.len() >= 2, "{:?}", flow.events);
    let text = "fn f(x: u8) {\n    let y = x\n    g(x);\n}\n";
    assert_eq!(events_of(Lang::Rust, text, 2, "x").first().map(String::as_str), Some("1:parameter"));
    // Unclosed, the function is swallowed by an error node: no function, but the top level
    // still answers.
    let text = "fn f(x: u8) {\n    let y = x\n    g(x);\n";
    assert!(data_flow(Lang::Rust, text, 2, "x").is_none());
    assert_eq!(events_of(Lang::Rust, text, 0, "x").len(), 3);
}

#[test]
fn events_serialise_with_a_tagged_kind() {
    let event = FlowEvent {
        kind: FlowKind::Argument { callee: "new".into(), qualifier: Some("A".into()), receiver: None, index: 1 },
        line: 3,
        column: 9,
    };
    let json = serde_json::to_string(&event).unwrap();
    assert_eq!(
        json,
        r#"{"kind":{"kind":"argument","callee":"new","qualifier":"A","receiver":null,"index":1},"line":3,"column":9}"#
    );
    assert_eq!(serde_json::from_str::<FlowEvent>(&json).unwrap(), event);
    let plain = FlowEvent { kind: FlowKind::Use, line: 1, column: 1 };
    assert_eq!(serde_json::to_string(&plain).unwrap(), r#"{"kind":{"kind":"use"},"line":1,"column":1}"#);
}
