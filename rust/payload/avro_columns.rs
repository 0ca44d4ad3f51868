//! The column builders of an Avro schema, and Avro values appended to them.

use apache_avro::schema::Schema;
use apache_avro::types::Value;
use arrow_schema::{DataType, Field, Fields};

use super::{float_double, int_long, AvroError, AvroSchema, MAX_DEPTH};
use crate::payload::columns::{self, ListColumn, MapColumn};

/// For a union read as a struct of members: each branch's member (None: the null branch).
/// None for a record.
pub(super) type Members = Option<Vec<Option<usize>>>;
pub(super) type Column = columns::Column<Members>;
pub(super) type StructColumn = columns::StructColumn<Members>;

impl StructColumn {
    /// The columns of a record's `fields` (as `AvroSchema::fields` gives them).
    pub(super) fn record(
        names: &AvroSchema,
        schema: &Schema,
        fields: &Fields,
    ) -> Result<Self, AvroError> {
        let Schema::Record(r) = schema else {
            unreachable!("fields() gave a struct for a record only")
        };
        let children = r
            .fields
            .iter()
            .zip(fields)
            .map(|(f, a)| Column::new(names, &f.schema, a.data_type(), 0))
            .collect::<Result<_, _>>()?;
        Ok(StructColumn::with_children(fields.clone(), children, None))
    }

    /// Append a record's fields as a row: a row of null fields when any does not fit (a
    /// timestamp or decimal past its Arrow type), Err saying which.
    pub(super) fn append_row(&mut self, value: &Value) -> Result<(), String> {
        let Value::Record(fields) = value else {
            self.append_blank();
            return Err("the datum is not a record".into());
        };
        let mut misfit = None;
        if fields.len() != self.children.len() {
            misfit = Some(format!(
                "the record has {} fields, the column {}",
                fields.len(),
                self.children.len()
            ));
        }
        for (i, child) in self.children.iter_mut().enumerate() {
            let fits = fields.get(i).is_some_and(|(_, v)| child.append(v));
            if !fits {
                if fields.get(i).is_none() {
                    child.append_null();
                }
                misfit.get_or_insert_with(|| does_not_fit(&self.fields[i]));
            }
        }
        self.end_row(misfit)
    }

    /// Close a row whose fields were appended: Err(`misfit`) when one did not fit, and then
    /// the row's fields are nulled (they hold what did fit until finish() nulls them).
    pub(super) fn end_row(&mut self, misfit: Option<String>) -> Result<(), String> {
        if misfit.is_some() {
            self.blank.push(self.nulls.len());
        }
        self.nulls.append_non_null();
        misfit.map_or(Ok(()), Err)
    }
}

impl Column {
    /// Builders for values of `schema`, read as `data_type` (its `arrow_type`).
    fn new(
        names: &AvroSchema,
        schema: &Schema,
        data_type: &DataType,
        depth: usize,
    ) -> Result<Self, AvroError> {
        if depth > MAX_DEPTH {
            return Err(AvroError::Unsupported {
                path: "the schema".into(),
                what: format!("nested deeper than {MAX_DEPTH} levels"),
            });
        }
        let schema = names.resolve(schema);
        if let Schema::Union(u) = schema {
            let branches: Vec<(usize, &Schema)> = u
                .variants()
                .iter()
                .enumerate()
                .filter(|(_, s)| !matches!(s, Schema::Null))
                .collect();
            // A union of one type and null, or of int|long or float|double, is read as a
            // single column; its values are appended through their branch.
            let single = match branches.as_slice() {
                [] => None,
                [(_, one)] => Some(*one),
                [(_, a), (_, b)] if int_long(a, b) || float_double(a, b) => {
                    return leaf(data_type);
                }
                _ => None,
            };
            if let Some(one) = single {
                return Column::new(names, one, data_type, depth + 1);
            }
            if let DataType::Struct(fields) = data_type {
                let mut members = vec![None; u.variants().len()];
                for (m, (branch, _)) in branches.iter().enumerate() {
                    members[*branch] = Some(m);
                }
                let children = branches
                    .iter()
                    .zip(fields)
                    .map(|((_, s), f)| Column::new(names, s, f.data_type(), depth + 1))
                    .collect::<Result<_, _>>()?;
                return Ok(Column::Struct(StructColumn::with_children(
                    fields.clone(),
                    children,
                    Some(members),
                )));
            }
            return leaf(data_type);
        }
        Ok(match (schema, data_type) {
            (Schema::Record(_), DataType::Struct(fields)) => {
                Column::Struct(StructColumn::record(names, schema, fields)?)
            }
            (Schema::Array(a), DataType::List(item)) => Column::List(Box::new(ListColumn::new(
                item.clone(),
                Column::new(names, &a.items, item.data_type(), depth + 1)?,
            ))),
            (Schema::Map(m), DataType::Map(entries, _)) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    unreachable!("map_type makes a map's entries a struct")
                };
                Column::Map(Box::new(MapColumn::new(
                    entries.clone(),
                    false,
                    Column::new(names, &m.types, kv[1].data_type(), depth + 1)?,
                )))
            }
            _ => leaf(data_type)?,
        })
    }

    /// Append `value` as one slot; false when it does not fit the column (null appended, or
    /// for a struct, list or map the slot with the misfit null inside).
    fn append(&mut self, value: &Value) -> bool {
        if let Value::Null = value {
            self.append_null();
            return true;
        }
        if let Value::Union(branch, inner) = value {
            let Column::Struct(StructColumn {
                extra: Some(members),
                ..
            }) = self
            else {
                // A union read as a single type (nullable, int|long, float|double).
                return self.append(inner);
            };
            let member = members.get(*branch as usize).copied().flatten();
            let Column::Struct(c) = self else {
                unreachable!("matched above")
            };
            if matches!(**inner, Value::Null) {
                c.append_null();
                return true;
            }
            let Some(member) = member else {
                c.append_null();
                return false;
            };
            let mut ok = true;
            for (m, child) in c.children.iter_mut().enumerate() {
                if m == member {
                    ok = child.append(inner);
                } else {
                    child.append_null();
                }
            }
            c.nulls.append_non_null();
            return ok;
        }
        let fitted = match (&mut *self, value) {
            (Column::Boolean(b), Value::Boolean(v)) => {
                b.append_value(*v);
                true
            }
            (Column::Int32(b), Value::Int(v) | Value::TimeMillis(v)) => put(b, *v),
            (Column::Int64(b), Value::Long(v) | Value::TimeMicros(v)) => put(b, *v),
            (Column::Int64(b), Value::Int(v)) => put(b, i64::from(*v)),
            (Column::Float32(b), Value::Float(v)) => put(b, *v),
            (Column::Float64(b), Value::Double(v)) => put(b, *v),
            (Column::Float64(b), Value::Float(v)) => put(b, f64::from(*v)),
            (Column::Utf8(b), Value::String(v) | Value::Enum(_, v)) => {
                b.append_value(v);
                true
            }
            (Column::Utf8(b), Value::Uuid(v)) => {
                b.append_value(v.to_string());
                true
            }
            (Column::Binary(b), Value::Bytes(v) | Value::Fixed(_, v)) => {
                b.append_value(v);
                true
            }
            (Column::Binary(b), Value::Duration(d)) => {
                let bytes: [u8; 12] = (*d).into();
                b.append_value(bytes);
                true
            }
            (Column::Date32(b), Value::Date(v)) => put(b, *v),
            (Column::Timestamp(b), Value::TimestampMicros(v) | Value::LocalTimestampMicros(v)) => {
                put(b, *v)
            }
            (Column::Timestamp(b), Value::TimestampMillis(v) | Value::LocalTimestampMillis(v)) => {
                match v.checked_mul(1000) {
                    Some(us) => put(b, us),
                    None => false,
                }
            }
            (Column::Decimal(b, limit, _), Value::Decimal(d)) => {
                match decimal_i128(d).filter(|v| v.unsigned_abs() < limit.unsigned_abs()) {
                    Some(v) => put(b, v),
                    None => false,
                }
            }
            (Column::Struct(c), Value::Record(fields)) if c.extra.is_none() => {
                let mut ok = fields.len() == c.children.len();
                for (i, child) in c.children.iter_mut().enumerate() {
                    match fields.get(i) {
                        Some((_, v)) => ok &= child.append(v),
                        None => child.append_null(),
                    }
                }
                c.nulls.append_non_null();
                return ok;
            }
            (Column::List(c), Value::Array(items)) => {
                let mut ok = true;
                for item in items {
                    ok &= c.child.append(item);
                }
                c.offsets.end(items.len(), true);
                return ok;
            }
            (Column::Map(c), Value::Map(entries)) => {
                let mut ok = true;
                for (k, v) in entries {
                    c.keys.append_value(k);
                    ok &= c.values.append(v);
                }
                c.offsets.end(entries.len(), true);
                return ok;
            }
            _ => false,
        };
        if !fitted {
            self.append_null();
        }
        fitted
    }
}

/// Why a row is bad whose `field` does not fit.
pub(super) fn does_not_fit(field: &Field) -> String {
    format!(
        "field {:?}: the value does not fit {}",
        field.name(),
        field.data_type()
    )
}

/// Append a value; true (it fitted).
pub(super) fn put<T: arrow_array::ArrowPrimitiveType>(
    b: &mut arrow_array::builder::PrimitiveBuilder<T>,
    v: T::Native,
) -> bool {
    b.append_value(v);
    true
}

/// The builder of a type with no children.
fn leaf(data_type: &DataType) -> Result<Column, AvroError> {
    columns::leaf(data_type)?.ok_or_else(|| AvroError::Unsupported {
        path: "the column".into(),
        what: format!("{data_type} is not a type Avro is read into"),
    })
}

/// A decimal's unscaled value from its big-endian two's-complement bytes; None past 128 bits.
pub(super) fn decimal_i128(d: &apache_avro::Decimal) -> Option<i128> {
    decimal_bytes_i128(&<Vec<u8>>::try_from(d).ok()?)
}

/// Big-endian two's-complement bytes as an i128; None past 128 bits.
pub(super) fn decimal_bytes_i128(bytes: &[u8]) -> Option<i128> {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let fill = if negative { 0xff } else { 0 };
    let (high, low) = bytes.split_at(bytes.len().saturating_sub(16));
    // Bytes above the low 16 are sign extension only, and agree with the low part's sign.
    let low_negative = low.first().is_some_and(|b| b & 0x80 != 0);
    if high.iter().any(|&b| b != fill) || (!high.is_empty() && low_negative != negative) {
        return None;
    }
    let mut buf = [fill; 16];
    buf[16 - low.len()..].copy_from_slice(low);
    Some(i128::from_be_bytes(buf))
}
