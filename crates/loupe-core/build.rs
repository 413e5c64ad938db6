//! Converts bpe-openai's o200k_base vocabulary into loupe's flat table (see `src/tokens.rs`).
//!
//! bpe-openai embeds its vocabulary as MessagePack, which takes most of the ~45 ms the
//! tokenizer needs to load. Here we load it once, at build time, and write the same
//! `BytePairEncoding` with `serde` into `$OUT_DIR/o200k_base.table`: a non-self-describing,
//! little-endian format that `src/tokens/table.rs` reads back. Its rules:
//!
//! - the file starts with `MAGIC`;
//! - `u8`, `u32`, `u64`: 1, 4, 8 bytes, little-endian;
//! - byte strings, sequences, maps: a `u32` count, then the bytes, elements or key-value pairs;
//! - tuples and structs: their elements or fields in order, no count.
//!
//! Anything else is refused, so a change in `bpe`'s layout fails the build, not the run.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde::ser::{self, SerializeMap, SerializeSeq, SerializeStruct, SerializeTuple};

/// Must match `MAGIC` in `src/tokens/table.rs`.
const MAGIC: &[u8; 8] = b"loupeT01";

#[allow(clippy::disallowed_methods, reason = "a build script writes into OUT_DIR")]
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let bpe = &bpe_openai::o200k_base().bpe;
    let mut writer = Writer(MAGIC.to_vec());
    bpe.serialize(&mut writer).expect("the o200k_base vocabulary fits loupe's table format");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("o200k_base.table"), &writer.0).expect("OUT_DIR is writable");
}

struct Writer(Vec<u8>);

impl Writer {
    fn count(&mut self, len: Option<usize>) -> Result<(), Error> {
        let len = len.ok_or_else(|| Error("a sequence without a known length".into()))?;
        let len = u32::try_from(len).map_err(|_| Error("a sequence longer than u32".into()))?;
        self.0.extend_from_slice(&len.to_le_bytes());
        Ok(())
    }
}

#[derive(Debug)]
struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {$(
        fn $name(self, $(_: $arg),*) -> Result<$ret, Error> {
            Err(Error(concat!("unsupported: ", stringify!($name)).into()))
        }
    )*};
}

impl ser::Serializer for &mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.0.push(v);
        Ok(())
    }

    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.0.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }

    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.0.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.count(Some(v.len()))?;
        self.0.extend_from_slice(v);
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self, Error> {
        self.count(len)?;
        Ok(self)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self, Error> {
        Ok(self)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self, Error> {
        self.count(len)?;
        Ok(self)
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, Error> {
        Ok(self)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u16(u16) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<(), Error> {
        Err(Error("unsupported: serialize_some".into()))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, _value: &T) -> Result<(), Error> {
        Err(Error("unsupported: serialize_newtype_struct".into()))
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(Error("unsupported: serialize_newtype_variant".into()))
    }
}

impl SerializeSeq for &mut Writer {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl SerializeTuple for &mut Writer {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl SerializeMap for &mut Writer {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        key.serialize(&mut **self)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl SerializeStruct for &mut Writer {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, _key: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}
