//! Record keys and values decoded from their payload format into typed Arrow columns.
//!
//! The record batch decoder hands out keys and values as binary columns; a format here turns
//! one of those columns into a struct column of a schema the caller gives, in Rust, with no
//! Python object per record. Like the rest of the core this does no I/O.

pub mod avro;
mod columns;
pub mod json;
pub mod temporal;
pub mod to_avro;
pub mod to_json;
