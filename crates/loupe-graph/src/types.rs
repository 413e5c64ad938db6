//! The type hierarchy of a workspace, as written: extends, implements, trait impls and Go
//! embedding, looked up by type name in both directions.

use loupe_core::RepoPath;
use loupe_syntax::{RelationKind, TypeRelation};
use rustc_hash::FxHashMap;

/// One relation and the file that states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationAt {
    pub path: RepoPath,
    /// Simple names (the last segment of a written path, `Display` for `fmt::Display`).
    pub subtype: String,
    pub supertype: String,
    pub kind: RelationKind,
    pub line: usize,
}

impl RelationAt {
    fn new(path: &RepoPath, relation: &TypeRelation) -> RelationAt {
        RelationAt {
            path: path.clone(),
            subtype: simple_name(&relation.subtype).to_owned(),
            supertype: simple_name(&relation.supertype).to_owned(),
            kind: relation.kind,
            line: relation.line,
        }
    }
}

/// Every relation of the workspace, indexed by both ends' simple names.
#[derive(Debug, Default)]
pub struct TypeGraph {
    relations: Vec<RelationAt>,
    by_subtype: FxHashMap<String, Vec<u32>>,
    by_supertype: FxHashMap<String, Vec<u32>>,
}

/// `a::b::C`, `a.b.C`, `*C` → `C`.
pub fn simple_name(written: &str) -> &str {
    let last = written.rsplit("::").next().unwrap_or(written);
    let last = last.rsplit('.').next().unwrap_or(last);
    last.trim_start_matches(['*', '&'])
}

impl TypeGraph {
    /// Collects the relations of `files` (path, relations), in the order given.
    pub fn build<'a>(files: impl IntoIterator<Item = (&'a RepoPath, &'a [TypeRelation])>) -> TypeGraph {
        let mut graph = TypeGraph::default();
        for (path, relations) in files {
            for relation in relations {
                graph.push(RelationAt::new(path, relation));
            }
        }
        graph
    }

    /// The relations in which `name` is the subtype: its supertypes.
    pub fn supertypes_of(&self, name: &str) -> Vec<&RelationAt> {
        self.lookup(&self.by_subtype, name)
    }

    /// The relations in which `name` is the supertype: its subtypes.
    pub fn subtypes_of(&self, name: &str) -> Vec<&RelationAt> {
        self.lookup(&self.by_supertype, name)
    }

    /// `path`'s relations replaced by `relations` (its content changed): the graph a build with
    /// the new relations makes, without reading the other files' again.
    pub fn replace_relations(&mut self, path: &RepoPath, relations: &[TypeRelation]) {
        self.relations.retain(|at| &at.path != path);
        let old = std::mem::take(&mut self.relations);
        *self = TypeGraph::default();
        for at in old {
            self.push(at);
        }
        for relation in relations {
            self.push(RelationAt::new(path, relation));
        }
    }

    fn push(&mut self, at: RelationAt) {
        let id = self.relations.len() as u32;
        self.by_subtype.entry(at.subtype.clone()).or_default().push(id);
        self.by_supertype.entry(at.supertype.clone()).or_default().push(id);
        self.relations.push(at);
    }

    /// In path, then line order, however the graph was built or updated.
    fn lookup<'a>(&'a self, map: &FxHashMap<String, Vec<u32>>, name: &str) -> Vec<&'a RelationAt> {
        let mut found: Vec<&RelationAt> = map
            .get(simple_name(name))
            .map(|ids| ids.iter().map(|&id| &self.relations[id as usize]).collect())
            .unwrap_or_default();
        found.sort_by(|left, right| (&left.path, left.line).cmp(&(&right.path, right.line)));
        found
    }

    pub fn len(&self) -> usize {
        self.relations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.relations.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_up_both_directions_by_simple_name() {
        let path = RepoPath::normalize("src/shapes.rs").unwrap();
        let relations = vec![
            TypeRelation {
                subtype: "Circle".into(),
                supertype: "crate::Shape".into(),
                kind: RelationKind::Impl,
                line: 4,
            },
            TypeRelation { subtype: "Square".into(), supertype: "Shape".into(), kind: RelationKind::Impl, line: 9 },
        ];
        let graph = TypeGraph::build([(&path, relations.as_slice())]);
        let subtypes: Vec<&str> = graph.subtypes_of("Shape").iter().map(|at| at.subtype.as_str()).collect();
        assert_eq!(subtypes, ["Circle", "Square"]);
        assert_eq!(graph.supertypes_of("Circle")[0].supertype, "Shape");
        assert!(graph.supertypes_of("Shape").is_empty());
        assert_eq!(simple_name("*pkg.Base"), "Base");
    }
}
