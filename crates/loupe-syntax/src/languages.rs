//! The per-language halves of the walk: which node kinds are references, comments and
//! attributes, and what each handled kind means.
//!
//! Owns the mapping from `Lang` to its grammar and rules, compiled once per process. Must not
//! hold walk state: everything a handler records goes through `walk::Walker`.

pub(crate) mod c_family;
mod csharp;
mod go;
mod java;
mod javascript;
mod kotlin;
mod php;
pub(crate) mod python;
mod ruby;
mod rust;
pub(crate) mod shared;

use std::sync::OnceLock;

use crate::facts::Lang;
use crate::walk::{Compiled, Rules};

/// The compiled rules of `lang`, built on first use.
pub(crate) fn compiled(lang: Lang) -> &'static Compiled {
    static COMPILED: [OnceLock<Compiled>; 13] = [const { OnceLock::new() }; 13];
    let index = Lang::ALL.iter().position(|candidate| *candidate == lang).unwrap_or(0);
    COMPILED[index].get_or_init(|| Compiled::new(rules(lang)))
}

fn rules(lang: Lang) -> &'static Rules {
    match lang {
        Lang::Rust => &rust::RULES,
        Lang::Python => &python::RULES,
        Lang::TypeScript => &javascript::TYPESCRIPT,
        Lang::Tsx => &javascript::TSX,
        Lang::JavaScript => &javascript::JAVASCRIPT,
        Lang::Go => &go::RULES,
        Lang::Java => &java::RULES,
        Lang::C => &c_family::C,
        Lang::Cpp => &c_family::CPP,
        Lang::CSharp => &csharp::RULES,
        Lang::Ruby => &ruby::RULES,
        Lang::Php => &php::RULES,
        Lang::Kotlin => &kotlin::RULES,
    }
}
