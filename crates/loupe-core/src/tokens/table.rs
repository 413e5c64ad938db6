//! Reads the vocabulary table that `build.rs` writes (its doc comment describes the format).
//!
//! A `serde::Deserializer` that knows exactly the shapes `bpe`'s `BytePairEncoding` asks
//! for: integers are fixed-width little-endian, counts come first, and byte strings are
//! handed over borrowed (the three Aho-Corasick automata are read straight from the
//! embedded bytes). There is no type tag to check and nothing to skip, which is where
//! MessagePack spends its time.

use std::fmt;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Must match `MAGIC` in `build.rs`.
const MAGIC: &[u8; 8] = b"loupeT01";

/// Decodes a table written by `build.rs`; the whole input must be used.
pub(super) fn decode(bytes: &[u8]) -> Result<BytePairEncoding, Error> {
    let mut reader = Reader { input: bytes };
    if reader.take::<8>()? != *MAGIC {
        return Err(Error("not a loupe vocabulary table".into()));
    }
    let bpe = BytePairEncoding::deserialize(&mut reader)?;
    if !reader.input.is_empty() {
        return Err(Error("trailing bytes after the vocabulary".into()));
    }
    Ok(bpe)
}

#[derive(Debug)]
pub(super) struct Error(Box<str>);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string().into())
    }
}

struct Reader<'de> {
    input: &'de [u8],
}

impl<'de> Reader<'de> {
    #[inline(always)]
    fn take<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        match self.input.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.input = rest;
                Ok(*head)
            }
            None => Err(truncated()),
        }
    }

    #[inline(always)]
    fn count(&mut self) -> Result<usize, Error> {
        Ok(u32::from_le_bytes(self.take()?) as usize)
    }
}

#[cold]
fn truncated() -> Error {
    Error("truncated vocabulary table".into())
}

/// Hands out `left` more elements (or key-value pairs) from the reader.
struct Counted<'a, 'de> {
    reader: &'a mut Reader<'de>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Counted<'_, 'de> {
    type Error = Error;

    #[inline(always)]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> MapAccess<'de> for Counted<'_, 'de> {
    type Error = Error;

    #[inline(always)]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    #[inline(always)]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(&mut *self.reader)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(Error("the vocabulary table is not self-describing".into()))
    }

    #[inline(always)]
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let [b] = self.take()?;
        visitor.visit_u8(b)
    }

    #[inline(always)]
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u32(u32::from_le_bytes(self.take()?))
    }

    #[inline(always)]
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(u64::from_le_bytes(self.take()?))
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.count()?;
        if self.input.len() < len {
            return Err(truncated());
        }
        let (bytes, rest) = self.input.split_at(len);
        self.input = rest;
        visitor.visit_borrowed_bytes(bytes)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let left = self.count()?;
        visitor.visit_seq(Counted { reader: self, left })
    }

    #[inline(always)]
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { reader: self, left: len })
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let left = self.count()?;
        visitor.visit_map(Counted { reader: self, left })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { reader: self, left: fields.len() })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u16 u128 f32 f64 char str string option unit unit_struct
        newtype_struct tuple_struct enum identifier ignored_any
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_foreign_and_truncated_input() {
        assert!(decode(b"").is_err());
        assert!(decode(b"MessagePack, not a table").is_err());
        let table = super::super::O200K_TABLE;
        assert_eq!(&table[..8], MAGIC);
        assert!(decode(&table[..64]).is_err());
        let mut short_count = table[..12].to_vec();
        short_count.extend_from_slice(&[0; 3]);
        assert!(decode(&short_count).is_err());
    }
}
