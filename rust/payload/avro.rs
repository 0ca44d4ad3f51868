//! Avro payloads into a struct column, with the Arrow types Spark's `from_avro` gives:
//! records → struct, arrays → list, maps → map<string, _>, a union of null and one type → that
//! type (nullable), unions of int and long → long, of float and double → double, other unions
//! → struct of `member0`, `member1`, ... (one per non-null branch, the one written set),
//! enums → string, fixed → binary, decimal → decimal128, date → date32,
//! timestamp-millis/micros → timestamp[us, UTC], local-timestamp-millis/micros → timestamp[us]
//! without zone, uuid → string, time-millis → int32, time-micros → int64. Every field of the
//! result is nullable, as `JsonFormat`'s are: a datum that does not decode is a row of null
//! fields, as `from_avro` gives in PERMISSIVE mode, and a null payload a null row.
//!
//! A payload is a plain Avro datum of one writer schema, or Confluent's framing (magic byte 0,
//! a 4-byte big-endian schema id, the datum) with a writer schema per id. Given a reader
//! schema, each datum is resolved to it by Avro's rules (fields matched by name, added fields
//! take their defaults, removed ones are skipped, int → long → float → double and string ↔
//! bytes promoted, unions and enums matched by branch and symbol).
//!
//! Schemas are parsed, and datums read through a reader schema resolved, by `apache-avro`, the
//! reference Rust implementation, each resolved value then appended to Arrow builders here.
//! A datum read as its own writer schema (no reader schema; the common case) is read straight
//! from its bytes into the builders instead (avro_read.rs): `apache-avro` builds a `Value` tree
//! per record, 0.9 us for a 10-field record of 200 B before any Arrow is built, and 3 us a
//! record all told with resolution, against 0.5 us straight (benches/README.md, *Avro
//! payloads*). `arrow-avro` 57 decodes faster still (0.35 us a record in the same measurement)
//! but is not correct here as it stands: its streaming decoder takes framed messages only, an
//! error leaves its builders part way through a row (so one bad record would fail the batch,
//! or need it decoded again, instead of being a row of nulls, and a null payload has no row),
//! and it gives other Arrow types than Spark's (unions as Arrow unions, enums as dictionaries,
//! fixed as fixed-size binary, millisecond timestamps), each needing a pass to convert.
//!
//! `apache-avro` trusts the lengths and counts a datum holds (it reserves a block's item count
//! before reading any item, and recurses as deep as the datum nests), so every datum is first
//! walked here with bounds: lengths and counts within the bytes left, union and enum indexes
//! within their schema, nesting within [`MAX_DEPTH`], strings UTF-8. A datum that fails the walk
//! is a bad row and reaches neither reader.

use std::collections::HashMap;
use std::sync::Arc;

use apache_avro::schema::{Name, ResolvedSchema, Schema};
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
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, TimeUnit};

pub use super::json::{Decoded, Mode};

/// Deeper nesting than a schema or datum reasonably has; bounds every recursion here.
pub const MAX_DEPTH: usize = 64;
/// The most items (of arrays and maps together) one datum may hold: a block count of items
/// that take no bytes (nulls, empty records) costs no input, so it is bounded here instead.
const MAX_ITEMS: usize = 1 << 20;

/// Why a schema or a column could not be used.
#[derive(Debug, thiserror::Error)]
pub enum AvroError {
    /// The text is not an Avro schema.
    #[error("not an Avro schema: {0}")]
    Schema(String),
    /// A schema Spark's `from_avro` has no column type for (or that is not a record at its top).
    #[error("{path}: {what}")]
    Unsupported { path: String, what: String },
    /// Two writer schemas of one batch give different columns, and no reader schema is given.
    #[error(
        "row {row}: schema id {id} gives {id_type}, but schema id {first_id} (row \
         {first_row}) gives {first_type}; give a reader schema both resolve to"
    )]
    Mismatch {
        row: usize,
        id: u32,
        id_type: DataType,
        first_row: usize,
        first_id: u32,
        first_type: DataType,
    },
    /// A struct column that does not fit the schema it is written by.
    #[error("{path}: {what}")]
    Encode { path: String, what: String },
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

/// A parsed schema with its named types, so references to them resolve.
#[derive(Clone, Debug)]
pub struct AvroSchema {
    pub schema: Schema,
    names: HashMap<Name, Schema>,
}

impl AvroSchema {
    /// Parse Avro schema JSON text.
    pub fn parse(text: &str) -> Result<Self, AvroError> {
        let schema = Schema::parse_str(text).map_err(|e| AvroError::Schema(e.to_string()))?;
        let names = ResolvedSchema::try_from(&schema)
            .map_err(|e| AvroError::Schema(e.to_string()))?
            .get_names()
            .iter()
            .map(|(n, s)| (n.clone(), (*s).clone()))
            .collect();
        Ok(AvroSchema { schema, names })
    }

    /// The struct fields of the column this schema is read into; the top level must be a
    /// record.
    pub fn fields(&self) -> Result<Fields, AvroError> {
        match self.resolve(&self.schema) {
            Schema::Record(r) => {
                let mut stack = vec![r.name.clone()];
                r.fields
                    .iter()
                    .map(|f| {
                        let t = self.arrow_type(&f.schema, &f.name, &mut stack)?;
                        Ok(Field::new(&f.name, t, true))
                    })
                    .collect()
            }
            other => Err(AvroError::Unsupported {
                path: "the schema".into(),
                what: format!(
                    "its top level is {}, not a record (a struct column is read from records)",
                    kind(other)
                ),
            }),
        }
    }

    pub(crate) fn resolve<'a>(&'a self, schema: &'a Schema) -> &'a Schema {
        match schema {
            Schema::Ref { name } => self.names.get(name).unwrap_or(schema),
            _ => schema,
        }
    }

    /// Spark's `from_avro` type of `schema` (at `path`), named records being read in `stack`.
    fn arrow_type(
        &self,
        schema: &Schema,
        path: &str,
        stack: &mut Vec<Name>,
    ) -> Result<DataType, AvroError> {
        let unsupported = |what: String| AvroError::Unsupported {
            path: path.to_owned(),
            what,
        };
        if stack.len() > MAX_DEPTH {
            return Err(unsupported(format!(
                "nested deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(match schema {
            Schema::Null => DataType::Null,
            Schema::Boolean => DataType::Boolean,
            Schema::Int | Schema::TimeMillis => DataType::Int32,
            Schema::Long | Schema::TimeMicros => DataType::Int64,
            Schema::Float => DataType::Float32,
            Schema::Double => DataType::Float64,
            Schema::Bytes | Schema::Fixed(_) | Schema::Duration => DataType::Binary,
            Schema::String | Schema::Uuid | Schema::Enum(_) => DataType::Utf8,
            Schema::Date => DataType::Date32,
            Schema::TimestampMillis | Schema::TimestampMicros => {
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            Schema::LocalTimestampMillis | Schema::LocalTimestampMicros => {
                DataType::Timestamp(TimeUnit::Microsecond, None)
            }
            Schema::Decimal(d) => {
                let (p, s) = (d.precision, d.scale);
                if p == 0 || p > 38 || s > p {
                    return Err(unsupported(format!(
                        "decimal({p}, {s}) is past decimal128's 38 digits"
                    )));
                }
                DataType::Decimal128(p as u8, s as i8)
            }
            Schema::Array(a) => {
                let item = self.arrow_type(&a.items, path, stack)?;
                DataType::List(Arc::new(Field::new("element", item, true)))
            }
            Schema::Map(m) => {
                let value = self.arrow_type(&m.types, path, stack)?;
                map_type(value)
            }
            Schema::Union(u) => {
                let branches: Vec<&Schema> = u
                    .variants()
                    .iter()
                    .filter(|s| !matches!(s, Schema::Null))
                    .collect();
                match branches.as_slice() {
                    [] => DataType::Null,
                    [one] => self.arrow_type(one, path, stack)?,
                    [a, b] if int_long(a, b) => DataType::Int64,
                    [a, b] if float_double(a, b) => DataType::Float64,
                    many => DataType::Struct(
                        many.iter()
                            .enumerate()
                            .map(|(i, s)| {
                                let t = self.arrow_type(s, path, stack)?;
                                Ok(Field::new(format!("member{i}"), t, true))
                            })
                            .collect::<Result<Fields, AvroError>>()?,
                    ),
                }
            }
            Schema::Record(r) => {
                if stack.contains(&r.name) {
                    return Err(unsupported(format!(
                        "record {} refers to itself, which no Arrow type holds",
                        r.name
                    )));
                }
                stack.push(r.name.clone());
                let fields = r
                    .fields
                    .iter()
                    .map(|f| {
                        let t = self.arrow_type(&f.schema, &format!("{path}.{}", f.name), stack)?;
                        Ok(Field::new(&f.name, t, true))
                    })
                    .collect::<Result<Fields, AvroError>>();
                stack.pop();
                DataType::Struct(fields?)
            }
            Schema::Ref { name } => match self.names.get(name) {
                Some(s) if !matches!(s, Schema::Ref { .. }) => {
                    let s = s.clone();
                    self.arrow_type(&s, path, stack)?
                }
                _ => return Err(unsupported(format!("no type named {name}"))),
            },
            other => {
                return Err(unsupported(format!(
                    "{} has no column type here",
                    kind(other)
                )))
            }
        })
    }
}

fn int_long(a: &Schema, b: &Schema) -> bool {
    matches!(
        (a, b),
        (Schema::Int, Schema::Long) | (Schema::Long, Schema::Int)
    )
}

fn float_double(a: &Schema, b: &Schema) -> bool {
    matches!(
        (a, b),
        (Schema::Float, Schema::Double) | (Schema::Double, Schema::Float)
    )
}

pub(crate) fn map_type(value: DataType) -> DataType {
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", value, true),
    ]);
    DataType::Map(
        Arc::new(Field::new("entries", DataType::Struct(entries), false)),
        false,
    )
}

/// A schema's kind, for messages.
fn kind(schema: &Schema) -> String {
    match schema {
        Schema::Record(r) => format!("record {}", r.name),
        Schema::Enum(e) => format!("enum {}", e.name),
        Schema::Fixed(f) => format!("fixed {}", f.name),
        Schema::Ref { name } => format!("type {name}"),
        other => format!("{:?}", apache_avro::schema::SchemaKind::from(other)).to_lowercase(),
    }
}

/// Where each payload's writer schema comes from.
pub enum Framing<'a> {
    /// Plain Avro datums, all written with this schema.
    Plain(&'a AvroSchema),
    /// Confluent's wire format: magic byte 0, a 4-byte big-endian schema id, the datum; the
    /// writer schema of each id.
    Confluent(&'a HashMap<u32, AvroSchema>),
}

/// The schema id of a Confluent-framed payload; None when it is not framed so.
pub fn confluent_id(payload: &[u8]) -> Option<u32> {
    match payload {
        [0, a, b, c, d, ..] => Some(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

/// Decode every payload (None: a null payload, a null row) into a struct column. With a
/// `reader` schema the column has its type and each datum is resolved to it; without one, the
/// writer schema's (with Confluent framing, every id of the batch must give the same type, or
/// [`AvroError::Mismatch`] names the first two that differ; rows then resolve to the first
/// id's schema). With [`Mode::FailFast`] decoding stops at the first bad row and the values
/// hold the rows before it.
pub fn decode(
    payloads: &[Option<&[u8]>],
    framing: &Framing<'_>,
    reader: Option<&AvroSchema>,
    mode: Mode,
) -> Result<Decoded, AvroError> {
    // The schema rows are read as, with its id when it is a writer's.
    let (target, target_id): (&AvroSchema, Option<u32>) = match (reader, framing) {
        (Some(r), _) => (r, None),
        (None, Framing::Plain(w)) => (w, None),
        (None, Framing::Confluent(writers)) => match first_schema(payloads, writers)? {
            Some((id, schema)) => (schema, Some(id)),
            None => return empty_rows(payloads, mode),
        },
    };
    let fields = target.fields()?;
    let mut root = StructColumn::record(target, target.resolve(&target.schema), &fields)?;
    let mut bad_rows = Vec::new();
    for (row, payload) in payloads.iter().enumerate() {
        let Some(payload) = *payload else {
            root.append_null();
            continue;
        };
        let read = read_datum(payload, framing, reader, target, target_id);
        // A datum that does not read is a row of null fields, as Spark's from_avro gives in
        // PERMISSIVE mode (a null payload is a null row).
        let outcome = match read {
            Ok(Datum::Value(value)) => root.append_row(&value),
            Ok(Datum::Bytes(writer, datum)) => root.read_row(writer, datum),
            Err(reason) => {
                root.append_blank();
                Err(reason)
            }
        };
        if let Err(reason) = outcome {
            bad_rows.push((row, reason));
            if mode == Mode::FailFast {
                let values = root.finish()?;
                return Ok(Decoded {
                    values: values.slice(0, row),
                    bad_rows,
                });
            }
        }
    }
    Ok(Decoded {
        values: root.finish()?,
        bad_rows,
    })
}

/// A batch with no framed payload of a known id: its rows are null (or bad when not framed),
/// in a column of no fields.
fn empty_rows(payloads: &[Option<&[u8]>], mode: Mode) -> Result<Decoded, AvroError> {
    let mut nulls = NullBufferBuilder::new(0);
    let mut bad_rows = Vec::new();
    for (row, payload) in payloads.iter().enumerate() {
        if let Some(p) = payload {
            bad_rows.push((row, framing_error(p)));
            if mode == Mode::FailFast {
                break;
            }
        }
        nulls.append_null();
    }
    let len = nulls.len();
    Ok(Decoded {
        values: StructArray::new_empty_fields(len, nulls.finish()),
        bad_rows,
    })
}

fn framing_error(payload: &[u8]) -> String {
    match (confluent_id(payload), payload.first()) {
        (Some(id), _) => format!("schema id {id} is not known"),
        (None, None) => "empty: no Confluent header".to_owned(),
        (None, Some(0)) => format!(
            "{} bytes: too short for Confluent's 5-byte header",
            payload.len()
        ),
        (None, Some(first)) => {
            format!("not Confluent-framed: the first byte is {first:#04x}, not the magic byte 0")
        }
    }
}

/// The first id of the batch with a known schema, and that schema; every other known id must
/// give the same column type.
fn first_schema<'s>(
    payloads: &[Option<&[u8]>],
    writers: &'s HashMap<u32, AvroSchema>,
) -> Result<Option<(u32, &'s AvroSchema)>, AvroError> {
    let mut first: Option<(usize, u32, &AvroSchema, DataType)> = None;
    let mut seen: Vec<u32> = Vec::new();
    for (row, payload) in payloads.iter().enumerate() {
        let Some(id) = payload.and_then(confluent_id) else {
            continue;
        };
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        let Some(schema) = writers.get(&id) else {
            continue;
        };
        let data_type = DataType::Struct(schema.fields()?);
        match &first {
            None => first = Some((row, id, schema, data_type)),
            Some((first_row, first_id, _, first_type)) if *first_type != data_type => {
                return Err(AvroError::Mismatch {
                    row,
                    id,
                    id_type: data_type,
                    first_row: *first_row,
                    first_id: *first_id,
                    first_type: first_type.clone(),
                })
            }
            Some(_) => {}
        }
    }
    Ok(first.map(|(_, id, schema, _)| (id, schema)))
}

/// A payload's datum, checked: to be read as its writer schema's own column, or resolved to
/// another schema's value first.
enum Datum<'a> {
    Bytes(&'a AvroSchema, &'a [u8]),
    Value(Value),
}

/// One payload's datum, to be read as `target`'s column.
fn read_datum<'a>(
    payload: &'a [u8],
    framing: &Framing<'a>,
    reader: Option<&AvroSchema>,
    target: &AvroSchema,
    target_id: Option<u32>,
) -> Result<Datum<'a>, String> {
    let (writer, datum, id) = match framing {
        Framing::Plain(w) => (*w, payload, None),
        Framing::Confluent(writers) => {
            let id = confluent_id(payload).ok_or_else(|| framing_error(payload))?;
            let writer = writers.get(&id).ok_or_else(|| framing_error(payload))?;
            (writer, &payload[5..], Some(id))
        }
    };
    let at = |e: String| match id {
        Some(id) => format!("schema id {id}: {e}"),
        None => e,
    };
    check(writer, datum).map_err(at)?;
    // Resolution is needed when the rows are read as another schema than this writer's.
    let resolve_to = match (reader, target_id) {
        (Some(r), _) => Some(&r.schema),
        (None, Some(t)) if id != Some(t) => Some(&target.schema),
        _ => None,
    };
    let Some(resolve_to) = resolve_to else {
        // Read as its own schema: straight from the bytes into the builders (avro_read.rs).
        return Ok(Datum::Bytes(writer, datum));
    };
    let mut rest = datum;
    let value = apache_avro::from_avro_datum(&writer.schema, &mut rest, None)
        .map_err(|e| at(format!("not an Avro datum of the writer schema: {e}")))?;
    value
        .resolve(resolve_to)
        .map(Datum::Value)
        .map_err(|e| at(format!("does not resolve to the reader schema: {e}")))
}

/// Walk a datum of `schema` with bounds (see the module's comment); Err says what is wrong.
pub fn check(schema: &AvroSchema, datum: &[u8]) -> Result<(), String> {
    let mut walk = Walk {
        names: &schema.names,
        buf: datum,
        pos: 0,
        items: 0,
    };
    walk.value(&schema.schema, 0)
}

struct Walk<'a> {
    names: &'a HashMap<Name, Schema>,
    buf: &'a [u8],
    pos: usize,
    items: usize,
}

impl<'a> Walk<'a> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn long(&mut self) -> Result<i64, String> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(format!("truncated at byte {}", self.pos));
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        Err(format!(
            "a varint longer than 10 bytes at byte {}",
            self.pos
        ))
    }

    fn skip(&mut self, n: usize) -> Result<(), String> {
        if n > self.left() {
            return Err(format!(
                "{n} bytes at byte {}, but {} are left",
                self.pos,
                self.left()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn length(&mut self) -> Result<usize, String> {
        let at = self.pos;
        let n = self.long()?;
        usize::try_from(n).map_err(|_| format!("a negative length {n} at byte {at}"))
    }

    fn value(&mut self, schema: &Schema, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match schema {
            Schema::Null => Ok(()),
            Schema::Boolean => {
                let at = self.pos;
                self.skip(1)?;
                match self.buf[at] {
                    0 | 1 => Ok(()),
                    b => Err(format!("a boolean byte {b:#04x} at byte {at}")),
                }
            }
            Schema::Int | Schema::Date | Schema::TimeMillis => {
                let at = self.pos;
                let v = self.long()?;
                i32::try_from(v)
                    .map(|_| ())
                    .map_err(|_| format!("an int {v} past 32 bits at byte {at}"))
            }
            Schema::Long
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos => self.long().map(|_| ()),
            Schema::Float => self.skip(4),
            Schema::Double => self.skip(8),
            Schema::String | Schema::Uuid => {
                let n = self.length()?;
                let at = self.pos;
                self.skip(n)?;
                std::str::from_utf8(&self.buf[at..at + n])
                    .map(|_| ())
                    .map_err(|e| format!("a string at byte {at} that is not UTF-8: {e}"))
            }
            Schema::Bytes | Schema::BigDecimal => {
                let n = self.length()?;
                self.skip(n)
            }
            Schema::Fixed(f) => self.skip(f.size),
            Schema::Duration => self.skip(12),
            Schema::Decimal(d) => self.value(&d.inner, depth + 1),
            Schema::Enum(e) => {
                let at = self.pos;
                let i = self.long()?;
                if usize::try_from(i).is_ok_and(|i| i < e.symbols.len()) {
                    Ok(())
                } else {
                    Err(format!(
                        "enum index {i} at byte {at}, but {} has {} symbols",
                        e.name,
                        e.symbols.len()
                    ))
                }
            }
            Schema::Union(u) => {
                let at = self.pos;
                let i = self.long()?;
                let branch = usize::try_from(i)
                    .ok()
                    .and_then(|i| u.variants().get(i))
                    .ok_or_else(|| {
                        format!(
                            "union index {i} at byte {at}, but the union has {} branches",
                            u.variants().len()
                        )
                    })?;
                self.value(branch, depth + 1)
            }
            Schema::Array(a) => self.blocks(None, &a.items, depth),
            Schema::Map(m) => self.blocks(Some(&Schema::String), &m.types, depth),
            Schema::Record(r) => {
                for f in &r.fields {
                    self.value(&f.schema, depth + 1)?;
                }
                Ok(())
            }
            Schema::Ref { name } => {
                let names: &'a HashMap<Name, Schema> = self.names;
                match names.get(name) {
                    Some(s) => self.value(s, depth + 1),
                    None => Err(format!("the schema has no type named {name}")),
                }
            }
        }
    }

    /// The blocks of an array (`key` None) or map: item counts, each block's byte size when
    /// the count is negative, then the items.
    fn blocks(&mut self, key: Option<&Schema>, item: &Schema, depth: usize) -> Result<(), String> {
        loop {
            let at = self.pos;
            let count = self.long()?;
            if count == 0 {
                return Ok(());
            }
            if count < 0 {
                self.length()?; // the block's size in bytes, of no use to a walk
            }
            let count = count.unsigned_abs();
            let total = usize::try_from(count)
                .ok()
                .and_then(|c| c.checked_add(self.items))
                .filter(|&t| t <= MAX_ITEMS)
                .ok_or_else(|| {
                    format!("a block of {count} items at byte {at}: past {MAX_ITEMS} in one datum")
                })?;
            // Every item of a key or of a type that takes bytes takes at least one.
            if (key.is_some() || !self.zero_size(item, 0)) && count > self.left() as u64 {
                return Err(format!(
                    "a block of {count} items at byte {at}, but {} bytes are left",
                    self.left()
                ));
            }
            self.items = total;
            for _ in 0..count {
                if let Some(k) = key {
                    self.value(k, depth + 1)?;
                }
                self.value(item, depth + 1)?;
            }
        }
    }

    /// Whether a value of `schema` can take no bytes.
    fn zero_size(&self, schema: &Schema, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match schema {
            Schema::Null => true,
            Schema::Fixed(f) => f.size == 0,
            Schema::Decimal(d) => self.zero_size(&d.inner, depth + 1),
            Schema::Record(r) => r
                .fields
                .iter()
                .all(|f| self.zero_size(&f.schema, depth + 1)),
            Schema::Ref { name } => self
                .names
                .get(name)
                .is_some_and(|s| self.zero_size(s, depth + 1)),
            _ => false,
        }
    }
}

/// An Arrow builder for values of one type, made from the schema the values have.
enum Column {
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

struct StructColumn {
    fields: Fields,
    children: Vec<Column>,
    nulls: NullBufferBuilder,
    /// For a union read as a struct of members: each branch's member (None: the null branch).
    members: Option<Vec<Option<usize>>>,
    /// Rows whose fields are nulled when finished (a record with a value that did not fit).
    blank: Vec<usize>,
}

struct ListColumn {
    item: FieldRef,
    child: Column,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

struct MapColumn {
    entries: FieldRef,
    keys: StringBuilder,
    values: Column,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

impl StructColumn {
    /// The columns of a record's `fields` (as `AvroSchema::fields` gives them).
    fn record(names: &AvroSchema, schema: &Schema, fields: &Fields) -> Result<Self, AvroError> {
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
    fn append_row(&mut self, value: &Value) -> Result<(), String> {
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
    fn append_blank(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.nulls.append_non_null();
    }

    fn append_null(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<StructArray, AvroError> {
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

    fn append_null(&mut self) {
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
fn decimal_i128(d: &apache_avro::Decimal) -> Option<i128> {
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

#[path = "avro_read.rs"]
mod read;

#[cfg(test)]
#[path = "avro_tests.rs"]
mod tests;
