//! A struct column written as one JSON object per row, as Spark's `to_json` writes it: null
//! fields left out, a null row a null payload, binary as base64, dates as `yyyy-mm-dd`,
//! timestamps as `yyyy-mm-ddThh:mm:ss.SSSZ` (UTC, milliseconds),
//! NaN and the infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`, decimals as
//! their plain digits.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType,
};
use arrow_array::{Array, BinaryArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, TimeUnit};
use base64::Engine;

use super::json::JsonError;

/// Deeper nesting than a schema needs; bounds the recursion over the column.
const MAX_DEPTH: usize = 64;

/// Each row of `values` as a JSON object (a null row: a null payload).
pub fn encode(values: &StructArray) -> Result<BinaryArray, JsonError> {
    check(values.data_type(), "value", 0)?;
    let mut bytes = Vec::with_capacity(values.len() * 64);
    let mut offsets = Vec::with_capacity(values.len() + 1);
    offsets.push(0i32);
    for row in 0..values.len() {
        if values.is_valid(row) {
            write_struct(values, row, &mut bytes);
        }
        let end = i32::try_from(bytes.len()).map_err(|_| JsonError::Unsupported {
            field: "value".into(),
            data_type: DataType::Binary,
        })?;
        offsets.push(end);
    }
    let nulls = values
        .nulls()
        .cloned()
        .map(|n| NullBuffer::new(n.inner().clone()));
    Ok(BinaryArray::new(
        OffsetBuffer::new(offsets.into()),
        bytes.into(),
        nulls,
    ))
}

/// Every type of the column is one written here.
fn check(data_type: &DataType, field: &str, depth: usize) -> Result<(), JsonError> {
    let unsupported = || JsonError::Unsupported {
        field: field.to_owned(),
        data_type: data_type.clone(),
    };
    if depth > MAX_DEPTH {
        return Err(unsupported());
    }
    match data_type {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::Date32
        | DataType::Decimal128(_, _)
        | DataType::Timestamp(TimeUnit::Microsecond, _) => Ok(()),
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check(f.data_type(), f.name(), depth + 1)),
        DataType::List(item) => check(item.data_type(), field, depth + 1),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 && kv[0].data_type() == &DataType::Utf8 => {
                check(kv[1].data_type(), field, depth + 1)
            }
            _ => Err(unsupported()),
        },
        _ => Err(unsupported()),
    }
}

fn write_struct(values: &StructArray, row: usize, out: &mut Vec<u8>) {
    out.push(b'{');
    let mut first = true;
    for (field, column) in values.fields().iter().zip(values.columns()) {
        if column.is_null(row) {
            continue; // Spark's ignoreNullFields
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write_string(field.name(), out);
        out.push(b':');
        write_value(column.as_ref(), row, out);
    }
    out.push(b'}');
}

/// The value at `row` of `column` (not null).
fn write_value(column: &dyn Array, row: usize, out: &mut Vec<u8>) {
    match column.data_type() {
        DataType::Boolean => {
            let v = column.as_boolean().value(row);
            out.extend_from_slice(if v { b"true" } else { b"false" });
        }
        DataType::Int8 => write_display(column.as_primitive::<Int8Type>().value(row), out),
        DataType::Int16 => write_display(column.as_primitive::<Int16Type>().value(row), out),
        DataType::Int32 => write_display(column.as_primitive::<Int32Type>().value(row), out),
        DataType::Int64 => write_display(column.as_primitive::<Int64Type>().value(row), out),
        DataType::Float32 => write_float(
            f64::from(column.as_primitive::<Float32Type>().value(row)),
            out,
        ),
        DataType::Float64 => write_float(column.as_primitive::<Float64Type>().value(row), out),
        DataType::Utf8 => write_string(column.as_string::<i32>().value(row), out),
        DataType::LargeUtf8 => write_string(column.as_string::<i64>().value(row), out),
        DataType::Binary => write_base64(column.as_binary::<i32>().value(row), out),
        DataType::LargeBinary => write_base64(column.as_binary::<i64>().value(row), out),
        DataType::Date32 => {
            let days = column.as_primitive::<Date32Type>().value(row);
            out.push(b'"');
            write_date(i64::from(days), out);
            out.push(b'"');
        }
        DataType::Timestamp(_, _) => {
            let micros = column.as_primitive::<TimestampMicrosecondType>().value(row);
            write_timestamp(micros, out);
        }
        DataType::Decimal128(_, scale) => {
            let v = column.as_primitive::<Decimal128Type>().value(row);
            write_decimal(v, *scale, out);
        }
        DataType::Struct(_) => write_struct(column.as_struct(), row, out),
        DataType::List(_) => {
            let list = column.as_list::<i32>();
            let items = list.value(row);
            out.push(b'[');
            for i in 0..items.len() {
                if i > 0 {
                    out.push(b',');
                }
                write_item(items.as_ref(), i, out);
            }
            out.push(b']');
        }
        DataType::Map(_, _) => {
            let entries = column.as_map().value(row);
            let keys = entries.column(0).as_string::<i32>();
            let values = entries.column(1);
            out.push(b'{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(keys.value(i), out);
                out.push(b':');
                write_item(values.as_ref(), i, out);
            }
            out.push(b'}');
        }
        _ => unreachable!("checked before writing"),
    }
}

/// A list's item or a map's value: `null` where null (kept, unlike a struct's null field).
fn write_item(column: &dyn Array, i: usize, out: &mut Vec<u8>) {
    if column.is_null(i) {
        out.extend_from_slice(b"null");
    } else {
        write_value(column, i, out);
    }
}

fn write_display(v: impl std::fmt::Display, out: &mut Vec<u8>) {
    use std::io::Write;
    let _ = write!(out, "{v}");
}

fn write_float(v: f64, out: &mut Vec<u8>) {
    if v.is_nan() {
        out.extend_from_slice(b"\"NaN\"");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 {
            b"\"Infinity\""
        } else {
            b"\"-Infinity\""
        });
    } else if v == v.trunc() && v.abs() < 1e7 {
        // Java writes a whole double with ".0" below 10^7 (and in E notation above).
        write_display(format_args!("{v:.1}"), out);
    } else {
        write_display(v, out);
    }
}

fn write_base64(v: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    out.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(v)
            .as_bytes(),
    );
    out.push(b'"');
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    // serde_json's escaping: quotes, backslashes and control characters.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn write_decimal(v: i128, scale: i8, out: &mut Vec<u8>) {
    if scale <= 0 {
        let zeros = "0".repeat(scale.unsigned_abs() as usize);
        write_display(format_args!("{v}{zeros}"), out);
        return;
    }
    let scale = scale as usize;
    let digits = v.unsigned_abs().to_string();
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = digits.split_at(digits.len() - scale);
    let sign = if v < 0 { "-" } else { "" };
    write_display(format_args!("{sign}{whole}.{fraction}"), out);
}

/// `yyyy-mm-dd` of a day counted from 1970-01-01 (the "civil from days" algorithm).
fn write_date(days: i64, out: &mut Vec<u8>) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    write_display(format_args!("{year:04}-{month:02}-{day:02}"), out);
}

/// Spark's default, `yyyy-MM-dd'T'HH:mm:ss.SSSXXX`, in UTC.
fn write_timestamp(micros: i64, out: &mut Vec<u8>) {
    let days = micros.div_euclid(86_400_000_000);
    let in_day = micros.rem_euclid(86_400_000_000);
    let seconds = in_day / 1_000_000;
    let millis = (in_day % 1_000_000) / 1000;
    out.push(b'"');
    write_date(days, out);
    write_display(
        format_args!(
            "T{:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        ),
        out,
    );
    write_display(format_args!(".{millis:03}"), out);
    out.extend_from_slice(b"Z\"");
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        ArrayRef, Date32Array, Decimal128Array, Float64Array, Int32Array, StringArray,
        TimestampMicrosecondArray,
    };
    use arrow_schema::{Field, Fields};

    use super::*;

    fn rows(values: &StructArray) -> Vec<Option<String>> {
        let encoded = encode(values).unwrap();
        encoded
            .iter()
            .map(|v| v.map(|b| String::from_utf8(b.to_vec()).unwrap()))
            .collect()
    }

    #[test]
    fn rows_as_spark_writes_them() {
        let fields = Fields::from(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Float64, true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new("price", DataType::Decimal128(10, 2), true),
        ]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])),
            Arc::new(StringArray::from(vec![Some("a\"b\n"), Some("x"), None])),
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(f64::NAN),
                Some(0.25),
            ])),
            Arc::new(Date32Array::from(vec![Some(19_782), None, Some(-1)])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_500_000), Some(0), None])
                    .with_timezone("UTC"),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(1235), Some(-5), None])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ];
        let nulls = NullBuffer::from(vec![true, true, true]);
        let values = StructArray::try_new(fields.clone(), columns.clone(), Some(nulls)).unwrap();
        assert_eq!(
            rows(&values),
            [
                Some(r#"{"i":1,"s":"a\"b\n","d":1.0,"day":"2024-02-29","at":"1970-01-01T00:00:01.500Z","price":12.35}"#.to_owned()),
                Some(r#"{"s":"x","d":"NaN","at":"1970-01-01T00:00:00.000Z","price":-0.05}"#.to_owned()),
                Some(r#"{"i":3,"d":0.25,"day":"1969-12-31"}"#.to_owned()),
            ]
        );
        let with_null_row = StructArray::try_new(
            fields,
            columns,
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap();
        assert_eq!(rows(&with_null_row)[1], None);
    }

    #[test]
    fn what_it_writes_reads_back() {
        let fields = Fields::from(vec![
            Field::new("day", DataType::Date32, true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
        ]);
        let days: Vec<Option<i32>> = (-700_000..800_000).step_by(997).map(Some).collect();
        let n = days.len();
        let micros: Vec<Option<i64>> = (0..n as i64)
            .map(|i| Some((i - 400) * 86_399_999_000 + i * 1000))
            .collect();
        let values = StructArray::try_new(
            fields.clone(),
            vec![
                Arc::new(Date32Array::from(days.clone())),
                Arc::new(TimestampMicrosecondArray::from(micros.clone()).with_timezone("UTC")),
            ],
            None,
        )
        .unwrap();
        let encoded = encode(&values).unwrap();
        let back = super::super::json::decode(
            encoded.iter(),
            &fields,
            super::super::json::Mode::Permissive,
        )
        .unwrap();
        assert!(back.bad_rows.is_empty(), "{:?}", &back.bad_rows[..1]);
        assert_eq!(
            back.values.column(0).as_primitive::<Date32Type>().values(),
            &days.iter().map(|d| d.unwrap()).collect::<Vec<_>>()[..]
        );
        let at = back
            .values
            .column(1)
            .as_primitive::<TimestampMicrosecondType>();
        for (i, want) in micros.iter().enumerate() {
            // Milliseconds are what the text keeps.
            assert_eq!(at.value(i), want.unwrap() / 1000 * 1000);
        }
    }
}
