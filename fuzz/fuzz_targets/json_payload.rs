//! Arbitrary payloads through the JSON payload decoder, against a schema of every type it
//! reads (nested too): a struct column with one row per payload, the bad rows listed in order,
//! never a panic; FAILFAST stops at the first bad row PERMISSIVE lists.
//!
//! Input: payloads separated by 0xFF bytes (which never occur in UTF-8 JSON), a payload of the
//! single byte 0xFE standing for a null one.
#![no_main]
use std::sync::Arc;

use _native::payload::json::{decode, Mode};
use arrow_array::Array;
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use libfuzzer_sys::fuzz_target;

fn schema() -> Fields {
    let nullable = |name: &str, t: DataType| Field::new(name, t, true);
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            nullable("value", DataType::Float64),
        ])),
        false,
    );
    Fields::from(vec![
        nullable("b", DataType::Boolean),
        nullable("i8", DataType::Int8),
        nullable("i16", DataType::Int16),
        nullable("i32", DataType::Int32),
        nullable("i64", DataType::Int64),
        nullable("f32", DataType::Float32),
        nullable("s", DataType::Utf8),
        nullable("bin", DataType::Binary),
        nullable("day", DataType::Date32),
        nullable(
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        nullable("dec", DataType::Decimal128(38, 10)),
        nullable(
            "list",
            DataType::List(Arc::new(nullable("item", DataType::Decimal128(5, 2)))),
        ),
        nullable("map", DataType::Map(Arc::new(entries), false)),
        nullable(
            "nested",
            DataType::Struct(Fields::from(vec![
                nullable("x", DataType::Int64),
                nullable(
                    "deeper",
                    DataType::Struct(Fields::from(vec![nullable("y", DataType::Utf8)])),
                ),
            ])),
        ),
    ])
}

fuzz_target!(|data: &[u8]| {
    let payloads: Vec<Option<&[u8]>> = data
        .split(|&b| b == 0xFF)
        .map(|p| if p == [0xFE] { None } else { Some(p) })
        .collect();
    let fields = schema();
    let all =
        decode(payloads.iter().copied(), &fields, Mode::Permissive).expect("the schema reads");
    assert_eq!(all.values.len(), payloads.len());
    assert!(all.bad_rows.windows(2).all(|w| w[0].0 < w[1].0));
    let first =
        decode(payloads.iter().copied(), &fields, Mode::FailFast).expect("the schema reads");
    match all.bad_rows.first() {
        Some((row, _)) => {
            assert_eq!(first.bad_rows.len(), 1);
            assert_eq!(first.bad_rows[0].0, *row);
            assert_eq!(first.values.len(), *row);
        }
        None => assert_eq!(first.values.len(), payloads.len()),
    }
    for column in all.values.columns() {
        column.to_data().validate_full().expect("a valid column");
    }
});
