//! What each file says about other files and types: its imports and its type relations, as
//! `loupe-syntax` extracted them. The relationship queries (`analyze`) resolve and join them;
//! the index only keeps them current with the files and persists them.

use std::io::{self, Read, Write};

use loupe_syntax::{Import, TypeRelation};
use serde::{Deserialize, Serialize};

/// One file's imports and type relations, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLinks {
    pub imports: Box<[Import]>,
    pub type_relations: Box<[TypeRelation]>,
}

impl FileLinks {
    pub fn new(imports: Vec<Import>, type_relations: Vec<TypeRelation>) -> FileLinks {
        FileLinks { imports: imports.into_boxed_slice(), type_relations: type_relations.into_boxed_slice() }
    }

    pub fn is_empty(&self) -> bool {
        self.imports.is_empty() && self.type_relations.is_empty()
    }

    /// The compact form the table keeps: `None` for no links.
    pub(crate) fn encode(&self) -> Option<Box<[u8]>> {
        if self.is_empty() {
            return None;
        }
        postcard::to_stdvec(self).ok().map(Vec::into_boxed_slice)
    }
}

/// The links of every doc, by doc id, each file's encoded in one allocation (postcard): the
/// Linux kernel has 400 k includes, and one string per include held for the life of the
/// index cost 6 % of the cold build in allocator work. A file with none holds `None`.
#[derive(Debug, Default)]
pub(crate) struct LinkTable {
    by_doc: Vec<Option<Box<[u8]>>>,
}

impl LinkTable {
    #[cfg(test)]
    pub(crate) fn set(&mut self, doc: u32, links: FileLinks) {
        self.set_encoded(doc, links.encode());
    }

    pub(crate) fn set_encoded(&mut self, doc: u32, encoded: Option<Box<[u8]>>) {
        let doc = doc as usize;
        if self.by_doc.len() <= doc {
            self.by_doc.resize_with(doc + 1, || None);
        }
        self.by_doc[doc] = encoded;
    }

    /// The doc's links as stored (encoded).
    pub(crate) fn encoded(&self, doc: u32) -> Option<Box<[u8]>> {
        self.by_doc.get(doc as usize)?.clone()
    }

    pub(crate) fn remove(&mut self, doc: u32) {
        if let Some(slot) = self.by_doc.get_mut(doc as usize) {
            *slot = None;
        }
    }

    /// The doc's links, decoded (`None` when it has none).
    pub(crate) fn get(&self, doc: u32) -> Option<FileLinks> {
        let bytes = self.by_doc.get(doc as usize)?.as_deref()?;
        postcard::from_bytes(bytes).ok()
    }

    /// Writes the table as a length-prefixed postcard section.
    pub(crate) fn encode(&self, out: &mut impl Write) -> io::Result<()> {
        let bytes = postcard::to_stdvec(&self.by_doc).map_err(io::Error::other)?;
        out.write_all(&(bytes.len() as u64).to_le_bytes())?;
        out.write_all(&bytes)
    }

    pub(crate) fn decode_from(reader: &mut impl Read) -> Result<LinkTable, String> {
        let mut length = [0u8; 8];
        reader.read_exact(&mut length).map_err(|error| error.to_string())?;
        let length = usize::try_from(u64::from_le_bytes(length)).map_err(|error| error.to_string())?;
        let mut bytes = Vec::new();
        reader.take(length as u64).read_to_end(&mut bytes).map_err(|error| error.to_string())?;
        if bytes.len() != length {
            return Err("truncated link table".to_owned());
        }
        let by_doc = postcard::from_bytes(&bytes).map_err(|error| error.to_string())?;
        Ok(LinkTable { by_doc })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_syntax::{ImportKind, RelationKind};

    #[test]
    fn encode_then_decode_round_trips_and_truncation_is_an_error() {
        let mut table = LinkTable::default();
        let import = Import {
            kind: ImportKind::From,
            module: "pkg.util".to_owned(),
            names: vec!["helper".to_owned()],
            alias: None,
            line: 3,
            relative_level: 1,
            is_system: false,
        };
        let relation = TypeRelation {
            subtype: "Circle".to_owned(),
            supertype: "Shape".to_owned(),
            kind: RelationKind::Impl,
            line: 9,
        };
        table.set(2, FileLinks::new(vec![import.clone()], vec![relation.clone()]));
        table.set(0, FileLinks::default());
        let mut bytes = Vec::new();
        table.encode(&mut bytes).unwrap();
        let decoded = LinkTable::decode_from(&mut bytes.as_slice()).unwrap();
        assert_eq!(decoded.get(0), None);
        assert_eq!(decoded.get(1), None);
        let links = decoded.get(2).unwrap();
        assert_eq!(&*links.imports, &[import]);
        assert_eq!(&*links.type_relations, &[relation]);
        assert!(LinkTable::decode_from(&mut &bytes[..bytes.len() - 1]).is_err());
    }
}
