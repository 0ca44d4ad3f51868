//! A struct column written as Avro datums of a schema (as Spark's `to_avro` writes them), with
//! Confluent's 5-byte header when a schema id is given. Fields are matched by name; a union
//! takes its null branch for a null value, its only other branch (or for int|long and
//! float|double the one of the column's width) otherwise, and for a struct of `member0`,
//! `member1`, ... (as unions are read) the branch of the member set. Written here rather
//! than through `apache-avro`'s values, which would be one allocation per value to write what
//! is a few bytes each.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt8Type,
};
use arrow_array::{Array, BinaryArray, StructArray};
use arrow_schema::{DataType, TimeUnit};

use apache_avro::schema::Schema;

use super::avro::{AvroError, AvroSchema, MAX_DEPTH};

/// Each row of `values` as a datum of `schema` (a record), prefixed by Confluent's header when
/// `schema_id` is given; a null row is a null payload.
pub fn encode(
    values: &StructArray,
    schema: &AvroSchema,
    schema_id: Option<u32>,
) -> Result<BinaryArray, AvroError> {
    let root = schema.resolve(&schema.schema);
    if !matches!(root, Schema::Record(_)) {
        return Err(AvroError::Encode {
            path: "the schema".into(),
            what: "its top level is not a record (a struct column is written as records)".into(),
        });
    }
    let mut out: Vec<u8> = Vec::new();
    let mut payloads = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        if values.is_null(row) {
            payloads.push(None);
            continue;
        }
        let start = out.len();
        if let Some(id) = schema_id {
            out.push(0);
            out.extend_from_slice(&id.to_be_bytes());
        }
        let w = Writer { schema, row };
        w.at(root, values, row, &mut out, "value", 0)?;
        payloads.push(Some((start, out.len())));
    }
    Ok(payloads
        .into_iter()
        .map(|p| p.map(|(a, b)| &out[a..b]))
        .collect())
}

struct Writer<'a> {
    schema: &'a AvroSchema,
    row: usize,
}

fn long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    long(out, b.len() as i64);
    out.extend_from_slice(b);
}

impl Writer<'_> {
    fn fail(&self, path: &str, what: String) -> AvroError {
        AvroError::Encode {
            path: format!("{path} (row {})", self.row),
            what,
        }
    }

    /// Write `array`'s value at `i` as `schema`.
    fn at(
        &self,
        schema: &Schema,
        array: &dyn Array,
        i: usize,
        out: &mut Vec<u8>,
        path: &str,
        depth: usize,
    ) -> Result<(), AvroError> {
        if depth > MAX_DEPTH {
            return Err(self.fail(path, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let schema = self.schema.resolve(schema);
        if let Schema::Union(u) = schema {
            return self.union(u.variants(), array, i, out, path, depth);
        }
        if array.is_null(i) {
            return match schema {
                Schema::Null => Ok(()),
                _ => Err(self.fail(path, "null, but the schema's type has no null".into())),
            };
        }
        let mismatch = || {
            self.fail(
                path,
                format!(
                    "a {} column is not written as {:?}",
                    array.data_type(),
                    apache_avro::schema::SchemaKind::from(schema)
                ),
            )
        };
        match schema {
            Schema::Null => {
                return Err(self.fail(path, "a value, but the schema's type is null".into()))
            }
            Schema::Boolean => match array.as_boolean_opt() {
                Some(a) => out.push(u8::from(a.value(i))),
                None => return Err(mismatch()),
            },
            Schema::Int | Schema::Date | Schema::TimeMillis => {
                let v = int_at(array, i).ok_or_else(mismatch)?;
                let v =
                    i32::try_from(v).map_err(|_| self.fail(path, format!("{v} is past an int")))?;
                long(out, i64::from(v));
            }
            Schema::Long | Schema::TimeMicros => long(out, int_at(array, i).ok_or_else(mismatch)?),
            Schema::TimestampMillis | Schema::LocalTimestampMillis => long(
                out,
                micros_at(array, i).ok_or_else(mismatch)?.div_euclid(1000),
            ),
            Schema::TimestampMicros | Schema::LocalTimestampMicros => {
                long(out, micros_at(array, i).ok_or_else(mismatch)?)
            }
            Schema::Float => {
                let v = float_at(array, i).ok_or_else(mismatch)?;
                out.extend_from_slice(&(v as f32).to_le_bytes());
            }
            Schema::Double => {
                let v = float_at(array, i).ok_or_else(mismatch)?;
                out.extend_from_slice(&v.to_le_bytes());
            }
            Schema::Bytes => bytes(out, binary_at(array, i).ok_or_else(mismatch)?),
            Schema::String | Schema::Uuid => {
                bytes(out, text_at(array, i).ok_or_else(mismatch)?.as_bytes())
            }
            Schema::Fixed(f) => {
                let b = binary_at(array, i).ok_or_else(mismatch)?;
                if b.len() != f.size {
                    return Err(self.fail(
                        path,
                        format!("{} bytes for fixed {} of {}", b.len(), f.name, f.size),
                    ));
                }
                out.extend_from_slice(b);
            }
            Schema::Enum(e) => {
                let s = text_at(array, i).ok_or_else(mismatch)?;
                let index = e.symbols.iter().position(|x| x == s).ok_or_else(|| {
                    self.fail(path, format!("{s:?} is not a symbol of enum {}", e.name))
                })?;
                long(out, index as i64);
            }
            Schema::Decimal(d) => {
                let DataType::Decimal128(_, scale) = array.data_type() else {
                    return Err(mismatch());
                };
                if i64::from(*scale) != d.scale as i64 {
                    return Err(self.fail(
                        path,
                        format!(
                            "scale {scale}, but the schema's decimal has scale {}",
                            d.scale
                        ),
                    ));
                }
                let v = array.as_primitive::<Decimal128Type>().value(i);
                let full = v.to_be_bytes();
                match self.schema.resolve(&d.inner) {
                    Schema::Fixed(f) => {
                        let fill = if v < 0 { 0xff } else { 0 };
                        let mut b = vec![fill; f.size];
                        let n = f.size.min(16);
                        let high_ok = full[..16 - n].iter().all(|&x| x == fill)
                            && (n == 0 || (full[16 - n] & 0x80 != 0) == (v < 0));
                        if !high_ok {
                            return Err(self.fail(
                                path,
                                format!("{v} does not fit fixed {} of {} bytes", f.name, f.size),
                            ));
                        }
                        b[f.size - n..].copy_from_slice(&full[16 - n..]);
                        out.extend_from_slice(&b);
                    }
                    _ => {
                        // The fewest bytes that keep the sign.
                        let fill = if v < 0 { 0xff } else { 0 };
                        let mut start = 0;
                        while start < 15
                            && full[start] == fill
                            && (full[start + 1] & 0x80 != 0) == (v < 0)
                        {
                            start += 1;
                        }
                        bytes(out, &full[start..]);
                    }
                }
            }
            Schema::Array(a) => {
                let list = array.as_list_opt::<i32>().ok_or_else(mismatch)?;
                let items = list.value(i);
                if !items.is_empty() {
                    long(out, items.len() as i64);
                    for j in 0..items.len() {
                        self.at(&a.items, &items, j, out, path, depth + 1)?;
                    }
                }
                long(out, 0);
            }
            Schema::Map(m) => {
                let map = array.as_map_opt().ok_or_else(mismatch)?;
                let entries = map.value(i);
                let keys = entries.column(0);
                let values = entries.column(1);
                if !entries.is_empty() {
                    long(out, entries.len() as i64);
                    for j in 0..entries.len() {
                        let key = text_at(keys.as_ref(), j).ok_or_else(mismatch)?;
                        bytes(out, key.as_bytes());
                        self.at(&m.types, values.as_ref(), j, out, path, depth + 1)?;
                    }
                }
                long(out, 0);
            }
            Schema::Record(r) => {
                let s = array.as_struct_opt().ok_or_else(mismatch)?;
                for f in &r.fields {
                    let field_path = format!("{path}.{}", f.name);
                    match s.column_by_name(&f.name) {
                        Some(c) => {
                            self.at(&f.schema, c.as_ref(), i, out, &field_path, depth + 1)?
                        }
                        None => {
                            return Err(
                                self.fail(&field_path, "the struct has no such field".into())
                            )
                        }
                    }
                }
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// Write a union's branch index and value.
    fn union(
        &self,
        variants: &[Schema],
        array: &dyn Array,
        i: usize,
        out: &mut Vec<u8>,
        path: &str,
        depth: usize,
    ) -> Result<(), AvroError> {
        let null_branch = variants.iter().position(|s| matches!(s, Schema::Null));
        let others: Vec<usize> = (0..variants.len())
            .filter(|&b| Some(b) != null_branch)
            .collect();
        let null = |out: &mut Vec<u8>| match null_branch {
            Some(b) => {
                long(out, b as i64);
                Ok(())
            }
            None => Err(self.fail(path, "null, but the union has no null branch".into())),
        };
        if array.is_null(i) {
            return null(out);
        }
        let resolved = |b: usize| self.schema.resolve(&variants[b]);
        let branch = match others.as_slice() {
            [] => return Err(self.fail(path, "a value, but the union is of null only".into())),
            [one] => *one,
            [a, b]
                if matches!(
                    (resolved(*a), resolved(*b)),
                    (Schema::Int, Schema::Long)
                        | (Schema::Long, Schema::Int)
                        | (Schema::Float, Schema::Double)
                        | (Schema::Double, Schema::Float)
                ) =>
            {
                let wide = matches!(array.data_type(), DataType::Int64 | DataType::Float64);
                let a_wide = matches!(resolved(*a), Schema::Long | Schema::Double);
                if wide == a_wide {
                    *a
                } else {
                    *b
                }
            }
            many => {
                let Some(members) = array.as_struct_opt() else {
                    return Err(self.fail(
                        path,
                        format!(
                            "a union of {} types is written from a struct of member0, member1, \
                             ..., not a {} column",
                            many.len(),
                            array.data_type()
                        ),
                    ));
                };
                let set = (0..members.num_columns()).find(|&m| members.column(m).is_valid(i));
                let Some(m) = set else {
                    return null(out);
                };
                let Some(&branch) = many.get(m) else {
                    return Err(self.fail(
                        path,
                        format!("member{m}, but the union has {} non-null types", many.len()),
                    ));
                };
                long(out, branch as i64);
                return self.at(
                    &variants[branch],
                    members.column(m).as_ref(),
                    i,
                    out,
                    &format!("{path}.member{m}"),
                    depth + 1,
                );
            }
        };
        long(out, branch as i64);
        self.at(&variants[branch], array, i, out, path, depth + 1)
    }
}

fn int_at(array: &dyn Array, i: usize) -> Option<i64> {
    Some(match array.data_type() {
        DataType::Int8 => array.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(i),
        DataType::UInt8 => array.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => array.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(i).into(),
        DataType::Date32 => array.as_primitive::<Date32Type>().value(i).into(),
        _ => return None,
    })
}

fn micros_at(array: &dyn Array, i: usize) -> Option<i64> {
    match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => array
            .as_primitive::<TimestampSecondType>()
            .value(i)
            .checked_mul(1_000_000),
        DataType::Timestamp(TimeUnit::Millisecond, _) => array
            .as_primitive::<TimestampMillisecondType>()
            .value(i)
            .checked_mul(1000),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            Some(array.as_primitive::<TimestampMicrosecondType>().value(i))
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => Some(
            array
                .as_primitive::<TimestampNanosecondType>()
                .value(i)
                .div_euclid(1000),
        ),
        _ => int_at(array, i),
    }
}

fn float_at(array: &dyn Array, i: usize) -> Option<f64> {
    match array.data_type() {
        DataType::Float32 => Some(array.as_primitive::<Float32Type>().value(i).into()),
        DataType::Float64 => Some(array.as_primitive::<Float64Type>().value(i)),
        _ => int_at(array, i).map(|v| v as f64),
    }
}

fn binary_at(array: &dyn Array, i: usize) -> Option<&[u8]> {
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(i)),
        DataType::FixedSizeBinary(_) => Some(array.as_fixed_size_binary().value(i)),
        DataType::BinaryView => Some(array.as_binary_view().value(i)),
        _ => None,
    }
}

fn text_at(array: &dyn Array, i: usize) -> Option<&str> {
    match array.data_type() {
        DataType::Utf8 => Some(array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => Some(array.as_string::<i64>().value(i)),
        DataType::Utf8View => Some(array.as_string_view().value(i)),
        _ => None,
    }
}
