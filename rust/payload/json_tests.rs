use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::Array;
use arrow_schema::{DataType, Field, Fields, TimeUnit};

use super::*;

fn fields(list: &[(&str, DataType)]) -> Fields {
    list.iter()
        .map(|(n, t)| Field::new(*n, t.clone(), true))
        .collect()
}

fn a_b() -> Fields {
    fields(&[("a", DataType::Int32), ("b", DataType::Utf8)])
}

fn decode_all(payloads: &[Option<&str>], fields: &Fields) -> Decoded {
    decode(
        payloads.iter().map(|p| p.map(str::as_bytes)),
        fields,
        Mode::Permissive,
    )
    .unwrap()
}

/// Each row as (struct is null, a, b).
fn rows(d: &Decoded) -> Vec<(bool, Option<i32>, Option<String>)> {
    let a = d.values.column(0).as_primitive::<Int32Type>();
    let b = d.values.column(1).as_string::<i32>();
    (0..d.values.len())
        .map(|i| {
            (
                d.values.is_null(i),
                a.is_valid(i).then(|| a.value(i)),
                b.is_valid(i).then(|| b.value(i).to_owned()),
            )
        })
        .collect()
}

#[test]
fn rows_follow_spark_from_json() {
    // What Spark 4's from_json("a INT, b STRING") gives for each payload (PERMISSIVE).
    // (payload, (struct is null, a, b), bad)
    type Case<'a> = (Option<&'a str>, (bool, Option<i32>, Option<&'a str>), bool);
    let cases: Vec<Case> = vec![
        (
            Some(r#"{"a": 1, "b": "x"}"#),
            (false, Some(1), Some("x")),
            false,
        ),
        (
            Some(r#"{"a": "notint", "b": "y"}"#),
            (false, None, Some("y")),
            true,
        ),
        (Some(r#"{"b": "z"}"#), (false, None, Some("z")), false),
        (Some("not json"), (false, None, None), true),
        (None, (true, None, None), false),
        (
            Some(r#"{"a": 2, "b": "w", "c": 5}"#),
            (false, Some(2), Some("w")),
            false,
        ),
        (Some(r#"[{"a":3,"b":"v"}]"#), (false, None, None), true),
        (
            Some(r#"{"a": 1.5, "b": 7}"#),
            (false, None, Some("7")),
            true,
        ),
        (Some(r#"{"a": 4}{"a": 5}"#), (false, Some(4), None), false),
        (Some(""), (true, None, None), false),
        (Some("null"), (false, None, None), true),
        (Some(r#"{"a": 2147483648}"#), (false, None, None), true),
        (Some(r#"  {"a": 6} "#), (false, Some(6), None), false),
        (
            Some(r#"{"a": null, "b": {"x": [1, true]}}"#),
            (false, None, Some(r#"{"x":[1,true]}"#)),
            false,
        ),
    ];
    let payloads: Vec<Option<&str>> = cases.iter().map(|c| c.0).collect();
    let d = decode_all(&payloads, &a_b());
    let got = rows(&d);
    for (i, (payload, (null, a, b), _)) in cases.iter().enumerate() {
        assert_eq!(got[i], (*null, *a, b.map(str::to_owned)), "{payload:?}");
    }
    let bad: Vec<usize> = (0..cases.len()).filter(|&i| cases[i].2).collect();
    assert_eq!(d.bad_rows.iter().map(|b| b.0).collect::<Vec<_>>(), bad);
}

#[test]
fn fail_fast_stops_at_the_first_bad_row() {
    let payloads = [
        Some(r#"{"a": 1}"#),
        Some(r#"{"a": 2}"#),
        Some(r#"{"a": "x"}"#),
        Some("{"),
    ];
    let d = decode(
        payloads.iter().map(|p| p.map(str::as_bytes)),
        &a_b(),
        Mode::FailFast,
    )
    .unwrap();
    assert_eq!(d.values.len(), 2);
    assert_eq!(d.bad_rows.len(), 1);
    let (row, reason) = &d.bad_rows[0];
    assert_eq!(*row, 2);
    assert!(reason.contains("\"a\""), "{reason}");
    let d = decode([Some(b"{".as_slice())], &a_b(), Mode::FailFast).unwrap();
    assert_eq!((d.values.len(), d.bad_rows[0].0), (0, 0));
    assert!(
        d.bad_rows[0].1.starts_with("not JSON"),
        "{}",
        d.bad_rows[0].1
    );
}

#[test]
fn nested_types_and_their_misfits() {
    let point = DataType::Struct(fields(&[("x", DataType::Int64)]));
    let f = fields(&[
        (
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        ),
        ("point", point),
        (
            "counts",
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", DataType::Utf8, false),
                        Field::new("value", DataType::Int64, true),
                    ])),
                    false,
                )),
                false,
            ),
        ),
    ]);
    let payloads = [
        Some(r#"{"tags": ["a", 1], "point": {"x": 3}, "counts": {"k": 2}}"#),
        Some(r#"{"tags": "no", "point": {"x": "no"}, "counts": {"k": "no"}}"#),
        Some(r#"{"point": 5}"#),
    ];
    let d = decode(
        payloads.iter().map(|p| p.map(str::as_bytes)),
        &f,
        Mode::Permissive,
    )
    .unwrap();
    assert_eq!(d.bad_rows.iter().map(|b| b.0).collect::<Vec<_>>(), [1, 2]);
    let tags = d.values.column(0).as_list::<i32>();
    assert_eq!(
        tags.value(0).as_string::<i32>().iter().collect::<Vec<_>>(),
        [Some("a"), Some("1")]
    );
    assert!(tags.is_null(1) && tags.is_null(2));
    let point = d.values.column(1).as_struct();
    let x = point.column(0).as_primitive::<Int64Type>();
    assert_eq!((point.is_valid(0), x.value(0)), (true, 3));
    // A nested object whose field does not fit keeps the object, with that field null.
    assert!(point.is_valid(1) && x.is_null(1));
    assert!(point.is_null(2));
    let counts = d.values.column(2).as_map();
    assert_eq!(
        counts
            .value(0)
            .column(1)
            .as_primitive::<Int64Type>()
            .value(0),
        2
    );
    // A map (or list) with a value that does not fit is null as a whole.
    assert!(counts.is_null(1));
}

#[test]
fn scalars_by_type() {
    let f = fields(&[
        ("flag", DataType::Boolean),
        ("tiny", DataType::Int8),
        ("ratio", DataType::Float64),
        ("price", DataType::Decimal128(10, 2)),
        ("day", DataType::Date32),
        (
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        ("blob", DataType::Binary),
    ]);
    let good = r#"{"flag": true, "tiny": -128, "ratio": "-Infinity", "price": 12.345,
        "day": "2024-02-29", "at": 1, "blob": "aGk="}"#;
    let bad = r#"{"flag": "true", "tiny": 256, "ratio": "x", "price": 123456789.1,
        "day": "2023-02-29", "at": true, "blob": "***"}"#;
    let d = decode(
        [Some(good.as_bytes()), Some(bad.as_bytes())],
        &f,
        Mode::Permissive,
    )
    .unwrap();
    assert_eq!(d.bad_rows.iter().map(|b| b.0).collect::<Vec<_>>(), [1]);
    let v = &d.values;
    assert!(v.column(0).as_boolean().value(0));
    assert_eq!(
        v.column(1)
            .as_primitive::<arrow_array::types::Int8Type>()
            .value(0),
        -128
    );
    assert_eq!(
        v.column(2)
            .as_primitive::<arrow_array::types::Float64Type>()
            .value(0),
        f64::NEG_INFINITY
    );
    assert_eq!(
        v.column(3)
            .as_primitive::<arrow_array::types::Decimal128Type>()
            .value(0),
        1235
    );
    assert_eq!(
        v.column(4)
            .as_primitive::<arrow_array::types::Date32Type>()
            .value(0),
        19_782
    );
    assert_eq!(
        v.column(5)
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>()
            .value(0),
        1_000_000
    );
    assert_eq!(v.column(6).as_binary::<i32>().value(0), b"hi");
    for c in 0..7 {
        assert!(v.column(c).is_null(1), "column {c}");
    }
}

#[test]
fn decimals_round_half_up() {
    assert_eq!(parse_decimal("1.005", 2), Some(101));
    assert_eq!(parse_decimal("-1.005", 2), Some(-101));
    assert_eq!(parse_decimal("1.004", 2), Some(100));
    assert_eq!(parse_decimal("1e3", 0), Some(1000));
    assert_eq!(parse_decimal("12.5e-1", 1), Some(13));
    assert_eq!(parse_decimal("0.0000001", 2), Some(0));
    assert_eq!(parse_decimal("x", 2), None);
    assert_eq!(parse_decimal("", 2), None);
}

#[test]
fn unsupported_types_name_the_field() {
    let f = fields(&[("when", DataType::Time32(TimeUnit::Second))]);
    let err = decode([Some(b"{}".as_slice())], &f, Mode::Permissive)
        .err()
        .unwrap();
    assert!(err.to_string().contains("\"when\""), "{err}");
}

proptest::proptest! {
    /// Any bytes: a result, never a panic, one row per payload.
    #[test]
    fn any_payload_decodes_or_is_flagged(payloads in proptest::collection::vec(
        proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..40)), 0..20)
    ) {
        let d = decode(payloads.iter().map(|p| p.as_deref()), &a_b(), Mode::Permissive).unwrap();
        proptest::prop_assert_eq!(d.values.len(), payloads.len());
    }
}
