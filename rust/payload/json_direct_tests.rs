//! The direct path (checked first or not) against the `Value` path: for any schema and
//! payloads, the same arrays (to the bytes of their buffers) and the same bad rows with the
//! same reasons.

use std::sync::Arc;

use arrow_array::Array;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use proptest::prelude::*;
use proptest::sample::select;

use super::*;

/// Names a schema and its payloads share (`\u0061` is an escaped `a`; a struct may name one
/// field twice).
const NAMES: &[&str] = &["a", "b", "c", "é", "a\"b"];
const KEYS: &[&str] = &[
    r#""a""#,
    r#""b""#,
    r#""c""#,
    r#""é""#,
    r#""\u00e9""#,
    r#""a\"b""#,
    r#""\u0061""#,
    r#""zz""#,
    r#""yy""#,
    r#""xx""#,
    r#""A""#,
];

fn leaf_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::Boolean),
        Just(DataType::Int8),
        Just(DataType::Int16),
        Just(DataType::Int32),
        Just(DataType::Int64),
        Just(DataType::Float32),
        Just(DataType::Float64),
        Just(DataType::Utf8),
        Just(DataType::Utf8),
        Just(DataType::Binary),
        Just(DataType::Date32),
        Just(DataType::Timestamp(
            TimeUnit::Microsecond,
            Some("UTC".into())
        )),
        (1u8..=38, 0i8..=10).prop_map(|(p, s)| DataType::Decimal128(p, s.min(p as i8))),
    ]
}

fn fields_of(types: Vec<(&'static str, DataType)>) -> Fields {
    types
        .into_iter()
        .map(|(n, t)| Field::new(n, t, true))
        .collect()
}

fn data_type() -> impl Strategy<Value = DataType> {
    leaf_type().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec((select(NAMES), inner.clone()), 0..4)
                .prop_map(|f| DataType::Struct(fields_of(f))),
            inner
                .clone()
                .prop_map(|t| DataType::List(Arc::new(Field::new("item", t, true)))),
            inner.prop_map(|t| DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", DataType::Utf8, false),
                        Field::new("value", t, true),
                    ])),
                    false,
                )),
                false,
            )),
        ]
    })
}

fn schema() -> impl Strategy<Value = Fields> {
    prop::collection::vec((select(NAMES), data_type()), 1..6).prop_map(fields_of)
}

const SCALARS: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "127",
    "128",
    "255",
    "256",
    "-128",
    "-129",
    "32767",
    "-32769",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1.0",
    "1.5",
    "-2.5",
    "1e3",
    "1E-2",
    "12.345",
    "1.005",
    "-1.005",
    "123456789.125",
    "1e-400",
    "0.1e1",
    "1e21",
    "5e-324",
    r#""""#,
    r#""x""#,
    r#""NaN""#,
    r#""Infinity""#,
    r#""+INF""#,
    r#""-INF""#,
    r#""2024-02-29""#,
    r#""2023-02-29""#,
    r#""2026-11-29T10:00:00Z""#,
    r#""2026-11-29 10:00:00.123456""#,
    r#""2026-11-29T10:00:00+01:00""#,
    r#""aGk=""#,
    r#""***""#,
    r#"" 12.5 ""#,
    r#""1e2""#,
    r#""\u00e9""#,
    r#""\ud83d\ude00""#,
    r#""a\"b""#,
    r#""tab\t""#,
    r#""\u0061""#,
];

/// Not JSON.
const BROKEN: &[&str] = &[
    "00",
    "01",
    "-",
    "1.",
    "1e",
    "+1",
    ".5",
    "tru",
    "nul",
    "NaN",
    "1e400",
    r#""\ud800""#,
    r#""bad \x""#,
    "\"raw\ttab\"",
    r#""unterminated"#,
];

const SEPARATORS: &[&str] = &[",", ", ", " ,\n\t", ",\r\n  "];

fn json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        40 => select(SCALARS).prop_map(String::from),
        1 => select(BROKEN).prop_map(String::from),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        2 => any::<f64>().prop_filter("JSON", |v| v.is_finite()).prop_map(|v| format!("{v:?}")),
        2 => "[a-z0-9 ]{0,6}".prop_map(|s| format!("\"{s}\"")),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            (
                prop::collection::vec(inner.clone(), 0..5),
                select(SEPARATORS)
            )
                .prop_map(|(items, sep)| format!("[{}]", items.join(sep))),
            object(inner),
        ]
    })
}

fn object(values: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            (select(KEYS), select(&[":", " : ", ":\n"][..]), values),
            0..5,
        ),
        select(SEPARATORS),
    )
        .prop_map(|(entries, sep)| {
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, colon, v)| format!("{k}{colon}{v}"))
                .collect();
            format!("{{{}}}", entries.join(sep))
        })
}

/// A payload: mostly an object, some changed the ways payloads go wrong.
fn payload() -> impl Strategy<Value = Option<Vec<u8>>> {
    let text = prop_oneof![6 => object(json()), 1 => json()];
    let payload = (text, 0u8..24, any::<prop::sample::Index>(), any::<u8>()).prop_map(
        |(text, change, at, byte)| {
            let mut b = text.into_bytes();
            let at = at.index(b.len() + 1);
            match change {
                0 => b.truncate(at),
                1 => b.extend_from_slice(select_trailing(byte)),
                2 => {
                    b.splice(0..0, *b" \n\t");
                    b.extend_from_slice(b"\r\n ");
                }
                3 if at < b.len() => b[at] = byte,
                4 => b.insert(at, byte),
                _ => {}
            }
            b
        },
    );
    prop_oneof![8 => payload.prop_map(Some), 1 => Just(None), 1 => Just(Some(Vec::new()))]
}

fn select_trailing(byte: u8) -> &'static [u8] {
    const TRAILING: &[&[u8]] = &[b"{}", b" {\"a\":1}", b"x", b"}", b",", b" 1", b"\xff"];
    TRAILING[usize::from(byte) % TRAILING.len()]
}

/// Equal to the bytes: the same type, length, buffers, nulls and children.
fn same(a: &ArrayData, b: &ArrayData) -> Result<(), String> {
    if a.data_type() != b.data_type() || a.len() != b.len() || a.offset() != b.offset() {
        return Err(format!("{a:?} != {b:?}"));
    }
    let bytes = |d: &ArrayData| -> Vec<Vec<u8>> {
        d.buffers().iter().map(|b| b.as_slice().to_vec()).collect()
    };
    let nulls = |d: &ArrayData| {
        d.nulls()
            .map(|n| (n.offset(), n.len(), n.buffer().as_slice().to_vec()))
    };
    if bytes(a) != bytes(b) || nulls(a) != nulls(b) {
        return Err(format!("{a:?} != {b:?}"));
    }
    if a.child_data().len() != b.child_data().len() {
        return Err(format!("{a:?} != {b:?}"));
    }
    for (x, y) in a.child_data().iter().zip(b.child_data()) {
        same(x, y)?;
    }
    Ok(())
}

fn compare(payloads: &[Option<Vec<u8>>], fields: &Fields) -> Result<(), TestCaseError> {
    for mode in [Mode::Permissive, Mode::FailFast] {
        let run = |route| {
            decode_by(payloads.iter().map(|p| p.as_deref()), fields, mode, route)
                .expect("the schema reads")
        };
        let by_value = run(Route::Value);
        for route in [Route::Checked, Route::Direct] {
            let direct = run(route);
            prop_assert_eq!(&by_value.bad_rows, &direct.bad_rows);
            direct
                .values
                .to_data()
                .validate_full()
                .expect("a valid column");
            if let Err(e) = same(&by_value.values.to_data(), &direct.values.to_data()) {
                return Err(TestCaseError::fail(e));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn direct_decodes_as_the_value_path(
        fields in schema(),
        payloads in prop::collection::vec(payload(), 0..12),
    ) {
        compare(&payloads, &fields)?;
    }
}

/// Cases the generator may reach rarely, each checked.
#[test]
fn direct_decodes_as_the_value_path_by_case() {
    let point = DataType::Struct(fields_of(vec![
        ("x", DataType::Int64),
        ("x", DataType::Utf8),
    ]));
    let list = |t| DataType::List(Arc::new(Field::new("item", t, true)));
    let inner = DataType::Struct(fields_of(vec![
        ("a", DataType::Int32),
        ("b", DataType::Utf8),
    ]));
    let fields = fields_of(vec![
        ("a", DataType::Int32),
        ("b", DataType::Utf8),
        ("p", point),
        ("l", list(inner.clone())),
        ("s", inner),
        ("d", DataType::Decimal128(5, 2)),
    ]);
    let payloads: Vec<Option<Vec<u8>>> = [
        r#"{"a": 1, "a": 2}"#,
        r#"{"a": "x", "a": 2}"#,
        r#"{"a": 2, "\u0061": "x"}"#,
        r#"{"s": {"a": 1, "a": "y"}}"#,
        r#"{"l": [{"a": 1}, {"b": 2, "b": 3}]}"#,
        r#"{"l": [{"a": 1}, {"a": "x"}], "s": {"a": 1.5}, "b": {"z": 1, "y": 2, "z": 3}}"#,
        r#"{"p": {"x": 5}}"#,
        r#"{"b": [1, "a", {"k": [true, null]}], "d": "12.345", "zz": 1e400}"#,
        r#"{"a": 1, "zz": "\ud800"}"#,
        r#"{"a": 1, "b": "x""#,
        r#"{"a": 1} trailing"#,
        r#"{"a": 1, "b": "x"} {"a": 2}"#,
        "{\"b\": \"\\u00e9\\n\", \"a\": -0}",
        "\u{c}{\"a\": 3}",
    ]
    .iter()
    .map(|p| Some(p.as_bytes().to_vec()))
    .collect();
    compare(&payloads, &fields).unwrap();
    // Nested deeper than the parser goes.
    let deep = format!("{{\"zz\": {}{}}}", "[".repeat(200), "]".repeat(200));
    compare(&[Some(deep.into_bytes())], &fields).unwrap();
}
