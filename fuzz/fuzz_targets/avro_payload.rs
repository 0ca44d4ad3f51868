//! Arbitrary payloads through the Avro payload decoder, against schemas of every type it reads
//! (nested, named types reused, unions of each kind), plain and Confluent-framed, with and
//! without a reader schema to resolve to: a struct column with one row per payload, the bad
//! rows listed in order, never a panic (nor an allocation the input's lengths ask for); FAILFAST
//! stops at the first bad row PERMISSIVE lists. Each row of the smaller schema that decodes is
//! written back and read again to the same value (the larger one's maps do not keep their
//! order, and its floats may be NaN, so its rows are not compared).
//!
//! Input: a first byte of flags (bit 0: Confluent framing, bit 1: a reader schema), then
//! payloads, each a length byte and that many bytes (a length byte of 0xFF is a null payload).
#![no_main]
use std::collections::HashMap;

use _native::payload::avro::{decode, AvroError, AvroSchema, Framing, Mode};
use _native::payload::to_avro::encode;
use arrow_array::Array;
use libfuzzer_sys::fuzz_target;

const WRITER: &str = r#"{"type": "record", "name": "W", "fields": [
  {"name": "b", "type": "boolean"},
  {"name": "i", "type": "int"},
  {"name": "l", "type": "long"},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "s", "type": "string"},
  {"name": "by", "type": "bytes"},
  {"name": "n", "type": ["null", "string"]},
  {"name": "il", "type": ["int", "long"]},
  {"name": "u", "type": ["null", "int", "string", {"type": "record", "name": "P", "fields": [
    {"name": "x", "type": "int"},
    {"name": "y", "type": ["null", {"type": "record", "name": "P2", "fields": [{"name": "z", "type": {"type": "fixed", "name": "F2", "size": 2}}]}], "default": null}]}]},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
  {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 2}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 3}},
  {"name": "decf", "type": {"type": "fixed", "name": "DF", "size": 9, "logicalType": "decimal", "precision": 21, "scale": 0}},
  {"name": "day", "type": {"type": "int", "logicalType": "date"}},
  {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "ltu", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
  {"name": "arr", "type": {"type": "array", "items": ["null", "long"]}},
  {"name": "nulls", "type": {"type": "array", "items": "null"}},
  {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "E"}}},
  {"name": "p", "type": "P"},
  {"name": "q", "type": ["null", "P2"]}
]}"#;

/// A later version of a smaller record: fields added with defaults, removed, promoted.
const OLD: &str = r#"{"type": "record", "name": "V", "fields": [
  {"name": "id", "type": "int"},
  {"name": "gone", "type": {"type": "array", "items": "string"}},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
  {"name": "u", "type": ["int", "string"]}
]}"#;
const NEW: &str = r#"{"type": "record", "name": "V", "fields": [
  {"name": "id", "type": "double"},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"], "default": "C"}},
  {"name": "u", "type": ["null", "long", "string"]},
  {"name": "added", "type": {"type": "map", "values": "int"}, "default": {"k": 1}}
]}"#;

fn payloads(data: &[u8]) -> Vec<Option<&[u8]>> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        if len == 0xFF {
            out.push(None);
            rest = tail;
            continue;
        }
        let n = usize::from(len).min(tail.len());
        out.push(Some(&tail[..n]));
        rest = &tail[n..];
    }
    out
}

fn check(payloads: &[Option<&[u8]>], framing: &Framing<'_>, reader: Option<&AvroSchema>) {
    let all = match decode(payloads, framing, reader, Mode::Permissive) {
        Ok(all) => all,
        // Two framed ids of different column types and no reader schema: refused as a whole.
        Err(AvroError::Mismatch { .. }) => return,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(all.values.len(), payloads.len());
    assert!(all.bad_rows.windows(2).all(|w| w[0].0 < w[1].0));
    all.values
        .to_data()
        .validate_full()
        .expect("a valid column");
    let first = decode(payloads, framing, reader, Mode::FailFast).expect("decoded before");
    match all.bad_rows.first() {
        Some((row, _)) => {
            assert_eq!(first.bad_rows.len(), 1);
            assert_eq!(first.bad_rows[0].0, *row);
            assert_eq!(first.values.len(), *row);
        }
        None => assert_eq!(first.values.len(), payloads.len()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let payloads = payloads(rest);
    let writer = AvroSchema::parse(WRITER).expect("a schema");
    let (old, new) = (
        AvroSchema::parse(OLD).expect("a schema"),
        AvroSchema::parse(NEW).expect("a schema"),
    );
    let with_reader = flags & 2 != 0;
    if flags & 1 == 0 {
        check(&payloads, &Framing::Plain(&writer), None);
        check(&payloads, &Framing::Plain(&old), Some(&new));
        // Rows write back to datums that read the same.
        let decoded = decode(&payloads, &Framing::Plain(&old), None, Mode::Permissive)
            .expect("the schema reads");
        let bad: Vec<usize> = decoded.bad_rows.iter().map(|(r, _)| *r).collect();
        let good: Vec<usize> = (0..payloads.len()).filter(|r| !bad.contains(r)).collect();
        for row in good {
            let one = decoded.values.slice(row, 1);
            let written = encode(&one, &old, None).expect("a decoded row writes");
            let again = decode(
                &[written.is_valid(0).then(|| written.value(0))],
                &Framing::Plain(&old),
                None,
                Mode::Permissive,
            )
            .expect("the schema reads");
            assert!(again.bad_rows.is_empty(), "{:?}", again.bad_rows);
            assert_eq!(again.values.to_data(), one.to_data());
        }
    } else {
        let writers = HashMap::from([(0, writer.clone()), (1, old.clone()), (2, new.clone())]);
        let reader = with_reader.then_some(&new);
        check(&payloads, &Framing::Confluent(&writers), reader);
    }
});
