//! The Arrow builders a datum's values are appended to, made from the schema the values have.

use std::sync::Arc;

use apache_avro::schema::Schema;
use apache_avro::types::Value;
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int32Builder, Int64Builder, NullBuilder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{make_array, Array, ArrayRef, ListArray, MapArray, StructArray};
use arrow_buffer::{
    BooleanBufferBuilder, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{ArrowError, DataType, FieldRef, Fields};

use super::{float_double, int_long, AvroError, AvroSchema, MAX_DEPTH};

/// An Arrow builder for values of one type, made from the schema the values have.
pub(super) enum Column {
    Null(NullBuilder),
    Boolean(BooleanBuilder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Date32(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    Decimal(Decimal128Builder, i128),
    Struct(StructColumn),
    List(Box<ListColumn>),
    Map(Box<MapColumn>),
}

pub(super) struct StructColumn {
    pub(super) fields: Fields,
    pub(super) children: Vec<Column>,
    pub(super) nulls: NullBufferBuilder,
    /// For a union read as a struct of members: each branch's member (None: the null branch).
    pub(super) members: Option<Vec<Option<usize>>>,
    /// Rows whose fields are nulled when finished (a record with a value that did not fit).
    pub(super) blank: Vec<usize>,
}

pub(super) struct ListColumn {
    pub(super) item: FieldRef,
    pub(super) child: Column,
    pub(super) offsets: Vec<i32>,
    pub(super) nulls: NullBufferBuilder,
}

pub(super) struct MapColumn {
    pub(super) entries: FieldRef,
    pub(super) keys: StringBuilder,
    pub(super) values: Column,
    pub(super) offsets: Vec<i32>,
    pub(super) nulls: NullBufferBuilder,
}

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
        Ok(StructColumn {
            fields: fields.clone(),
            children: r
                .fields
                .iter()
                .zip(fields)
                .map(|(f, a)| Column::new(names, &f.schema, a.data_type(), 0))
                .collect::<Result<_, _>>()?,
            nulls: NullBufferBuilder::new(0),
            members: None,
            blank: Vec::new(),
        })
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
                misfit.get_or_insert_with(|| {
                    format!(
                        "field {:?}: the value does not fit {}",
                        self.fields[i].name(),
                        self.fields[i].data_type()
                    )
                });
            }
        }
        if misfit.is_some() {
            // Its fields hold what did fit; finish() nulls them.
            self.blank.push(self.nulls.len());
        }
        self.nulls.append_non_null();
        misfit.map_or(Ok(()), Err)
    }

    /// A non-null row of null fields.
    pub(super) fn append_blank(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.nulls.append_non_null();
    }

    pub(super) fn append_null(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.nulls.append_null();
    }

    pub(super) fn finish(&mut self) -> Result<StructArray, AvroError> {
        let arrays = self
            .children
            .iter_mut()
            .map(Column::finish)
            .collect::<Result<Vec<ArrayRef>, _>>()?;
        let len = self.nulls.len();
        let nulls = self.nulls.finish();
        if self.fields.is_empty() {
            return Ok(StructArray::new_empty_fields(len, nulls));
        }
        let arrays = if self.blank.is_empty() {
            arrays
        } else {
            let mut keep = BooleanBufferBuilder::new(len);
            keep.append_n(len, true);
            for row in self.blank.drain(..) {
                keep.set_bit(row, false);
            }
            let keep = NullBuffer::new(keep.finish());
            arrays
                .into_iter()
                .map(|a| {
                    let nulls = NullBuffer::union(a.logical_nulls().as_ref(), Some(&keep));
                    let data = a.to_data().into_builder().nulls(nulls).build()?;
                    Ok(make_array(data))
                })
                .collect::<Result<Vec<ArrayRef>, ArrowError>>()?
        };
        Ok(StructArray::try_new(self.fields.clone(), arrays, nulls)?)
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
                return Ok(Column::Struct(StructColumn {
                    fields: fields.clone(),
                    children: branches
                        .iter()
                        .zip(fields)
                        .map(|((_, s), f)| Column::new(names, s, f.data_type(), depth + 1))
                        .collect::<Result<_, _>>()?,
                    nulls: NullBufferBuilder::new(0),
                    members: Some(members),
                    blank: Vec::new(),
                }));
            }
            return leaf(data_type);
        }
        Ok(match (schema, data_type) {
            (Schema::Record(_), DataType::Struct(fields)) => {
                Column::Struct(StructColumn::record(names, schema, fields)?)
            }
            (Schema::Array(a), DataType::List(item)) => Column::List(Box::new(ListColumn {
                item: item.clone(),
                child: Column::new(names, &a.items, item.data_type(), depth + 1)?,
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
            })),
            (Schema::Map(m), DataType::Map(entries, _)) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    unreachable!("map_type makes a map's entries a struct")
                };
                Column::Map(Box::new(MapColumn {
                    entries: entries.clone(),
                    keys: StringBuilder::new(),
                    values: Column::new(names, &m.types, kv[1].data_type(), depth + 1)?,
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                }))
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
                members: Some(members),
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
            (Column::Decimal(b, limit), Value::Decimal(d)) => {
                match decimal_i128(d).filter(|v| v.unsigned_abs() < limit.unsigned_abs()) {
                    Some(v) => put(b, v),
                    None => false,
                }
            }
            (Column::Struct(c), Value::Record(fields)) if c.members.is_none() => {
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
                end_entry(&mut c.offsets, &mut c.nulls, items.len());
                return ok;
            }
            (Column::Map(c), Value::Map(entries)) => {
                let mut ok = true;
                for (k, v) in entries {
                    c.keys.append_value(k);
                    ok &= c.values.append(v);
                }
                end_entry(&mut c.offsets, &mut c.nulls, entries.len());
                return ok;
            }
            _ => false,
        };
        if !fitted {
            self.append_null();
        }
        fitted
    }

    pub(super) fn append_null(&mut self) {
        match self {
            Column::Null(b) => b.append_null(),
            Column::Boolean(b) => b.append_null(),
            Column::Int32(b) => b.append_null(),
            Column::Int64(b) => b.append_null(),
            Column::Float32(b) => b.append_null(),
            Column::Float64(b) => b.append_null(),
            Column::Utf8(b) => b.append_null(),
            Column::Binary(b) => b.append_null(),
            Column::Date32(b) => b.append_null(),
            Column::Timestamp(b) => b.append_null(),
            Column::Decimal(b, _) => b.append_null(),
            Column::Struct(c) => c.append_null(),
            Column::List(c) => {
                c.offsets.push(c.offsets.last().copied().unwrap_or(0));
                c.nulls.append_null();
            }
            Column::Map(c) => {
                c.offsets.push(c.offsets.last().copied().unwrap_or(0));
                c.nulls.append_null();
            }
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, AvroError> {
        Ok(match self {
            Column::Null(b) => Arc::new(b.finish()),
            Column::Boolean(b) => Arc::new(b.finish()),
            Column::Int32(b) => Arc::new(b.finish()),
            Column::Int64(b) => Arc::new(b.finish()),
            Column::Float32(b) => Arc::new(b.finish()),
            Column::Float64(b) => Arc::new(b.finish()),
            Column::Utf8(b) => Arc::new(b.finish()),
            Column::Binary(b) => Arc::new(b.finish()),
            Column::Date32(b) => Arc::new(b.finish()),
            Column::Timestamp(b) => Arc::new(b.finish()),
            Column::Decimal(b, _) => Arc::new(b.finish()),
            Column::Struct(c) => Arc::new(c.finish()?),
            Column::List(c) => {
                let values = c.child.finish()?;
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut c.offsets)));
                c.offsets.push(0);
                Arc::new(ListArray::try_new(
                    c.item.clone(),
                    offsets,
                    values,
                    c.nulls.finish(),
                )?)
            }
            Column::Map(c) => {
                let DataType::Struct(kv) = c.entries.data_type() else {
                    unreachable!("a map's entries are a struct")
                };
                let keys: ArrayRef = Arc::new(c.keys.finish());
                let values = c.values.finish()?;
                let entries = StructArray::try_new(kv.clone(), vec![keys, values], None)?;
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut c.offsets)));
                c.offsets.push(0);
                Arc::new(MapArray::try_new(
                    c.entries.clone(),
                    offsets,
                    entries,
                    c.nulls.finish(),
                    false,
                )?)
            }
        })
    }
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
    Ok(match data_type {
        DataType::Null => Column::Null(NullBuilder::new()),
        DataType::Boolean => Column::Boolean(BooleanBuilder::new()),
        DataType::Int32 => Column::Int32(Int32Builder::new()),
        DataType::Int64 => Column::Int64(Int64Builder::new()),
        DataType::Float32 => Column::Float32(Float32Builder::new()),
        DataType::Float64 => Column::Float64(Float64Builder::new()),
        DataType::Utf8 => Column::Utf8(StringBuilder::new()),
        DataType::Binary => Column::Binary(BinaryBuilder::new()),
        DataType::Date32 => Column::Date32(Date32Builder::new()),
        DataType::Timestamp(_, tz) => {
            Column::Timestamp(TimestampMicrosecondBuilder::new().with_timezone_opt(tz.clone()))
        }
        DataType::Decimal128(p, s) => Column::Decimal(
            Decimal128Builder::new().with_precision_and_scale(*p, *s)?,
            10i128.pow(u32::from(*p)),
        ),
        other => {
            return Err(AvroError::Unsupported {
                path: "the column".into(),
                what: format!("{other} is not a type Avro is read into"),
            })
        }
    })
}

/// Close a list's or map's entry of `added` items.
fn end_entry(offsets: &mut Vec<i32>, nulls: &mut NullBufferBuilder, added: usize) {
    offsets.push(offsets.last().copied().unwrap_or(0) + added as i32);
    nulls.append_non_null();
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
