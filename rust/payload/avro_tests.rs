use std::collections::HashMap;

use apache_avro::types::Value;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use arrow_array::{Array, StructArray};
use arrow_schema::{DataType, TimeUnit};
use proptest::prelude::*;

use super::*;
use crate::payload::to_avro;

/// Every type Spark's from_avro reads, one field each.
const ALL: &str = r#"{"type": "record", "name": "All", "namespace": "t", "fields": [
  {"name": "b", "type": "boolean"},
  {"name": "i", "type": "int"},
  {"name": "l", "type": "long"},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "s", "type": "string"},
  {"name": "by", "type": "bytes"},
  {"name": "n", "type": ["null", "string"]},
  {"name": "il", "type": ["int", "long"]},
  {"name": "u", "type": ["null", "int", "string"]},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
  {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 3}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
  {"name": "decf", "type": {"type": "fixed", "name": "DF", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 3}},
  {"name": "date", "type": {"type": "int", "logicalType": "date"}},
  {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "lts", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
  {"name": "arr", "type": {"type": "array", "items": "long"}},
  {"name": "m", "type": {"type": "map", "values": "int"}},
  {"name": "rec", "type": {"type": "record", "name": "In", "fields": [{"name": "x", "type": "int"}]}},
  {"name": "again", "type": ["null", "In"]}
]}"#;

fn all_value(k: i32) -> Value {
    let rec = |x: i32| Value::Record(vec![("x".into(), Value::Int(x))]);
    Value::Record(vec![
        ("b".into(), Value::Boolean(k % 2 == 0)),
        ("i".into(), Value::Int(-k)),
        ("l".into(), Value::Long(i64::from(k) << 40)),
        ("f".into(), Value::Float(1.5)),
        ("d".into(), Value::Double(-2.25)),
        ("s".into(), Value::String(format!("s{k}"))),
        ("by".into(), Value::Bytes(vec![0, 255, k as u8])),
        ("n".into(), Value::Union(0, Box::new(Value::Null))),
        ("il".into(), Value::Union(1, Box::new(Value::Long(7)))),
        (
            "u".into(),
            Value::Union(2, Box::new(Value::String("x".into()))),
        ),
        ("e".into(), Value::Enum(1, "B".into())),
        ("fx".into(), Value::Fixed(3, vec![1, 2, 3])),
        ("dec".into(), Value::Decimal(vec![0xfe, 0x0c].into())), // -500 → -5.00
        (
            "decf".into(),
            Value::Decimal(vec![0, 0, 0, 0, 0, 0, 0x30, 0x39].into()),
        ),
        ("date".into(), Value::Date(19_000)),
        ("tsm".into(), Value::TimestampMillis(1_700_000_000_123)),
        ("tsu".into(), Value::TimestampMicros(1_700_000_000_123_456)),
        ("lts".into(), Value::LocalTimestampMicros(5)),
        (
            "arr".into(),
            Value::Array(vec![Value::Long(1), Value::Long(2)]),
        ),
        (
            "m".into(),
            Value::Map(HashMap::from([("k".to_owned(), Value::Int(3))])),
        ),
        ("rec".into(), rec(k)),
        ("again".into(), Value::Union(1, Box::new(rec(k + 1)))),
    ])
}

fn schema(text: &str) -> AvroSchema {
    AvroSchema::parse(text).unwrap()
}

fn datum(s: &AvroSchema, v: Value) -> Vec<u8> {
    apache_avro::to_avro_datum(&s.schema, v).unwrap()
}

fn plain(payloads: &[Option<&[u8]>], s: &AvroSchema, reader: Option<&AvroSchema>) -> Decoded {
    decode(payloads, &Framing::Plain(s), reader, Mode::Permissive).unwrap()
}

fn check_all_row(v: &StructArray, row: usize, k: i32) {
    let col = |name: &str| v.column_by_name(name).unwrap().clone();
    assert_eq!(col("b").as_boolean().value(row), k % 2 == 0);
    assert_eq!(col("i").as_primitive::<Int32Type>().value(row), -k);
    assert_eq!(
        col("l").as_primitive::<Int64Type>().value(row),
        i64::from(k) << 40
    );
    assert_eq!(col("f").as_primitive::<Float32Type>().value(row), 1.5);
    assert_eq!(col("d").as_primitive::<Float64Type>().value(row), -2.25);
    assert_eq!(col("s").as_string::<i32>().value(row), format!("s{k}"));
    assert_eq!(col("by").as_binary::<i32>().value(row), &[0, 255, k as u8]);
    assert!(col("n").is_null(row));
    assert_eq!(col("il").as_primitive::<Int64Type>().value(row), 7);
    let u = col("u");
    let u = u.as_struct();
    assert!(u.column(0).is_null(row));
    assert_eq!(u.column(1).as_string::<i32>().value(row), "x");
    assert_eq!(col("e").as_string::<i32>().value(row), "B");
    assert_eq!(col("fx").as_binary::<i32>().value(row), &[1, 2, 3]);
    assert_eq!(col("dec").as_primitive::<Decimal128Type>().value(row), -500);
    assert_eq!(
        col("decf").as_primitive::<Decimal128Type>().value(row),
        12345
    );
    assert_eq!(col("date").as_primitive::<Date32Type>().value(row), 19_000);
    let tsm = col("tsm");
    assert_eq!(
        tsm.as_primitive::<TimestampMicrosecondType>().value(row),
        1_700_000_000_123_000
    );
    assert_eq!(
        col("tsu")
            .as_primitive::<TimestampMicrosecondType>()
            .value(row),
        1_700_000_000_123_456
    );
    assert_eq!(
        col("lts")
            .as_primitive::<TimestampMicrosecondType>()
            .value(row),
        5
    );
    let arr = col("arr");
    let items = arr.as_list::<i32>().value(row);
    assert_eq!(items.as_primitive::<Int64Type>().values(), &[1, 2]);
    let m = col("m");
    let entries = m.as_map().value(row);
    assert_eq!(entries.column(0).as_string::<i32>().value(0), "k");
    assert_eq!(entries.column(1).as_primitive::<Int32Type>().value(0), 3);
    let rec = col("rec");
    assert_eq!(
        rec.as_struct()
            .column(0)
            .as_primitive::<Int32Type>()
            .value(row),
        k
    );
    let again = col("again");
    assert_eq!(
        again
            .as_struct()
            .column(0)
            .as_primitive::<Int32Type>()
            .value(row),
        k + 1
    );
}

#[test]
fn every_type_has_spark_from_avro_column_type() {
    let fields = schema(ALL).fields().unwrap();
    let t = |name: &str| fields.find(name).unwrap().1.data_type().clone();
    assert_eq!(t("il"), DataType::Int64);
    assert_eq!(t("n"), DataType::Utf8);
    assert_eq!(
        t("u"),
        DataType::Struct(
            vec![
                Field::new("member0", DataType::Int32, true),
                Field::new("member1", DataType::Utf8, true)
            ]
            .into()
        )
    );
    assert_eq!(t("e"), DataType::Utf8);
    assert_eq!(t("fx"), DataType::Binary);
    assert_eq!(t("dec"), DataType::Decimal128(9, 2));
    assert_eq!(t("date"), DataType::Date32);
    let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    assert_eq!(t("tsm"), utc);
    assert_eq!(t("tsu"), utc);
    assert_eq!(t("lts"), DataType::Timestamp(TimeUnit::Microsecond, None));
    assert!(matches!(t("m"), DataType::Map(_, false)));
    assert!(fields.iter().all(|f| f.is_nullable()));
}

#[test]
fn datums_of_an_independent_writer_decode_to_their_values() {
    let s = schema(ALL);
    let a = datum(&s, all_value(1));
    let b = datum(&s, all_value(2));
    let d = plain(&[Some(&a), None, Some(&b)], &s, None);
    assert!(d.bad_rows.is_empty(), "{:?}", d.bad_rows);
    assert_eq!(d.values.len(), 3);
    check_all_row(&d.values, 0, 1);
    assert!(d.values.is_null(1));
    check_all_row(&d.values, 2, 2);
}

#[test]
fn written_columns_read_back_equal_and_match_the_reference_writer() {
    let s = schema(ALL);
    let a = datum(&s, all_value(1));
    let b = datum(&s, all_value(4));
    let d = plain(&[Some(&a), None, Some(&b)], &s, None);
    let written = to_avro::encode(&d.values, &s, None).unwrap();
    // Byte for byte what apache-avro writes (the map has one entry, so no order to differ).
    assert_eq!(written.value(0), &a[..]);
    assert!(written.is_null(1));
    assert_eq!(written.value(2), &b[..]);
    let framed = to_avro::encode(&d.values, &s, Some(258)).unwrap();
    assert_eq!(&framed.value(0)[..5], &[0, 0, 0, 1, 2]);
    let writers = HashMap::from([(258, s.clone())]);
    let back = decode(
        &framed.iter().collect::<Vec<_>>(),
        &Framing::Confluent(&writers),
        None,
        Mode::Permissive,
    )
    .unwrap();
    assert!(back.bad_rows.is_empty());
    assert_eq!(back.values, d.values);
}

const V1: &str = r#"{"type": "record", "name": "R", "fields": [
  {"name": "id", "type": "int"},
  {"name": "gone", "type": "string"},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}}
]}"#;
const V2: &str = r#"{"type": "record", "name": "R", "fields": [
  {"name": "id", "type": "long"},
  {"name": "added", "type": "string", "default": "none"},
  {"name": "opt", "type": ["null", "double"], "default": null},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}}
]}"#;

#[test]
fn a_reader_schema_resolves_added_removed_and_promoted_fields() {
    let (v1, v2) = (schema(V1), schema(V2));
    let old = datum(
        &v1,
        Value::Record(vec![
            ("id".into(), Value::Int(5)),
            ("gone".into(), Value::String("x".into())),
            ("e".into(), Value::Enum(1, "B".into())),
        ]),
    );
    let d = plain(&[Some(&old)], &v1, Some(&v2));
    assert!(d.bad_rows.is_empty(), "{:?}", d.bad_rows);
    assert_eq!(d.values.column_names(), vec!["id", "added", "opt", "e"]);
    assert_eq!(d.values.column(0).as_primitive::<Int64Type>().value(0), 5);
    assert_eq!(d.values.column(1).as_string::<i32>().value(0), "none");
    assert!(d.values.column(2).is_null(0));
    assert_eq!(d.values.column(3).as_string::<i32>().value(0), "B");
}

#[test]
fn a_reader_schema_equal_to_the_writer_reads_as_without_one() {
    let s = schema(ALL);
    // The same schema laid out otherwise: keys reordered, other spacing.
    let text = ALL.replace(
        ", \"name\": \"All\", \"namespace\": \"t\"",
        ",\"namespace\":\"t\",\"name\":\"All\"",
    );
    assert_ne!(text, ALL);
    let respaced = schema(&text);
    assert!(respaced.same_as(&s));
    let a = datum(&s, all_value(1));
    let b = datum(&s, all_value(2));
    let cut = &b[..b.len() - 3];
    let payloads = [Some(&a[..]), None, Some(cut), Some(&b[..])];
    let without = plain(&payloads, &s, None);
    let with = plain(&payloads, &s, Some(&respaced));
    assert_eq!(with.values, without.values);
    assert_eq!(with.bad_rows, without.bad_rows);
    assert_eq!(with.bad_rows.len(), 1);
    check_all_row(&with.values, 3, 2);

    // Another schema text (here a field's doc) is not the same schema: such a reader is
    // resolved to, by Avro's rules, to the same values.
    let ts = r#"{"type": "record", "name": "T", "fields": [
      {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}}]}"#;
    let documented = ts.replace("\"name\": \"at\",", "\"name\": \"at\", \"doc\": \"when\",");
    assert_ne!(documented, ts);
    let (writer, reader) = (schema(ts), schema(&documented));
    assert!(!writer.same_as(&reader));
    let at = datum(
        &writer,
        Value::Record(vec![("at".into(), Value::TimestampMicros(7))]),
    );
    let d = plain(&[Some(&at)], &writer, Some(&reader));
    assert!(d.bad_rows.is_empty(), "{:?}", d.bad_rows);
    assert_eq!(
        d.values
            .column(0)
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        7
    );
}

#[test]
fn confluent_ids_of_one_batch_must_agree_without_a_reader_schema() {
    let (v1, v2) = (schema(V1), schema(V2));
    let writers = HashMap::from([(1, v1.clone()), (2, v2.clone()), (3, v1.clone())]);
    let framed = |id: u32, v: Value, s: &AvroSchema| {
        let mut p = vec![0];
        p.extend(id.to_be_bytes());
        p.extend(datum(s, v));
        p
    };
    let r1 = Value::Record(vec![
        ("id".into(), Value::Int(1)),
        ("gone".into(), Value::String("g".into())),
        ("e".into(), Value::Enum(0, "A".into())),
    ]);
    let a = framed(1, r1.clone(), &v1);
    let c = framed(3, r1, &v1);
    let d = decode(
        &[Some(&a[..]), Some(&c[..])],
        &Framing::Confluent(&writers),
        None,
        Mode::Permissive,
    )
    .unwrap();
    assert!(d.bad_rows.is_empty(), "{:?}", d.bad_rows);
    assert_eq!(
        d.values.column(0).as_primitive::<Int32Type>().values(),
        &[1, 1]
    );

    let b = framed(
        2,
        Value::Record(vec![
            ("id".into(), Value::Long(2)),
            ("added".into(), Value::String("a".into())),
            ("opt".into(), Value::Union(0, Box::new(Value::Null))),
            ("e".into(), Value::Enum(2, "C".into())),
        ]),
        &v2,
    );
    let err = decode(
        &[Some(&a[..]), Some(&b[..])],
        &Framing::Confluent(&writers),
        None,
        Mode::Permissive,
    )
    .err()
    .unwrap();
    assert!(
        matches!(
            err,
            AvroError::Mismatch {
                row: 1,
                id: 2,
                first_row: 0,
                first_id: 1,
                ..
            }
        ),
        "{err}"
    );
    // With a reader schema both read, as it.
    let d = decode(
        &[Some(&a[..]), Some(&b[..])],
        &Framing::Confluent(&writers),
        Some(&v2),
        Mode::Permissive,
    )
    .unwrap();
    assert!(d.bad_rows.is_empty(), "{:?}", d.bad_rows);
    assert_eq!(
        d.values.column(0).as_primitive::<Int64Type>().values(),
        &[1, 2]
    );
    assert_eq!(d.values.column(3).as_string::<i32>().value(1), "C");
}

#[test]
fn payloads_that_do_not_read_are_null_rows_with_why() {
    let v1 = schema(V1);
    let writers = HashMap::from([(1, v1.clone())]);
    let good = {
        let mut p = vec![0, 0, 0, 0, 1];
        p.extend(datum(
            &v1,
            Value::Record(vec![
                ("id".into(), Value::Int(1)),
                ("gone".into(), Value::String("g".into())),
                ("e".into(), Value::Enum(0, "A".into())),
            ]),
        ));
        p
    };
    let cases: Vec<(&[u8], &str)> = vec![
        (b"{\"id\": 1}", "not Confluent-framed"),
        (&[0, 0, 1], "too short"),
        (&[], "empty: no Confluent header"),
        (&[0, 0, 0, 0, 9, 2], "schema id 9 is not known"),
        (&good[..7], "schema id 1: 1 bytes at byte 2, but 0 are left"),
        (&[0, 0, 0, 0, 1, 2, 2, b'g', 4], "enum index 2"),
        (
            &[0, 0, 0, 0, 1, 2, 0x80, 0x80, 0x80, 0x80, 0x08],
            "bytes at byte",
        ),
    ];
    let mut payloads: Vec<Option<&[u8]>> = vec![Some(&good)];
    payloads.extend(cases.iter().map(|(p, _)| Some(*p)));
    let d = decode(
        &payloads,
        &Framing::Confluent(&writers),
        None,
        Mode::Permissive,
    )
    .unwrap();
    assert_eq!(d.values.len(), payloads.len());
    assert!(d.values.is_valid(0));
    let rows: Vec<usize> = d.bad_rows.iter().map(|(r, _)| *r).collect();
    assert_eq!(rows, (1..=cases.len()).collect::<Vec<_>>());
    for ((_, why), (row, reason)) in cases.iter().zip(&d.bad_rows) {
        // A row of null fields, as Spark's from_avro gives.
        assert!(d.values.is_valid(*row));
        assert!(d.values.columns().iter().all(|c| c.is_null(*row)));
        assert!(reason.contains(why), "row {row}: {reason:?} lacks {why:?}");
    }
    let ff = decode(
        &payloads,
        &Framing::Confluent(&writers),
        None,
        Mode::FailFast,
    )
    .unwrap();
    assert_eq!(ff.values.len(), 1);
    assert_eq!(ff.bad_rows.len(), 1);
    assert_eq!(ff.bad_rows[0].0, 1);
    // A batch with no id of a known schema: FAILFAST stops at its first payload too.
    let none_known: Vec<Option<&[u8]>> = vec![None, Some(&[0, 0, 0, 0, 9, 2]), Some(&[])];
    for (mode, rows, len) in [
        (Mode::Permissive, vec![1, 2], 3),
        (Mode::FailFast, vec![1], 1),
    ] {
        let d = decode(&none_known, &Framing::Confluent(&writers), None, mode).unwrap();
        assert_eq!(d.bad_rows.iter().map(|(r, _)| *r).collect::<Vec<_>>(), rows);
        assert_eq!(d.values.len(), len);
    }
}

#[test]
fn hostile_counts_unions_and_nesting_are_bad_rows() {
    let nulls = schema(
        r#"{"type": "record", "name": "N", "fields": [
          {"name": "a", "type": {"type": "array", "items": "null"}},
          {"name": "u", "type": ["null", "int"]}]}"#,
    );
    // A block of 2^62 null items: no bytes, so bounded by count.
    let huge = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0];
    let d = plain(&[Some(&huge)], &nulls, None);
    assert!(d.bad_rows[0].1.contains("items"), "{:?}", d.bad_rows);
    // Union index 5 of 2 branches; a negative union index.
    let d = plain(&[Some(&[0, 10]), Some(&[0, 1])], &nulls, None);
    assert!(
        d.bad_rows[0].1.contains("union index 5"),
        "{:?}",
        d.bad_rows
    );
    assert!(
        d.bad_rows[1].1.contains("union index -1"),
        "{:?}",
        d.bad_rows
    );
    // A linked list nested past MAX_DEPTH: refused before apache-avro recurses into it.
    let list = schema(
        r#"{"type": "record", "name": "L", "fields": [
          {"name": "next", "type": ["null", "L"]}]}"#,
    );
    let mut deep = vec![2u8; 100_000];
    deep.push(0);
    let d = decode(
        &[Some(&deep[..])],
        &Framing::Plain(&list),
        None,
        Mode::Permissive,
    );
    // A recursive record has no Arrow type: the schema is refused, not the datum.
    assert!(matches!(d, Err(AvroError::Unsupported { .. })));
    assert!(check(&list, &deep).unwrap_err().contains("deeper"));
}

#[test]
fn decimal_bytes_past_128_bits_or_the_precision_do_not_fit() {
    // The decimal comes after an int, so a row that does not fit has a value to null.
    let s = schema(
        r#"{"type": "record", "name": "D", "fields": [
          {"name": "x", "type": "int"},
          {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 0}}]}"#,
    );
    let mut wide = vec![10, 2 * 17];
    wide.extend([1u8; 17]);
    let ok = [10, 4, 0x27, 0x0f]; // 9999
    let past = [10, 4, 0x27, 0x10]; // 10000, past 4 digits
    let d = plain(&[Some(&wide), Some(&ok), Some(&past)], &s, None);
    let x = d.values.column(0).as_primitive::<Int32Type>();
    let dec = d.values.column(1).as_primitive::<Decimal128Type>();
    assert_eq!((x.value(1), dec.value(1)), (5, 9999));
    for row in [0, 2] {
        assert!(d.values.is_valid(row) && x.is_null(row) && dec.is_null(row));
    }
    let rows: Vec<usize> = d.bad_rows.iter().map(|(r, _)| *r).collect();
    assert_eq!(rows, vec![0, 2]);
    assert_eq!(decimal_i128(&vec![0xff; 20].into()), Some(-1));
    assert_eq!(decimal_i128(&vec![0x80, 0, 0].into()), Some(-(1 << 23)));
}

#[test]
fn a_fixed_uuid_is_binary_and_read_as_fixed() {
    let s = schema(
        r#"{"type": "record", "name": "U", "fields": [
          {"name": "u", "type": {"type": "fixed", "name": "UF", "size": 16, "logicalType": "uuid"}},
          {"name": "x", "type": "int"}]}"#,
    );
    assert_eq!(
        s.fields().unwrap()[0].data_type(),
        &DataType::Binary,
        "binary, as Spark's from_avro reads a fixed uuid"
    );
    let mut datum: Vec<u8> = (1..=16).collect();
    datum.push(6); // x = 3
    for reader in [None, Some(&s)] {
        let d = plain(&[Some(&datum)], &s, reader);
        assert!(d.bad_rows.is_empty(), "{:?}", d.bad_rows);
        assert_eq!(d.values.column(0).as_binary::<i32>().value(0), &datum[..16]);
        assert_eq!(d.values.column(1).as_primitive::<Int32Type>().value(0), 3);
    }
}

#[test]
fn encoding_names_the_field_that_does_not_fit() {
    let s = schema(V1);
    let d = plain(&[], &s, None);
    assert_eq!(d.values.len(), 0);
    let fields = schema(V2).fields().unwrap();
    let other = StructArray::new_null(fields, 1);
    let other = StructArray::try_new(other.fields().clone(), other.columns().to_vec(), None);
    // Nullable fields all null, in a non-null row: "id" is not nullable in V1.
    let err = to_avro::encode(&other.unwrap(), &s, None).unwrap_err();
    assert!(err.to_string().contains("value.id (row 0)"), "{err}");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let s = schema(ALL);
        let d = plain(&[Some(&bytes)], &s, None);
        prop_assert_eq!(d.values.len(), 1);
        let writers = HashMap::from([(0, s.clone())]);
        let mut framed = vec![0, 0, 0, 0, 0];
        framed.extend(&bytes);
        let d = decode(&[Some(&framed[..])], &Framing::Confluent(&writers), Some(&s), Mode::FailFast).unwrap();
        prop_assert!(d.values.len() <= 1);
    }
}
