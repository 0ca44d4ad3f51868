//! Records to produce, read from Arrow columns in Spark's Kafka-sink names (`key`, `value`,
//! `headers`, `partition`, `timestamp`): checked once per column, split into per-partition
//! batches, and encoded straight from the Arrow buffers.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::ByteArrayType;
use arrow_array::types::{
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, GenericByteArray, Int32Array, Int64Array, LargeBinaryArray,
    LargeStringArray, ListArray, RecordBatch, StringArray,
};
use arrow_buffer::ArrowNativeType;
use arrow_schema::{DataType, TimeUnit};

use super::batch::BATCH_HEADER_LEN;
use super::builder::{finish_batch, put_bytes, BatchOptions};
use super::error::RecordsError;
use super::sizes::{field_len, varint_len, with_prefix, RECORD_FIXED_MAX};
use crate::protocol::codec::{put_varint, put_varlong};

/// Why a batch of rows cannot be produced. Nothing of it is sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrowInputError {
    /// A column is missing, unknown or of a type that cannot be produced.
    #[error("column {column:?}: {message}")]
    Column { column: String, message: String },
    /// One row cannot be produced (a null header key, a partition out of range).
    #[error("row {row}: {message}")]
    Row { row: usize, message: String },
    /// One row is larger than the largest request.
    #[error(
        "row {row}: the record is {size} bytes in a batch, larger than max_request_size ({max})"
    )]
    TooLarge { row: usize, size: usize, max: usize },
    #[error(transparent)]
    Encode(#[from] RecordsError),
}

type Result<T> = std::result::Result<T, ArrowInputError>;

/// A binary or string column (or one of nulls only, Arrow's null type).
#[derive(Debug, Clone)]
enum Bytes {
    Null,
    Binary(BinaryArray),
    LargeBinary(LargeBinaryArray),
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
}

impl Bytes {
    fn from_array(column: &str, array: &ArrayRef) -> Result<Self> {
        Ok(match array.data_type() {
            DataType::Null => Bytes::Null,
            DataType::Binary => Bytes::Binary(array.as_binary::<i32>().clone()),
            DataType::LargeBinary => Bytes::LargeBinary(array.as_binary::<i64>().clone()),
            DataType::Utf8 => Bytes::Utf8(array.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Bytes::LargeUtf8(array.as_string::<i64>().clone()),
            other => {
                return Err(ArrowInputError::Column {
                    column: column.to_owned(),
                    message: format!("must be binary or string, got {other}"),
                })
            }
        })
    }

    /// Value `i` (None when null), or `Moved` when its offsets no longer lie in the values
    /// buffer. The buffers were checked on import, but they are the caller's memory and may
    /// have changed since (the rows are encoded later, without the GIL): each value's offsets
    /// are checked where they are used, and the bytes taken as bytes, never as `str`.
    #[inline]
    fn get(&self, i: usize) -> std::result::Result<Option<&[u8]>, Moved> {
        match self {
            Bytes::Null => Ok(None),
            Bytes::Binary(a) => value_at(a, i),
            Bytes::LargeBinary(a) => value_at(a, i),
            Bytes::Utf8(a) => value_at(a, i),
            Bytes::LargeUtf8(a) => value_at(a, i),
        }
    }
}

/// A value's offsets out of its buffer's bounds (see [`Bytes::get`]).
#[derive(Debug, Clone, Copy)]
struct Moved;

#[inline]
fn value_at<T: ByteArrayType>(
    a: &GenericByteArray<T>,
    i: usize,
) -> std::result::Result<Option<&[u8]>, Moved> {
    if a.is_null(i) {
        return Ok(None);
    }
    let offsets = a.value_offsets();
    let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
    // `as_usize` of a negative offset is huge, so one comparison covers it.
    a.value_data().get(start..end).map(Some).ok_or(Moved)
}

/// The `headers` column: a list of `(key string, value binary)` structs per row.
#[derive(Debug, Clone)]
struct Headers {
    lists: ListArray,
    keys: Bytes,
    values: Bytes,
    entries_valid: Option<arrow_buffer::NullBuffer>,
}

impl Headers {
    fn from_array(array: &ArrayRef) -> Result<Self> {
        let bad = |message: String| ArrowInputError::Column {
            column: "headers".into(),
            message,
        };
        let DataType::List(_) = array.data_type() else {
            return Err(bad(format!(
                "must be a list of struct<key: string, value: binary>, got {}",
                array.data_type()
            )));
        };
        let lists = array.as_list::<i32>().clone();
        let DataType::Struct(fields) = lists.values().data_type() else {
            return Err(bad(format!(
                "must be a list of struct<key: string, value: binary>, got {}",
                array.data_type()
            )));
        };
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        if names != ["key", "value"] {
            return Err(bad(format!(
                "each header must be a struct<key, value>, got fields {names:?}"
            )));
        }
        let entries = lists.values().as_struct();
        let keys = match entries.column(0).data_type() {
            DataType::Utf8 | DataType::LargeUtf8 => {
                Bytes::from_array("headers", entries.column(0))?
            }
            other => return Err(bad(format!("a header's key must be a string, got {other}"))),
        };
        let values = Bytes::from_array("headers", entries.column(1))?;
        Ok(Headers {
            entries_valid: entries.nulls().cloned(),
            lists,
            keys,
            values,
        })
    }

    /// The header entries of row `i` (an empty range when the row's list is null), or
    /// `Moved` when the list's offsets no longer lie among the entries (see [`Bytes::get`]).
    #[inline]
    fn range(&self, i: usize) -> std::result::Result<std::ops::Range<usize>, Moved> {
        if self.lists.is_null(i) {
            return Ok(0..0);
        }
        let offsets = self.lists.value_offsets();
        let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
        if start > end || end > self.lists.values().len() {
            return Err(Moved);
        }
        Ok(start..end)
    }
}

#[derive(Debug, Clone)]
enum Partitions {
    I32(Int32Array),
    I64(Int64Array),
}

impl Partitions {
    #[inline]
    fn get(&self, i: usize) -> Option<i64> {
        match self {
            Partitions::I32(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            Partitions::I64(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// Timestamps as int64 with their unit (an int64 column is milliseconds).
#[derive(Debug, Clone)]
struct Timestamps {
    values: Int64Array,
    unit: TimeUnit,
}

impl Timestamps {
    fn from_array(array: &ArrayRef) -> Result<Self> {
        let (values, unit) = match array.data_type() {
            DataType::Int64 => (
                array.as_primitive::<Int64Type>().clone(),
                TimeUnit::Millisecond,
            ),
            DataType::Timestamp(TimeUnit::Second, _) => (
                array
                    .as_primitive::<TimestampSecondType>()
                    .reinterpret_cast::<Int64Type>(),
                TimeUnit::Second,
            ),
            DataType::Timestamp(TimeUnit::Millisecond, _) => (
                array
                    .as_primitive::<TimestampMillisecondType>()
                    .reinterpret_cast::<Int64Type>(),
                TimeUnit::Millisecond,
            ),
            DataType::Timestamp(TimeUnit::Microsecond, _) => (
                array
                    .as_primitive::<TimestampMicrosecondType>()
                    .reinterpret_cast::<Int64Type>(),
                TimeUnit::Microsecond,
            ),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => (
                array
                    .as_primitive::<TimestampNanosecondType>()
                    .reinterpret_cast::<Int64Type>(),
                TimeUnit::Nanosecond,
            ),
            other => {
                return Err(ArrowInputError::Column {
                    column: "timestamp".into(),
                    message: format!("must be a timestamp or int64 (epoch ms), got {other}"),
                })
            }
        };
        Ok(Timestamps { values, unit })
    }

    /// Row `i`'s timestamp in epoch milliseconds (floored, as Kafka's are whole ms).
    #[inline]
    fn millis(&self, i: usize) -> Option<i64> {
        if self.values.is_null(i) {
            return None;
        }
        let v = self.values.value(i);
        Some(match self.unit {
            TimeUnit::Second => v.saturating_mul(1000),
            TimeUnit::Millisecond => v,
            TimeUnit::Microsecond => v.div_euclid(1000),
            TimeUnit::Nanosecond => v.div_euclid(1_000_000),
        })
    }
}

/// The checked columns of one Arrow batch of records to produce.
#[derive(Debug, Clone)]
pub struct ProduceColumns {
    rows: usize,
    /// The number of the batch's first row in what the caller handed over (for errors).
    first_row: usize,
    key: Option<Bytes>,
    value: Bytes,
    headers: Option<Headers>,
    partition: Option<Partitions>,
    timestamp: Option<Timestamps>,
}

/// Rows bound for one partition's batch, as (Arrow batch, row) indices.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub partition: i32,
    pub rows: Vec<(u32, u32)>,
    /// An upper bound of the encoded, uncompressed batch in bytes.
    pub size: usize,
}

impl ProduceColumns {
    /// Check `batch`'s columns: `value` (binary or string) is required; `key` (binary or
    /// string), `headers` (list of struct<key: string, value: binary>), `partition` (int32 or
    /// int64) and `timestamp` (timestamp or int64 epoch ms) are optional; nothing else. Any of
    /// them may also be of the null type.
    pub fn new(batch: &RecordBatch, first_row: usize) -> Result<Self> {
        let mut key = None;
        let mut value = None;
        let mut headers = None;
        let mut partition = None;
        let mut timestamp = None;
        for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
            let name = field.name().as_str();
            // A column of Arrow's null type (what `pa.array([None, ...])` infers) is nulls
            // only: for an optional column, as if it were not there.
            let nulls_only = array.data_type() == &DataType::Null;
            match name {
                "headers" | "partition" | "timestamp" if nulls_only => {}
                "key" => key = Some(Bytes::from_array(name, array)?),
                "value" => value = Some(Bytes::from_array(name, array)?),
                "headers" => headers = Some(Headers::from_array(array)?),
                "partition" => {
                    partition = Some(match array.data_type() {
                        DataType::Int32 => {
                            Partitions::I32(array.as_primitive::<Int32Type>().clone())
                        }
                        DataType::Int64 => {
                            Partitions::I64(array.as_primitive::<Int64Type>().clone())
                        }
                        other => {
                            return Err(ArrowInputError::Column {
                                column: name.into(),
                                message: format!("must be int32 or int64, got {other}"),
                            })
                        }
                    })
                }
                "timestamp" => timestamp = Some(Timestamps::from_array(array)?),
                other => {
                    return Err(ArrowInputError::Column {
                        column: other.into(),
                        message: "is not one of key, value, headers, partition, timestamp".into(),
                    })
                }
            }
        }
        let value = value.ok_or_else(|| ArrowInputError::Column {
            column: "value".into(),
            message: "is required".into(),
        })?;
        Ok(ProduceColumns {
            rows: batch.num_rows(),
            first_row,
            key,
            value,
            headers,
            partition,
            timestamp,
        })
    }

    pub fn num_rows(&self) -> usize {
        self.rows
    }

    #[inline]
    fn key(&self, i: usize) -> Result<Option<&[u8]>> {
        match &self.key {
            None => Ok(None),
            Some(k) => self.bytes(k, i, i, "key"),
        }
    }

    #[inline]
    fn value(&self, i: usize) -> Result<Option<&[u8]>> {
        self.bytes(&self.value, i, i, "value")
    }

    /// Entry `at` of `column` (row `i`'s), or an error naming the row when the column's
    /// offsets changed after the check.
    #[inline]
    fn bytes<'a>(
        &self,
        column: &'a Bytes,
        at: usize,
        i: usize,
        name: &str,
    ) -> Result<Option<&'a [u8]>> {
        column.get(at).map_err(|Moved| self.changed(i, name))
    }

    /// Row `i`'s header entries, or an error naming the row (as [`ProduceColumns::bytes`]).
    #[inline]
    fn header_range(&self, h: &Headers, i: usize) -> Result<std::ops::Range<usize>> {
        h.range(i).map_err(|Moved| self.changed(i, "headers"))
    }

    fn changed(&self, i: usize, column: &str) -> ArrowInputError {
        self.row_error(
            i,
            &format!(
                "column {column:?} changed after send_arrow checked it (offsets outside its \
                 buffer, or a header key no longer UTF-8): Arrow data must not be modified \
                 while it is sent"
            ),
        )
    }

    /// An upper bound of row `i`'s encoded size (with its length prefix), or an error naming
    /// the row when its headers cannot be encoded.
    fn record_size(&self, i: usize) -> Result<usize> {
        let len = |b: Option<&[u8]>| field_len(b.map(<[u8]>::len));
        let mut size = RECORD_FIXED_MAX + len(self.key(i)?) + len(self.value(i)?) + 1;
        if let Some(h) = &self.headers {
            let range = self.header_range(h, i)?;
            size += varint_len(range.len() as i64) - 1;
            for e in range {
                if h.entries_valid.as_ref().is_some_and(|n| n.is_null(e)) {
                    return Err(self.row_error(i, "a header is null"));
                }
                let Some(k) = self.bytes(&h.keys, e, i, "headers")? else {
                    return Err(self.row_error(i, "a header's key is null"));
                };
                size += len(Some(k)) + len(self.bytes(&h.values, e, i, "headers")?);
            }
        }
        Ok(with_prefix(size))
    }

    fn row_error(&self, i: usize, message: &str) -> ArrowInputError {
        ArrowInputError::Row {
            row: self.first_row + i,
            message: message.to_owned(),
        }
    }

    /// Row `i`'s partition: its `partition` when set, else murmur2 of its key, else None
    /// (the sticky partition's).
    fn partition_of(&self, i: usize, n: usize) -> Result<Option<usize>> {
        let explicit = self.partition.as_ref().and_then(|p| p.get(i));
        Ok(match (explicit, self.key(i)?) {
            (Some(p), _) => {
                if p < 0 || p >= n as i64 {
                    return Err(self.row_error(
                        i,
                        &format!("partition {p} is not one of the topic's 0..{n}"),
                    ));
                }
                Some(p as usize)
            }
            (None, Some(k)) => Some(crate::hash::partition_for_key(k, n)),
            (None, None) => None,
        })
    }

    #[inline]
    fn timestamp_ms(&self, i: usize) -> Option<i64> {
        self.timestamp.as_ref().and_then(|t| t.millis(i))
    }

    /// Append row `i` as a record (with its length prefix) to `raw`; `body` is scratch.
    fn write_record(
        &self,
        raw: &mut Vec<u8>,
        body: &mut Vec<u8>,
        i: usize,
        timestamp_delta: i64,
        offset_delta: i32,
    ) -> Result<()> {
        body.clear();
        body.push(0); // attributes
        put_varlong(body, timestamp_delta);
        put_varint(body, offset_delta);
        put_bytes(body, self.key(i)?)?;
        put_bytes(body, self.value(i)?)?;
        match &self.headers {
            None => put_varint(body, 0),
            Some(h) => {
                let range = self.header_range(h, i)?;
                put_varint(body, range.len() as i32);
                for e in range {
                    let key = self.bytes(&h.keys, e, i, "headers")?;
                    // A header key is a string: checked as UTF-8 on import, and again here,
                    // since the buffers may have changed since.
                    if key.is_some_and(|k| std::str::from_utf8(k).is_err()) {
                        return Err(self.changed(i, "headers"));
                    }
                    put_bytes(body, key)?;
                    put_bytes(body, self.bytes(&h.values, e, i, "headers")?)?;
                }
            }
        }
        put_varint(raw, body.len() as i32);
        raw.extend_from_slice(body);
        Ok(())
    }
}

/// The record batches of one send (a Table's, or one), planned and encoded together, so a
/// Table of many small batches still makes full Kafka batches.
#[derive(Debug, Clone, Default)]
pub struct ProduceRows {
    parts: Vec<ProduceColumns>,
}

impl ProduceRows {
    /// Check each batch's columns (`ProduceColumns::new`); rows are numbered across them.
    pub fn new(batches: &[RecordBatch]) -> Result<Self> {
        let mut first_row = 0;
        let mut parts = Vec::with_capacity(batches.len());
        for batch in batches {
            parts.push(ProduceColumns::new(batch, first_row)?);
            first_row += batch.num_rows();
        }
        if parts.len() > u32::MAX as usize || parts.iter().any(|p| p.rows > u32::MAX as usize) {
            return Err(ArrowInputError::Row {
                row: 0,
                message: "more than 2^32 batches, or rows in one batch".into(),
            });
        }
        Ok(ProduceRows { parts })
    }

    pub fn num_rows(&self) -> usize {
        self.parts.iter().map(|p| p.rows).sum()
    }

    /// Split the rows into batches of at most `batch_size` bytes (one row at least) per
    /// partition. A row goes to its `partition` when set, else to murmur2 of its key, else to
    /// the sticky partition, which starts at `sticky` and moves on when its batch fills
    /// (KIP-480). Every row is checked first: any error means no chunk at all.
    pub fn plan(
        &self,
        num_partitions: u32,
        sticky: u32,
        batch_size: usize,
        max_request_size: usize,
    ) -> Result<Vec<Chunk>> {
        if num_partitions == 0 {
            return Err(ArrowInputError::Row {
                row: 0,
                message: "the topic has no partitions".into(),
            });
        }
        let n = num_partitions as usize;
        let mut open = OpenChunks::new(n);
        let mut done = Vec::new();
        let mut sticky = sticky as usize % n;
        for (part_index, part) in self.parts.iter().enumerate() {
            for i in 0..part.rows {
                let size = part.record_size(i)?;
                if BATCH_HEADER_LEN + size > max_request_size {
                    return Err(ArrowInputError::TooLarge {
                        row: part.first_row + i,
                        size: BATCH_HEADER_LEN + size,
                        max: max_request_size,
                    });
                }
                let (mut p, unkeyed) = match part.partition_of(i, n)? {
                    Some(p) => (p, false),
                    None => (sticky, true),
                };
                if close_if_full(open.slot(p), size, batch_size, &mut done) && unkeyed && n > 1 {
                    // KIP-480: the sticky partition's batch is complete; the next one starts a
                    // batch on the next partition.
                    sticky = (sticky + 1) % n;
                    p = sticky;
                    close_if_full(open.slot(p), size, batch_size, &mut done);
                }
                let chunk = open.slot(p).get_or_insert_with(|| Chunk {
                    partition: p as i32,
                    rows: Vec::new(),
                    size: BATCH_HEADER_LEN,
                });
                chunk.rows.push((part_index as u32, i as u32));
                chunk.size += size;
            }
        }
        open.close_into(&mut done);
        Ok(done)
    }

    /// Encode a planned chunk's rows as one v2 batch; rows without a timestamp get `now_ms`.
    /// A batch larger than planned (the caller's buffers changed since) is an error, so no
    /// request grows past `max_request_size`.
    pub fn encode(&self, chunk: &Chunk, now_ms: i64, opts: &BatchOptions) -> Result<Vec<u8>> {
        let rows = &chunk.rows[..];
        let ts = |&(part, i): &(u32, u32)| {
            self.parts[part as usize]
                .timestamp_ms(i as usize)
                .unwrap_or(now_ms)
        };
        let count = i32::try_from(rows.len())
            .map_err(|_| RecordsError::Unencodable("too many records".into()))?;
        let base_ts = rows.first().map_or(-1, ts);
        let mut max_ts = base_ts;
        let mut raw = Vec::with_capacity(64 * rows.len());
        let mut body = Vec::new();
        for (delta, row) in rows.iter().enumerate() {
            let t = ts(row);
            max_ts = max_ts.max(t);
            self.parts[row.0 as usize].write_record(
                &mut raw,
                &mut body,
                row.1 as usize,
                t.wrapping_sub(base_ts),
                delta as i32,
            )?;
        }
        if BATCH_HEADER_LEN + raw.len() > chunk.size {
            return Err(ArrowInputError::Row {
                row: self.parts[rows[0].0 as usize].first_row + rows[0].1 as usize,
                message: format!(
                    "the rows from here make a {}-byte batch, {} was planned: the Arrow data \
                     changed after send_arrow checked it",
                    BATCH_HEADER_LEN + raw.len(),
                    chunk.size
                ),
            });
        }
        Ok(finish_batch(&raw, count, base_ts, max_ts, opts)?)
    }
}

/// Each partition's open chunk, in partition order: a slot per partition for a topic of
/// ordinary size, a map past that (the partition count is the broker's word, and a slot per
/// partition of a hostile count would be an allocation that aborts the process).
enum OpenChunks {
    Slots(Vec<Option<Chunk>>),
    Map(std::collections::BTreeMap<usize, Option<Chunk>>),
}

impl OpenChunks {
    const MAX_SLOTS: usize = 1 << 16;

    fn new(partitions: usize) -> Self {
        if partitions <= Self::MAX_SLOTS {
            OpenChunks::Slots(vec![None; partitions])
        } else {
            OpenChunks::Map(Default::default())
        }
    }

    #[inline]
    fn slot(&mut self, partition: usize) -> &mut Option<Chunk> {
        match self {
            OpenChunks::Slots(slots) => &mut slots[partition],
            OpenChunks::Map(map) => map.entry(partition).or_default(),
        }
    }

    fn close_into(self, done: &mut Vec<Chunk>) {
        match self {
            OpenChunks::Slots(slots) => done.extend(slots.into_iter().flatten()),
            OpenChunks::Map(map) => done.extend(map.into_values().flatten()),
        }
    }
}

/// Move `slot`'s chunk to `done` when a row of `size` bytes does not fit it; true if moved.
fn close_if_full(
    slot: &mut Option<Chunk>,
    size: usize,
    batch_size: usize,
    done: &mut Vec<Chunk>,
) -> bool {
    match slot {
        Some(chunk) if chunk.size + size > batch_size => {
            done.extend(slot.take());
            true
        }
        _ => false,
    }
}

/// Rows bound for one partition's batch, ready to encode.
#[derive(Debug, Clone)]
pub struct PlannedBatch {
    pub columns: Arc<ProduceRows>,
    pub chunk: Chunk,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{decode_records, DecodeOptions};
    use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder, StructBuilder};
    use arrow_array::TimestampMicrosecondArray;
    use arrow_schema::{Field, Fields};

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    /// One row's headers (None: a null list).
    type HeaderRow<'a> = Option<Vec<(&'a str, Option<&'a [u8]>)>>;

    fn headers_array(rows: &[HeaderRow<'_>]) -> ArrayRef {
        let fields = Fields::from(vec![
            Field::new("key", DataType::Utf8, true),
            Field::new("value", DataType::Binary, true),
        ]);
        let mut b = ListBuilder::new(StructBuilder::from_fields(fields, 0));
        for row in rows {
            match row {
                None => b.append(false),
                Some(entries) => {
                    for (k, v) in entries {
                        let s = b.values();
                        s.field_builder::<StringBuilder>(0).unwrap().append_value(k);
                        s.field_builder::<BinaryBuilder>(1)
                            .unwrap()
                            .append_option(*v);
                        s.append(true);
                    }
                    b.append(true);
                }
            }
        }
        Arc::new(b.finish())
    }

    #[test]
    fn rows_round_trip_through_a_batch() {
        let b = batch(vec![
            (
                "key",
                Arc::new(BinaryArray::from(vec![Some(&b"k"[..]), None, Some(b"")])) as ArrayRef,
            ),
            (
                "value",
                Arc::new(StringArray::from(vec![Some("v0"), Some("v1"), None])),
            ),
            (
                "headers",
                headers_array(&[
                    Some(vec![("h", Some(b"x")), ("n", None)]),
                    None,
                    Some(vec![]),
                ]),
            ),
            (
                "timestamp",
                Arc::new(TimestampMicrosecondArray::from(vec![
                    Some(5_000_999),
                    None,
                    Some(-1),
                ])),
            ),
        ]);
        let cols = ProduceRows::new(std::slice::from_ref(&b)).unwrap();
        let chunks = cols.plan(1, 0, 1 << 20, 1 << 20).unwrap();
        assert_eq!(chunks.len(), 1);
        let encoded = cols
            .encode(&chunks[0], 77, &BatchOptions::default())
            .unwrap();
        assert!(encoded.len() <= chunks[0].size);
        let decoded = decode_records(&encoded, &DecodeOptions::default()).unwrap();
        let d = &decoded;
        let bytes =
            |slot: Option<crate::records::Slot>| slot.map(|s| d.bytes(&encoded, s).to_vec());
        assert_eq!(d.len(), 3);
        assert_eq!(bytes(d.keys[0]), Some(b"k".to_vec()));
        assert_eq!(bytes(d.values[0]), Some(b"v0".to_vec()));
        assert_eq!(d.timestamps, vec![5_000, 77, -1]);
        assert_eq!(d.header_starts, vec![0, 2, 2, 2]);
        assert_eq!(bytes(d.keys[1]), None);
        assert_eq!(bytes(d.keys[2]), Some(vec![]));
        assert_eq!(bytes(d.values[2]), None);
    }

    #[test]
    fn keyed_rows_go_where_murmur2_puts_them_and_unkeyed_rows_stick() {
        let keys: Vec<Option<String>> = (0..200)
            .map(|i| (i % 2 == 0).then(|| format!("key-{i}")))
            .collect();
        let b = batch(vec![
            ("key", Arc::new(StringArray::from(keys.clone())) as ArrayRef),
            (
                "value",
                Arc::new(BinaryArray::from(vec![Some(&[7u8; 50][..]); 200])),
            ),
        ]);
        let cols = ProduceRows::new(std::slice::from_ref(&b)).unwrap();
        let chunks = cols.plan(4, 2, 1 << 20, 1 << 20).unwrap();
        for c in &chunks {
            for &(_, r) in &c.rows {
                match &keys[r as usize] {
                    Some(k) => assert_eq!(
                        c.partition,
                        (crate::hash::murmur2(k.as_bytes()) & 0x7fff_ffff) % 4
                    ),
                    None => assert_eq!(c.partition, 2),
                }
            }
        }
        assert_eq!(chunks.iter().map(|c| c.rows.len()).sum::<usize>(), 200);
        // A second batch's rows join the first's batches.
        let two = ProduceRows::new(&[b.slice(0, 100), b.slice(100, 100)]).unwrap();
        let joined = two.plan(4, 2, 1 << 20, 1 << 20).unwrap();
        assert_eq!(joined.len(), chunks.len());
        // Small batches: the unkeyed rows move on to the next partition as each fills.
        let chunks = cols.plan(4, 2, 1000, 1 << 20).unwrap();
        assert!(chunks.iter().all(|c| c.size <= 1000));
        assert!(chunks.iter().filter(|c| c.partition == 3).count() > 0);
    }

    #[test]
    fn a_hostile_partition_count_costs_only_the_partitions_used() {
        let b = batch(vec![(
            "value",
            Arc::new(BinaryArray::from(vec![Some(&b"a"[..]); 3])) as ArrayRef,
        )]);
        let cols = ProduceRows::new(std::slice::from_ref(&b)).unwrap();
        let chunks = cols.plan(u32::MAX, 7, 1 << 20, 1 << 20).unwrap();
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].partition, chunks[0].rows.len()), (7, 3));
    }

    #[test]
    fn errors_name_the_column_or_the_row() {
        let b = batch(vec![(
            "value",
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
        )]);
        let err = ProduceRows::new(&[b]).unwrap_err();
        assert!(matches!(err, ArrowInputError::Column { ref column, .. } if column == "value"));

        let b = batch(vec![
            (
                "value",
                Arc::new(BinaryArray::from(vec![Some(&b"a"[..]); 3])) as ArrayRef,
            ),
            (
                "partition",
                Arc::new(Int32Array::from(vec![Some(0), None, Some(-1)])),
            ),
        ]);
        let err = ProduceRows::new(&[b.slice(0, 1), b.clone()])
            .unwrap()
            .plan(2, 0, 1000, 1000)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "row 3: partition -1 is not one of the topic's 0..2"
        );

        let big = vec![0u8; 2000];
        let b = batch(vec![(
            "value",
            Arc::new(BinaryArray::from(vec![Some(&b"a"[..]), Some(&big[..])])) as ArrayRef,
        )]);
        let err = ProduceRows::new(&[b])
            .unwrap()
            .plan(1, 0, 1000, 1000)
            .unwrap_err();
        assert!(matches!(
            err,
            ArrowInputError::TooLarge {
                row: 1,
                max: 1000,
                ..
            }
        ));
    }
}
