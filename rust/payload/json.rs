//! JSON payloads into a struct column of a given schema, by the rules of Spark's `from_json`:
//!
//! - a null payload, or one of only whitespace, is a null row;
//! - fields the schema does not name are ignored, fields it names that are absent are null;
//! - a value that does not fit its field's type makes that field null and the row *bad*, the
//!   other fields keep their values (Spark's partial results, also inside nested structs); an
//!   element of a list or a value of a map that does not fit nulls the whole list or map; a
//!   payload that is not JSON, or whose top level is not an object, is a bad row of null
//!   fields;
//! - a string field takes a JSON string's text, and any other JSON value as compact JSON text;
//!   integer fields take integers within their range (a byte field also 128 to 255, read as
//!   the negative bytes, as Jackson does); floating-point fields take any number,
//!   and the strings `NaN`, `Infinity`, `+Infinity`, `-Infinity`, `INF`, `+INF`, `-INF`;
//!   decimals take numbers (and numeric strings), rounded half up to the scale and refused past
//!   the precision; binary fields take base64 text; dates and timestamps take text (see
//!   `temporal`), timestamps also integers of seconds; only the first JSON value of a payload
//!   is read.
//!
//! Bad rows are listed for the caller, with why (which keeps their raw payload in a
//! corrupt-record column, or fails): with [`Mode::Permissive`] every row is decoded; with
//! [`Mode::FailFast`] decoding stops at the first bad row, and the values hold the rows before
//! it.
//!
//! Each payload is parsed straight into the column builders (no `serde_json::Value`, no
//! allocation per key or string; json_direct.rs). Payloads that are not objects,
//! not JSON, or give a struct's key twice are parsed into a `Value` instead, which gives the
//! same results by the same rules.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow_array::StructArray;
use arrow_schema::{ArrowError, DataType, Field, Fields};
use base64::Engine;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::columns::{self, leaf, ListColumn, MapColumn};
use super::temporal::{parse_date, parse_timestamp};

type Column = columns::Column<Keys>;
type StructColumn = columns::StructColumn<Keys>;

/// What a bad row does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Null where the value did not fit; the row is listed.
    Permissive,
    /// Stop at the first bad row.
    FailFast,
}

/// Why a column could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// The schema holds a type JSON payloads are not read into.
    #[error(
        "field {field:?}: {data_type} is not a type JSON payloads are read into or written from"
    )]
    Unsupported { field: String, data_type: DataType },
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

/// A decoded column: the struct values, and the bad rows with why each is.
pub struct Decoded {
    pub values: StructArray,
    pub bad_rows: Vec<(usize, String)>,
}

/// Deeper nesting than a schema needs; bounds the recursion over the schema.
const MAX_DEPTH: usize = 64;

/// Decode every payload of `payloads` (None: a null payload) into a struct of `fields`. The
/// result's fields are all nullable, whatever `fields` says, as Spark's `from_json` makes them.
pub fn decode<'a>(
    payloads: impl IntoIterator<Item = Option<&'a [u8]>>,
    fields: &Fields,
    mode: Mode,
) -> Result<Decoded, JsonError> {
    decode_by(payloads, fields, mode, Route::Direct)
}

/// How rows are read (all the same results; json_direct.rs).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Into a `Value` each, then appended.
    #[cfg_attr(not(test), allow(dead_code))] // the reference the tests check the others by
    Value,
    /// Checked, then read into the builders.
    #[cfg_attr(not(test), allow(dead_code))] // tested on its own
    Checked,
    /// Read into the builders; from a row that fails part way, checked.
    Direct,
}

fn decode_by<'a>(
    payloads: impl IntoIterator<Item = Option<&'a [u8]>>,
    fields: &Fields,
    mode: Mode,
    route: Route,
) -> Result<Decoded, JsonError> {
    let payloads: Vec<Option<&[u8]>> = payloads.into_iter().collect();
    // Rows from here on are checked before they are read.
    let mut checked_from = match route {
        Route::Direct => payloads.len(),
        Route::Value | Route::Checked => 0,
    };
    'batch: loop {
        let mut root = StructColumn::new(fields, 0)?;
        let mut bad_rows = Vec::new();
        for (row, payload) in payloads.iter().enumerate() {
            let text = payload.map(trim);
            let Some(text) = text.filter(|t| !t.is_empty()) else {
                root.append_null();
                continue;
            };
            let outcome = if route == Route::Value || text[0] != b'{' {
                value_row(&mut root, text)
            } else if row < checked_from {
                match direct_row(&mut root, text) {
                    Some(outcome) => outcome,
                    None => {
                        // Values of the row are appended that the builders cannot take back:
                        // the batch again, this row on checked first. (The rows before it read
                        // the same again, so at most twice.)
                        checked_from = row;
                        continue 'batch;
                    }
                }
            } else if direct_fits(&mut root, text) {
                direct_row(&mut root, text).ok_or_else(|| {
                    ArrowError::JsonError("a checked JSON payload read differently".into())
                })?
            } else {
                value_row(&mut root, text)
            };
            if let Err(reason) = outcome {
                bad_rows.push((row, reason));
                if mode == Mode::FailFast {
                    return Ok(Decoded {
                        values: root.finish()?.slice(0, row),
                        bad_rows,
                    });
                }
            }
        }
        return Ok(Decoded {
            values: root.finish()?,
            bad_rows,
        });
    }
}

/// A payload parsed into a `Value`, then appended: for what the direct path does not take.
fn value_row(root: &mut StructColumn, text: &[u8]) -> Result<(), String> {
    let parsed = serde_json::Deserializer::from_slice(text)
        .into_iter::<Value>()
        .next();
    match parsed {
        Some(Ok(Value::Object(object))) => root.append_object(&object),
        Some(Ok(other)) => {
            root.append_blank();
            Err(format!("not a JSON object but {}", kind(&other)))
        }
        Some(Err(e)) => {
            root.append_blank();
            Err(format!("not JSON: {e}"))
        }
        None => {
            root.append_null();
            Ok(())
        }
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The output type of `data_type`: every nested field nullable.
fn nullable(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Struct(fields) => DataType::Struct(nullable_fields(fields)),
        DataType::List(item) => DataType::List(Arc::new(nullable_field(item))),
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return data_type.clone();
            };
            let kv: Fields = vec![kv[0].as_ref().clone(), nullable_field(&kv[1])].into();
            DataType::Map(
                Arc::new(Field::new(entries.name(), DataType::Struct(kv), false)),
                *sorted,
            )
        }
        other => other.clone(),
    }
}

fn nullable_field(field: &Field) -> Field {
    Field::new(field.name(), nullable(field.data_type()), true)
}

fn nullable_fields(fields: &Fields) -> Fields {
    fields.iter().map(|f| nullable_field(f)).collect()
}

/// What a struct column keeps to find an object key's field, and which fields the object being
/// read has given so far.
pub(super) struct Keys {
    /// Field by name, for a struct of many fields (fewer are compared in turn).
    index: HashMap<Box<str>, usize>,
    seen: Vec<bool>,
    /// Two fields of one name: both take the key's value, which only the `Value` path does.
    twice: bool,
}

/// Above this many fields a key is looked up in a map rather than compared with each name.
const SCAN_FIELDS: usize = 16;

impl Keys {
    fn new(fields: &Fields) -> Self {
        let mut names = std::collections::HashSet::new();
        let twice = !fields.iter().all(|f| names.insert(f.name().as_str()));
        let index = if fields.len() > SCAN_FIELDS {
            let names = fields.iter().map(|f| f.name().as_str().into());
            names.zip(0..).collect()
        } else {
            HashMap::new()
        };
        Keys {
            index,
            seen: vec![false; fields.len()],
            twice,
        }
    }
}

/// The field `key` names; `hint` is tried first (the one after the last key's: objects
/// usually list their fields in the schema's order).
fn field_of(
    fields: &Fields,
    index: &HashMap<Box<str>, usize>,
    hint: usize,
    key: &str,
) -> Option<usize> {
    if fields.get(hint).is_some_and(|f| f.name() == key) {
        return Some(hint);
    }
    if index.is_empty() {
        fields.iter().position(|f| f.name() == key)
    } else {
        index.get(key).copied()
    }
}

impl StructColumn {
    fn new(fields: &Fields, depth: usize) -> Result<Self, JsonError> {
        let children = fields
            .iter()
            .map(|f| Column::new(f, depth + 1))
            .collect::<Result<_, _>>()?;
        Ok(StructColumn::with_children(
            nullable_fields(fields),
            children,
            Keys::new(fields),
        ))
    }

    /// Append an object's fields; Err naming the first that did not fit.
    fn append_object(&mut self, object: &Map<String, Value>) -> Result<(), String> {
        let mut error = None;
        for (field, child) in self.fields.iter().zip(&mut self.children) {
            if !child.append(object.get(field.name())) && error.is_none() {
                error = Some(misfit(field));
            }
        }
        self.nulls.append_non_null();
        error.map_or(Ok(()), Err)
    }
}

fn misfit(field: &Field) -> String {
    format!(
        "field {:?}: does not fit {}",
        field.name(),
        field.data_type()
    )
}

/// A JSON value that is not an array or object.
#[derive(Clone, Copy)]
enum Scalar<'a> {
    Bool(bool),
    Num(&'a Number),
    Str(&'a str),
}

impl Column {
    fn new(field: &Field, depth: usize) -> Result<Self, JsonError> {
        let unsupported = || JsonError::Unsupported {
            field: field.name().clone(),
            data_type: field.data_type().clone(),
        };
        if depth > MAX_DEPTH {
            return Err(unsupported());
        }
        Ok(match field.data_type() {
            DataType::Null => return Err(unsupported()),
            DataType::Struct(fields) => Column::Struct(StructColumn::new(fields, depth)?),
            DataType::List(item) => Column::List(Box::new(ListColumn::new(
                Arc::new(nullable_field(item)),
                Column::new(item, depth + 1)?,
            ))),
            DataType::Map(entries, sorted) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(unsupported());
                };
                if kv.len() != 2 || kv[0].data_type() != &DataType::Utf8 {
                    return Err(unsupported());
                }
                let DataType::Map(entries, _) = nullable(field.data_type()) else {
                    unreachable!("nullable keeps a map a map")
                };
                Column::Map(Box::new(MapColumn::new(
                    entries,
                    *sorted,
                    Column::new(&kv[1], depth + 1)?,
                )))
            }
            other => leaf(other)?.ok_or_else(unsupported)?,
        })
    }

    /// Append `value` (None: absent); false when it does not fit the type (null appended).
    fn append(&mut self, value: Option<&Value>) -> bool {
        let value = match value {
            None | Some(Value::Null) => {
                self.append_null();
                return true;
            }
            Some(Value::Bool(v)) => return self.append_scalar(Scalar::Bool(*v)),
            Some(Value::Number(n)) => return self.append_scalar(Scalar::Num(n)),
            Some(Value::String(s)) => return self.append_scalar(Scalar::Str(s)),
            Some(value) => value,
        };
        match (&mut *self, value) {
            (Column::Utf8(b), _) => {
                b.append_value(value.to_string());
                true
            }
            // Appended, with the fields that did not fit null.
            (Column::Struct(c), Value::Object(object)) => c.append_object(object).is_ok(),
            (Column::List(c), Value::Array(items)) => {
                let mut ok = true;
                for item in items {
                    ok &= c.child.append(Some(item));
                }
                // Spark nulls a list for one misfit item.
                c.offsets.end(items.len(), ok);
                ok
            }
            (Column::Map(c), Value::Object(object)) => {
                let mut ok = true;
                for (k, v) in object {
                    c.keys.append_value(k);
                    ok &= c.values.append(Some(v));
                }
                // Spark nulls a map for one misfit value.
                c.offsets.end(object.len(), ok);
                ok
            }
            _ => {
                self.append_null();
                false
            }
        }
    }

    /// Append a scalar; false when it does not fit the type (null appended).
    fn append_scalar(&mut self, value: Scalar) -> bool {
        let fitted = match self {
            Column::Null(_) | Column::Struct(_) | Column::List(_) | Column::Map(_) => None,
            Column::Boolean(b) => match value {
                Scalar::Bool(v) => {
                    b.append_value(v);
                    Some(())
                }
                _ => None,
            },
            // Jackson reads a byte from -128 to 255, the upper half as negative bytes.
            Column::Int8(b) => int::<i16>(value)
                .filter(|v| (-128..=255).contains(v))
                .map(|v| b.append_value(v as u8 as i8)),
            Column::Int16(b) => int(value).map(|v| b.append_value(v)),
            Column::Int32(b) => int(value).map(|v| b.append_value(v)),
            Column::Int64(b) => int(value).map(|v| b.append_value(v)),
            Column::Float32(b) => float(value).map(|v| b.append_value(v as f32)),
            Column::Float64(b) => float(value).map(|v| b.append_value(v)),
            Column::Utf8(b) => {
                match value {
                    Scalar::Str(s) => b.append_value(s),
                    Scalar::Bool(v) => b.append_value(if v { "true" } else { "false" }),
                    Scalar::Num(n) => b.append_value(n.to_string()),
                }
                Some(())
            }
            Column::Binary(b) => match value {
                Scalar::Str(s) => base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .ok()
                    .map(|v| b.append_value(v)),
                _ => None,
            },
            Column::Date32(b) => match value {
                Scalar::Str(s) => parse_date(s).map(|v| b.append_value(v)),
                _ => None,
            },
            Column::Timestamp(b) => match value {
                Scalar::Str(s) => parse_timestamp(s),
                Scalar::Num(n) => n.as_i64().and_then(|s| s.checked_mul(1_000_000)),
                Scalar::Bool(_) => None,
            }
            .map(|v| b.append_value(v)),
            Column::Decimal(b, limit, scale) => {
                decimal(value, *limit, *scale).map(|v| b.append_value(v))
            }
        };
        if fitted.is_none() {
            self.append_null();
            return false;
        }
        true
    }
}

/// An integer that fits `T`: JSON integers only (Spark refuses `1.0` for an integer field).
fn int<T: TryFrom<i64>>(value: Scalar) -> Option<T> {
    match value {
        Scalar::Num(n) => n.as_i64().and_then(|v| T::try_from(v).ok()),
        _ => None,
    }
}

fn float(value: Scalar) -> Option<f64> {
    match value {
        Scalar::Num(n) => n.as_f64(),
        Scalar::Str(s) => match s {
            "NaN" => Some(f64::NAN),
            "Infinity" | "+Infinity" | "INF" | "+INF" => Some(f64::INFINITY),
            "-Infinity" | "-INF" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        Scalar::Bool(_) => None,
    }
}

/// A decimal of `scale` from a JSON number (its shortest text) or a numeric string: rounded
/// half up to the scale, None from `limit` (10^precision) on.
fn decimal(value: Scalar, limit: i128, scale: i8) -> Option<i128> {
    let unscaled = match value {
        Scalar::Num(n) => parse_decimal(&n.to_string(), scale)?,
        Scalar::Str(s) => parse_decimal(s.trim(), scale)?,
        Scalar::Bool(_) => return None,
    };
    (unscaled.abs() < limit).then_some(unscaled)
}

/// `text` (digits, an optional sign, point and exponent) as an integer of `scale` decimal
/// places, rounded half up (away from zero at .5, as Java's BigDecimal HALF_UP); None when it
/// is not a number or does not fit 128 bits.
fn parse_decimal(text: &str, scale: i8) -> Option<i128> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (negative, digits) = match mantissa.as_bytes().first()? {
        b'-' => (true, &mantissa[1..]),
        b'+' => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (whole, fraction) = digits.split_at(digits.find('.').unwrap_or(digits.len()));
    let fraction = fraction.strip_prefix('.').unwrap_or(fraction);
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // The number is D * 10^e, D the digits read as one integer.
    let mut d: i128 = 0;
    for b in whole
        .bytes()
        .chain(fraction.bytes())
        .skip_while(|&b| b == b'0')
    {
        d = d.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    let e = i64::from(exponent) - fraction.len() as i64 + i64::from(scale);
    let value = if e >= 0 {
        d.checked_mul(10i128.checked_pow(u32::try_from(e).ok()?)?)?
    } else {
        match 10i128.checked_pow(u32::try_from(-e).ok()?) {
            Some(unit) => d / unit + i128::from(d % unit >= unit - unit / 2),
            None => 0, // D has fewer digits than are cut: below half a unit
        }
    };
    Some(if negative { -value } else { value })
}

#[path = "json_direct.rs"]
mod direct;
use direct::{direct_fits, direct_row};

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "json_direct_tests.rs"]
mod direct_tests;
