//! Small tree helpers the language modules share.
//!
//! Owns child lookups and string-literal unquoting. Must not record facts.

use tree_sitter::Node;

/// The children of `node` (named and anonymous).
pub(crate) fn children<'a>(node: Node<'a>) -> Vec<Node<'a>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// The named children of `node`.
pub(crate) fn named_children<'a>(node: Node<'a>) -> Vec<Node<'a>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The start of the `field` child, where a signature stops.
pub(crate) fn field_start(node: Node<'_>, field: &str) -> Option<usize> {
    node.child_by_field_name(field).map(|child| child.start_byte())
}

/// A string literal's text without its quotes (one pair of `"`, `'` or `` ` ``).
pub(crate) fn unquote(text: &str) -> &str {
    for quote in ['"', '\'', '`'] {
        if let Some(inner) = text.strip_prefix(quote).and_then(|rest| rest.strip_suffix(quote)) {
            return inner;
        }
    }
    text
}
