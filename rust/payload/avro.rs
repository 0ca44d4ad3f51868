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
//! A datum read as its own writer schema (no reader schema, or one equal to the writer's; the
//! common case) is read straight from its bytes into the builders instead (avro_read.rs),
//! without the `Value` tree per record `apache-avro` builds, which costs several times the
//! read itself (benches/README.md, *Avro payloads*, has the figures). `arrow-avro` decodes
//! faster still but is not correct here as it stands: its streaming decoder takes framed
//! messages only, an error leaves its builders part way through a row (so one bad record would
//! fail the batch, or need it decoded again, instead of being a row of nulls, and a null
//! payload has no row), and it gives other Arrow types than Spark's (unions as Arrow unions,
//! enums as dictionaries, fixed as fixed-size binary, millisecond timestamps), each needing a
//! pass to convert.
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
use arrow_array::StructArray;
use arrow_buffer::NullBufferBuilder;
use arrow_schema::{ArrowError, DataType, Field, Fields, TimeUnit};

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
    /// The schema's JSON with object keys sorted and no spaces: equal for two schemas that
    /// read every datum alike (apache-avro's own equality is the Parsing Canonical Form, which
    /// drops logical types, so a `timestamp-micros` long would equal a plain one).
    form: String,
}

impl AvroSchema {
    /// Parse Avro schema JSON text.
    pub fn parse(text: &str) -> Result<Self, AvroError> {
        let mut json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| AvroError::Schema(e.to_string()))?;
        plain_fixed_uuids(&mut json, 0);
        let form = json.to_string();
        let schema = Schema::parse(&json).map_err(|e| AvroError::Schema(e.to_string()))?;
        let names = ResolvedSchema::try_from(&schema)
            .map_err(|e| AvroError::Schema(e.to_string()))?
            .get_names()
            .iter()
            .map(|(n, s)| (n.clone(), (*s).clone()))
            .collect();
        Ok(AvroSchema {
            schema,
            names,
            form,
        })
    }

    /// Whether a datum written by this schema reads as `other` without resolution: the two
    /// are the same schema, as a writer's registered one and the reader schema given for it
    /// usually are.
    pub fn same_as(&self, other: &AvroSchema) -> bool {
        self.form == other.form
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

/// Drop the `uuid` logical type of fixed types: `apache-avro` 0.21 parses a 16-byte fixed
/// `uuid` into the same schema as a string `uuid` and then reads it as a length-prefixed string,
/// which misreads the datum; as a plain fixed it is read right, and binary is what Spark's
/// `from_avro` gives for it too.
fn plain_fixed_uuids(json: &mut serde_json::Value, depth: usize) {
    if depth > MAX_DEPTH {
        return; // Schema::parse refuses what is this deep, or reads it
    }
    match json {
        serde_json::Value::Object(map) => {
            let fixed_uuid = map.get("type").and_then(|t| t.as_str()) == Some("fixed")
                && map.get("logicalType").and_then(|t| t.as_str()) == Some("uuid");
            if fixed_uuid {
                map.remove("logicalType");
            }
            for value in map.values_mut() {
                plain_fixed_uuids(value, depth + 1);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                plain_fixed_uuids(item, depth + 1);
            }
        }
        _ => {}
    }
}

pub(super) fn int_long(a: &Schema, b: &Schema) -> bool {
    matches!(
        (a, b),
        (Schema::Int, Schema::Long) | (Schema::Long, Schema::Int)
    )
}

pub(super) fn float_double(a: &Schema, b: &Schema) -> bool {
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
            Ok(Datum::Bytes(writer, datum, id)) => {
                root.read_row(writer, datum).map_err(|e| match id {
                    Some(id) => format!("schema id {id}: {e}"),
                    None => e,
                })
            }
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
    /// The writer schema, the datum, and the schema id it was framed with.
    Bytes(&'a AvroSchema, &'a [u8], Option<u32>),
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
        (Some(r), _) if !writer.same_as(r) => Some(&r.schema),
        (None, Some(t)) if id != Some(t) && !writer.same_as(target) => Some(&target.schema),
        _ => None,
    };
    let Some(resolve_to) = resolve_to else {
        // Read as its own schema: straight from the bytes into the builders (avro_read.rs).
        return Ok(Datum::Bytes(writer, datum, id));
    };
    let mut rest = datum;
    let value = apache_avro::from_avro_datum(&writer.schema, &mut rest, None)
        .map_err(|e| at(format!("not an Avro datum of the writer schema: {e}")))?;
    value
        .resolve(resolve_to)
        .map(Datum::Value)
        .map_err(|e| at(format!("does not resolve to the reader schema: {e}")))
}

#[path = "avro_check.rs"]
mod check;
#[path = "avro_columns.rs"]
mod columns;
#[path = "avro_read.rs"]
mod read;

pub use check::check;
#[cfg(test)]
use columns::decimal_i128;
use columns::StructColumn;

#[cfg(test)]
#[path = "avro_tests.rs"]
mod tests;
