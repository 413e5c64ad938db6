//! The fixed query sets, one per corpus: identifiers that are rare (under ~150 matching lines),
//! medium (hundreds to a few thousand) and common (tens of thousands and more) in that corpus,
//! multi-word literals and regexes, plus names for symbol lookup. Chosen once by counting with
//! `rg` on the pinned corpora; the benchmark prints the counts of every run next to rg's.

/// How a query is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `type: text` / `rg -F`.
    Literal,
    /// `type: regex` / `rg` without `-F`.
    Regex,
}

/// One query of a set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Query {
    /// rare, medium, common, phrase or regex.
    pub(crate) class: &'static str,
    pub(crate) kind: Kind,
    pub(crate) text: &'static str,
}

/// Everything the benchmark asks of one corpus.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuerySet {
    pub(crate) queries: &'static [Query],
    pub(crate) symbols: &'static [&'static str],
    /// The literal the warm-start client searches for.
    pub(crate) warm_start_query: &'static str,
}

const fn rare(text: &'static str) -> Query {
    Query { class: "rare", kind: Kind::Literal, text }
}
const fn medium(text: &'static str) -> Query {
    Query { class: "medium", kind: Kind::Literal, text }
}
const fn common(text: &'static str) -> Query {
    Query { class: "common", kind: Kind::Literal, text }
}
const fn phrase(text: &'static str) -> Query {
    Query { class: "phrase", kind: Kind::Literal, text }
}
const fn regex(text: &'static str) -> Query {
    Query { class: "regex", kind: Kind::Regex, text }
}

const LINUX: QuerySet = QuerySet {
    queries: &[
        rare("ext4_fc_replay_inode"),
        rare("kvm_mmu_zap_all_fast"),
        rare("nf_conntrack_helper_register"),
        rare("tcp_v4_syn_recv_sock"),
        rare("rcu_nocb_cpu_offload"),
        medium("tcp_sendmsg"),
        medium("copy_from_user"),
        medium("kmalloc"),
        medium("devm_kzalloc"),
        medium("spin_lock_irqsave"),
        common("mutex_lock"),
        common("static"),
        common("return"),
        common("struct"),
        phrase("static int __init"),
        phrase("EXPORT_SYMBOL_GPL("),
        phrase("MODULE_LICENSE(\"GPL\")"),
        regex(r"static\s+inline\s+\w+\s+\*?\w+_lock\("),
        regex(r"EXPORT_SYMBOL(_GPL)?\(\w+_register\)"),
        regex(r"kzalloc\(sizeof\(\*\w+\)"),
    ],
    symbols: &[
        "schedule",
        "kmalloc",
        "task_struct",
        "ext4_fill_super",
        "tcp_v4_rcv",
        "copy_process",
        "vfs_read",
        "pci_enable_device",
        "mutex_lock",
        "list_add",
    ],
    warm_start_query: "tcp_sendmsg",
};

const DJANGO: QuerySet = QuerySet {
    queries: &[
        rare("_get_FIELD_display"),
        rare("ManyToManyRel"),
        rare("csrf_exempt"),
        rare("SuspiciousFileOperation"),
        rare("prefetch_related_objects"),
        medium("get_object_or_404"),
        medium("select_for_update"),
        medium("bulk_create"),
        medium("ContentType"),
        medium("HttpResponse"),
        common("QuerySet"),
        common("request"),
        common("import"),
        common("self"),
        phrase("def __init__(self"),
        phrase("from django.db import models"),
        phrase("raise ValueError("),
        regex(r"class \w+\(models\.Model\):"),
        regex(r"def test_\w+_unique"),
        regex(r"@\w+_required"),
    ],
    symbols: &[
        "QuerySet",
        "get_object_or_404",
        "HttpResponse",
        "Model",
        "reverse",
        "ForeignKey",
        "render",
        "ModelAdmin",
        "slugify",
        "CsrfViewMiddleware",
    ],
    warm_start_query: "bulk_create",
};

const RUST_SRC: QuerySet = QuerySet {
    queries: &[
        rare("is_sorted_by_key"),
        rare("BorrowckCtxt"),
        rare("thin_vec"),
        rare("try_reserve_exact"),
        rare("unsafe impl Send for"),
        medium("from_str_radix"),
        medium("use std::collections::HashMap"),
        medium("pub fn new("),
        medium("ParamEnv"),
        medium("LintPass"),
        common("TyCtxt"),
        common("Option"),
        common("impl"),
        common("self"),
        phrase("pub(crate) fn"),
        phrase("#[inline]"),
        phrase("impl<T> Default for"),
        regex(r"fn \w+_mut\("),
        regex(r"impl<T: \?Sized>"),
        regex(r"#\[derive\([^)]*Hash"),
    ],
    symbols: &[
        "Vec",
        "HashMap",
        "from_str_radix",
        "TyCtxt",
        "parse_expr",
        "Iterator",
        "spawn",
        "BorrowckCtxt",
        "push",
        "collect",
    ],
    warm_start_query: "from_str_radix",
};

const ZOD: QuerySet = QuerySet {
    queries: &[
        rare("isValidJWT"),
        rare("jsonStringifyReplacer"),
        rare("ZodBranded"),
        rare("$ZodCheckMultipleOf"),
        rare("superRefine"),
        medium("ZodDiscriminatedUnion"),
        medium("safeParseAsync"),
        medium("toJSONSchema"),
        medium("ZodObject"),
        medium("inst._zod"),
        common("ZodType"),
        common("export"),
        common("const"),
        common("type"),
        phrase("export declare function"),
        phrase("return this"),
        phrase("import type"),
        regex(r"export declare function \w+<T"),
        regex(r"\.(min|max)\(\d+"),
        regex(r"Zod\w+Def\b"),
    ],
    symbols: &[
        "ZodObject",
        "safeParse",
        "ZodError",
        "object",
        "string",
        "union",
        "refine",
        "ZodType",
        "toJSONSchema",
        "isValidJWT",
    ],
    warm_start_query: "safeParseAsync",
};

const RXJS: QuerySet = QuerySet {
    queries: &[
        rare("isInteropObservable"),
        rare("animationFrameScheduler"),
        rare("bufferToggle"),
        rare("dematerialize"),
        rare("exhaustMap"),
        medium("VirtualTimeScheduler"),
        medium("ConnectableObservable"),
        medium("mergeMap"),
        medium("createOperatorSubscriber"),
        medium("Subscriber"),
        common("Observable"),
        common("subscribe"),
        common("function"),
        common("var"),
        phrase("new Observable(function (subscriber)"),
        phrase("Object.defineProperty(exports"),
        phrase("export declare function"),
        regex(r"function \w+Map\("),
        regex(r"export declare function \w+<T>"),
        regex(r"\.pipe\(\w+\("),
    ],
    symbols: &[
        "Observable",
        "mergeMap",
        "switchMap",
        "Subject",
        "pipe",
        "subscribe",
        "debounceTime",
        "combineLatest",
        "BehaviorSubject",
        "fromEvent",
    ],
    warm_start_query: "mergeMap",
};

/// For a corpus without its own set: words every code base has.
const GENERIC: QuerySet = QuerySet {
    queries: &[
        common("return"),
        common("import"),
        medium("TODO"),
        phrase("for (int i = 0"),
        regex(r"fn \w+\("),
        regex(r"def \w+\(self"),
    ],
    symbols: &["main", "new", "init"],
    warm_start_query: "TODO",
};

/// The set for corpus `name` (the names `fetch-corpora.sh` uses).
pub(crate) fn for_corpus(name: &str) -> QuerySet {
    match name {
        "linux" | "linux4" => LINUX,
        "django" => DJANGO,
        "rust-src" => RUST_SRC,
        "zod" => ZOD,
        "rxjs" => RXJS,
        _ => GENERIC,
    }
}
