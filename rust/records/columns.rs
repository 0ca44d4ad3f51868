//! The consumer's Arrow output ("columns", as `decode_columns` in Python): decoded records as
//! one Arrow record batch whose schema is exactly Spark's Kafka source schema:
//! `key binary, value binary, topic string, partition int32, offset int64,
//! timestamp timestamp[us, UTC], timestampType int32,
//! headers list<struct<key string, value binary>>`, every field nullable.
//!
//! [`decode_columns`] parses the batches straight into the column buffers (one pass): each
//! key, value and header byte is copied once, from the fetched (or decompressed) batch into the
//! Arrow buffer; the buffers are then handed over as they are (Arrow C data interface).

use std::sync::{Arc, OnceLock};

use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use super::batch::{
    decode_into, BatchStart, DecodeOptions, DecodeSummary, DecodedRecords, RecordFields,
    RecordSink, Slot,
};
use super::error::RecordsError;

/// Spark's name for a list's item field (`ArrowUtils.toArrowField`).
const LIST_ITEM: &str = "element";

fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new("key", DataType::Utf8, true),
        Field::new("value", DataType::Binary, true),
    ])
}

fn headers_item() -> Arc<Field> {
    Arc::new(Field::new(
        LIST_ITEM,
        DataType::Struct(header_fields()),
        true,
    ))
}

/// The columns' schema: Spark's Kafka source schema, as Arrow.
pub fn columns_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            Arc::new(Schema::new(vec![
                Field::new("key", DataType::Binary, true),
                Field::new("value", DataType::Binary, true),
                Field::new("topic", DataType::Utf8, true),
                Field::new("partition", DataType::Int32, true),
                Field::new("offset", DataType::Int64, true),
                Field::new(
                    "timestamp",
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    true,
                ),
                Field::new("timestampType", DataType::Int32, true),
                Field::new("headers", DataType::List(headers_item()), true),
            ]))
        })
        .clone()
}

const TOO_LARGE: &str = "a binary column of one fetch exceeds 2 GiB; lower fetch sizes";

fn too_large() -> ArrowError {
    ArrowError::InvalidArgumentError(TOO_LARGE.into())
}

/// Offsets, bytes and validity of a nullable binary column, filled in one pass. The validity
/// bitmap is only built once a null arrives (most columns have none). Offsets are written as
/// `data.len() as i32`: the arrays are only made if the data stayed within 2 GiB, so every
/// offset written was exact.
struct BinaryColumn {
    offsets: Vec<i32>,
    data: Vec<u8>,
    valid: Option<BooleanBufferBuilder>,
}

impl BinaryColumn {
    fn with_capacity(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        BinaryColumn {
            offsets,
            data: Vec::with_capacity(bytes),
            valid: None,
        }
    }

    fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    #[inline(always)]
    fn push(&mut self, bytes: Option<&[u8]>) {
        match bytes {
            Some(b) => {
                self.data.extend_from_slice(b);
                if let Some(valid) = &mut self.valid {
                    valid.append(true);
                }
            }
            None => self.push_null(),
        }
        self.offsets.push(self.data.len() as i32);
    }

    /// The validity bit of a null (the bitmap is made at the first one).
    #[cold]
    fn push_null(&mut self) {
        let before = self.rows();
        let capacity = self.offsets.capacity().max(before + 2);
        self.valid
            .get_or_insert_with(|| {
                let mut v = BooleanBufferBuilder::new(capacity);
                v.append_n(before, true);
                v
            })
            .append(false);
    }

    fn parts(mut self) -> Result<(OffsetBuffer<i32>, Buffer, Option<NullBuffer>), ArrowError> {
        if i32::try_from(self.data.len()).is_err() {
            return Err(too_large());
        }
        // Room reserved ahead and not used is given back (in place unless most is unused).
        self.data.shrink_to_fit();
        self.offsets.shrink_to_fit();
        // SAFETY: the offsets start at 0 and each is the data's length when it was written,
        // which only grows and (checked above) never passed i32::MAX: they are non-negative,
        // monotonic, and the last is the data's length.
        let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(self.offsets)) };
        let nulls = self.valid.map(|mut v| NullBuffer::new(v.finish()));
        Ok((offsets, Buffer::from_vec(self.data), nulls))
    }

    fn binary(self) -> Result<BinaryArray, ArrowError> {
        let (offsets, data, nulls) = self.parts()?;
        // SAFETY: `parts` gives offsets valid for the data; binary values need nothing else.
        Ok(unsafe { BinaryArray::new_unchecked(offsets, data, nulls) })
    }
}

/// A non-null string column: only `&str` goes in, so the bytes are UTF-8 at every offset and
/// the array is made without validating them again.
struct StringColumn(BinaryColumn);

impl StringColumn {
    #[inline(always)]
    fn push(&mut self, s: &str) {
        self.0.push(Some(s.as_bytes()));
    }

    fn utf8(self) -> Result<StringArray, ArrowError> {
        let (offsets, data, nulls) = self.0.parts()?;
        // SAFETY: valid offsets (`parts`), and each value between two offsets was a `&str`.
        Ok(unsafe { StringArray::new_unchecked(offsets, data, nulls) })
    }
}

/// `rows` copies of the topic name.
fn topic_column(topic: &str, rows: usize) -> Result<StringArray, ArrowError> {
    let total = topic.len().saturating_mul(rows);
    if i32::try_from(total).is_err() || i32::try_from(rows).is_err() {
        return Err(too_large());
    }
    let step = topic.len() as i32;
    let offsets: Vec<i32> = (0..=rows as i32).map(|i| i * step).collect();
    // SAFETY: 0, step, 2 step... up to `total` (checked to fit i32) are monotonic offsets into
    // `rows` copies of a `&str`.
    Ok(unsafe {
        StringArray::new_unchecked(
            OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)),
            Buffer::from_vec(topic.as_bytes().repeat(rows)),
            None,
        )
    })
}

/// The columns filled record by record: the Arrow sink of the decoder (see
/// [`decode_columns`]), and what [`to_columns`] fills from decoded slots. Each key,
/// value and header byte is copied once, from the fetched (or decompressed) batch into the
/// Arrow buffer.
pub struct ColumnsSink {
    keys: BinaryColumn,
    values: BinaryColumn,
    offsets: Vec<i64>,
    /// Microseconds.
    timestamps: Vec<i64>,
    timestamp_types: Vec<i32>,
    /// The headers list's offsets; None while no record had a header (every list is empty).
    header_starts: Option<Vec<i32>>,
    header_keys: StringColumn,
    header_values: BinaryColumn,
    /// The timestamp type of the batch being read (sink).
    batch_timestamp_type: i32,
    /// Bytes of the batches read so far (sink): their share of key and value bytes predicts
    /// the next batch's.
    data_seen: usize,
    /// The last batch's decompression buffer, for the next one (sink).
    decompressed: Vec<u8>,
}

impl Default for ColumnsSink {
    fn default() -> Self {
        ColumnsSink::with_capacity(0, 0, 0, 0)
    }
}

impl ColumnsSink {
    fn with_capacity(rows: usize, key_bytes: usize, value_bytes: usize, headers: usize) -> Self {
        ColumnsSink {
            keys: BinaryColumn::with_capacity(rows, key_bytes),
            values: BinaryColumn::with_capacity(rows, value_bytes),
            offsets: Vec::with_capacity(rows),
            timestamps: Vec::with_capacity(rows),
            timestamp_types: Vec::with_capacity(rows),
            header_starts: None,
            header_keys: StringColumn(BinaryColumn::with_capacity(headers, 0)),
            header_values: BinaryColumn::with_capacity(headers, 0),
            batch_timestamp_type: 0,
            data_seen: 0,
            decompressed: Vec::new(),
        }
    }

    pub fn new() -> Self {
        ColumnsSink::default()
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// A record; its headers follow (`push_header`), then `end_record`. Its timestamp type
    /// is set by `fill_timestamp_types` (once per batch for the sink).
    #[inline(always)]
    pub fn push_record(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        offset: i64,
        timestamp_ms: i64,
    ) {
        self.keys.push(key);
        self.values.push(value);
        self.offsets.push(offset);
        self.timestamps.push(timestamp_ms.saturating_mul(1000));
    }

    /// The records pushed since the last call have timestamp type `t`.
    pub fn fill_timestamp_types(&mut self, t: i32) {
        self.timestamp_types.resize(self.offsets.len(), t);
    }

    #[inline]
    pub fn push_header(&mut self, key: &str, value: Option<&[u8]>) {
        if self.header_starts.is_none() {
            // Every record before this one has no headers: its list ends at 0.
            self.header_starts = Some(vec![0; self.offsets.len()]);
        }
        self.header_keys.push(key);
        self.header_values.push(value);
    }

    #[inline(always)]
    pub fn end_record(&mut self) {
        if let Some(starts) = &mut self.header_starts {
            starts.push(self.header_values.rows() as i32);
        }
    }

    /// The columns' record batch of the records pushed.
    pub fn finish(mut self, topic: &str, partition: i32) -> Result<RecordBatch, ArrowError> {
        let rows = self.offsets.len();
        self.offsets.shrink_to_fit();
        self.timestamps.shrink_to_fit();
        self.timestamp_types.shrink_to_fit();
        let header_rows = self.header_values.rows();
        let header_structs = StructArray::try_new(
            header_fields(),
            vec![
                Arc::new(self.header_keys.utf8()?) as ArrayRef,
                Arc::new(self.header_values.binary()?),
            ],
            None,
        )?;
        // A record without headers has a null list, not an empty one (as Spark's source).
        let (list_offsets, has_headers) = match self.header_starts {
            None => (OffsetBuffer::new_zeroed(rows), NullBuffer::new_null(rows)),
            Some(starts) => {
                if i32::try_from(header_rows).is_err() {
                    return Err(too_large());
                }
                debug_assert_eq!(starts.len(), rows + 1);
                let mut valid = BooleanBufferBuilder::new(rows);
                for pair in starts.windows(2) {
                    valid.append(pair[1] > pair[0]);
                }
                // SAFETY: 0 (or 0s) then the header count after each record, which only grows
                // and (checked above) fits i32: non-negative and monotonic.
                let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(starts)) };
                (offsets, NullBuffer::new(valid.finish()))
            }
        };
        let headers = ListArray::try_new(
            headers_item(),
            list_offsets,
            Arc::new(header_structs),
            Some(has_headers),
        )?;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.keys.binary()?),
            Arc::new(self.values.binary()?),
            Arc::new(topic_column(topic, rows)?),
            Arc::new(Int32Array::new(
                ScalarBuffer::from(vec![partition; rows]),
                None,
            )),
            Arc::new(Int64Array::new(ScalarBuffer::from(self.offsets), None)),
            Arc::new(
                TimestampMicrosecondArray::new(ScalarBuffer::from(self.timestamps), None)
                    .with_timezone("UTC"),
            ),
            Arc::new(Int32Array::new(
                ScalarBuffer::from(self.timestamp_types),
                None,
            )),
            Arc::new(headers),
        ];
        debug_assert!(columns.iter().all(|c| c.len() == rows));
        RecordBatch::try_new(columns_schema(), columns)
    }
}

/// The most room reserved ahead of the records of one batch, in bytes per column: beyond it
/// columns grow as vectors do (a hint read off the wire is never trusted for much memory).
const MAX_RESERVE_AHEAD: usize = 64 << 20;

/// Room for `now` more items (this batch's), and if that needs a reallocation, room for
/// `expect` (the rest of the input's), by half the length at least: one reallocation for
/// the whole input when it is like its first batch, a geometric series when it is not.
fn make_room<T>(v: &mut Vec<T>, now: usize, expect: usize) {
    if v.capacity() - v.len() < now {
        let ahead = expect.min(MAX_RESERVE_AHEAD / std::mem::size_of::<T>().max(1));
        v.reserve_exact(now.max(ahead).max(v.len() / 2));
    }
}

impl ColumnsSink {
    /// Room for one batch's keys or values: `column` of the bytes so far (or all of them for
    /// the first batch), a little more.
    fn bytes_room(column: &mut Vec<u8>, seen: usize, batch: &BatchStart<'_>) {
        let now = if seen == 0 {
            batch.data.len()
        } else {
            let share = column.len() as u128 * batch.data.len() as u128 / seen as u128;
            (share as usize + share as usize / 8 + 64).min(batch.data.len())
        };
        make_room(column, now, batch.scaled_to_input(now));
    }
}

impl RecordSink for ColumnsSink {
    fn begin_batch(&mut self, batch: &BatchStart<'_>) {
        self.batch_timestamp_type = i32::from(batch.header.timestamp_type());
        let rows = batch.max_records;
        let expect = batch.scaled_to_input(rows);
        make_room(&mut self.offsets, rows, expect);
        make_room(&mut self.timestamps, rows, expect);
        make_room(&mut self.timestamp_types, rows, expect);
        make_room(&mut self.keys.offsets, rows, expect);
        make_room(&mut self.values.offsets, rows, expect);
        Self::bytes_room(&mut self.keys.data, self.data_seen, batch);
        Self::bytes_room(&mut self.values.data, self.data_seen, batch);
        self.data_seen += batch.data.len();
    }

    #[inline(always)]
    fn record(&mut self, r: RecordFields<'_>) {
        self.push_record(r.key, r.value, r.offset, r.timestamp);
    }

    #[inline]
    fn header(&mut self, key: &str, value: Option<&[u8]>) {
        self.push_header(key, value);
    }

    #[inline(always)]
    fn end_record(&mut self) {
        ColumnsSink::end_record(self);
    }

    fn end_batch(&mut self, owned: Option<Vec<u8>>) {
        // One type per batch: filled here rather than pushed per record.
        self.fill_timestamp_types(self.batch_timestamp_type);
        // The records are copied out: the next compressed batch decompresses into the same
        // memory (not allocated and zero-filled again).
        if let Some(buffer) = owned {
            self.decompressed = buffer;
        }
    }

    fn decompression_buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.decompressed)
    }
}

/// Why [`decode_columns`] failed: the records are bad, or the columns cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ColumnsError {
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

/// Decode one partition's records bytes straight into the columns' record batch, in one
/// pass (no slots): the batch-level work is `decode_into`'s, as for `decode_records`.
pub fn decode_columns(
    input: &[u8],
    opts: &DecodeOptions,
    topic: &str,
    partition: i32,
) -> Result<(RecordBatch, DecodeSummary), ColumnsError> {
    let mut columns = ColumnsSink::new();
    let summary = decode_into(input, opts, &mut columns)?;
    Ok((columns.finish(topic, partition)?, summary))
}

fn slot_len(s: &Option<Slot>) -> usize {
    s.map_or(0, |s| s.len as usize)
}

/// Build the columns' record batch of one partition's decoded records.
/// `input` is the records bytes that `decoded` came from.
pub fn to_columns(
    decoded: &DecodedRecords,
    input: &[u8],
    topic: &str,
    partition: i32,
) -> Result<RecordBatch, ArrowError> {
    let get = |s: Option<Slot>| s.map(|s| decoded.bytes(input, s));
    let mut columns = ColumnsSink::with_capacity(
        decoded.len(),
        decoded.keys.iter().map(slot_len).sum(),
        decoded.values.iter().map(slot_len).sum(),
        decoded.headers.len(),
    );
    for i in 0..decoded.len() {
        columns.push_record(
            get(decoded.keys[i]),
            get(decoded.values[i]),
            decoded.offsets[i],
            decoded.timestamps[i],
        );
        columns.fill_timestamp_types(i32::from(decoded.timestamp_types[i]));
        for h in &decoded.headers[decoded.header_range(i)] {
            let key = std::str::from_utf8(decoded.bytes(input, h.key))
                .map_err(|e| ArrowError::InvalidArgumentError(format!("header key: {e}")))?;
            columns.push_header(key, get(h.value));
        }
        columns.end_record();
    }
    columns.finish(topic, partition)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{build_batch, decode_records, BatchOptions, Codec, DecodeOptions, Record};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type, TimestampMicrosecondType};

    fn record(ts: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Record {
        Record {
            timestamp: ts,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            headers: vec![],
        }
    }

    #[test]
    fn columns_match_records_for_every_codec() {
        for codec in Codec::ALL {
            let mut recs = vec![
                record(1_000, Some(b"k0"), Some(b"v0")),
                record(2_000, None, Some(b"")),
                record(3_000, Some(b""), None),
            ];
            recs[0].headers = vec![("a".into(), Some(b"1".to_vec())), ("b".into(), None)];
            let opts = BatchOptions {
                base_offset: 40,
                codec,
                ..Default::default()
            };
            let raw = build_batch(&recs, &opts).unwrap();
            let d = decode_records(&raw, &DecodeOptions::default()).unwrap();
            let rb = to_columns(&d, &raw, "t", 7).unwrap();
            assert_eq!(rb.schema(), columns_schema());
            assert_eq!(rb.num_rows(), 3);
            let keys = rb.column(0).as_binary::<i32>();
            assert_eq!(keys.value(0), b"k0");
            assert!(keys.is_null(1));
            assert!(keys.is_valid(2) && keys.value(2).is_empty());
            let values = rb.column(1).as_binary::<i32>();
            assert!(values.is_valid(1) && values.value(1).is_empty());
            assert!(values.is_null(2));
            assert_eq!(rb.column(2).as_string::<i32>().value(2), "t");
            assert_eq!(rb.column(3).as_primitive::<Int32Type>().value(1), 7);
            let offsets = rb.column(4).as_primitive::<Int64Type>();
            assert_eq!(offsets.values().to_vec(), vec![40, 41, 42], "{codec:?}");
            let ts = rb.column(5).as_primitive::<TimestampMicrosecondType>();
            assert_eq!(ts.value(2), 3_000_000);
            let headers = rb.column(7).as_list::<i32>();
            assert_eq!(headers.value_length(0), 2);
            assert_eq!(headers.value_length(1), 0);
            assert!(
                headers.is_valid(0) && headers.is_null(1),
                "no headers: null, not []"
            );
            let first = headers.value(0);
            let h = first.as_struct();
            assert_eq!(h.column(0).as_string::<i32>().value(1), "b");
            assert!(h.column(1).as_binary::<i32>().is_null(1));
            assert_eq!(h.column(1).as_binary::<i32>().value(0), b"1");
        }
    }

    #[test]
    fn validity_is_built_from_the_first_null_on() {
        let pattern: Vec<Option<&[u8]>> =
            vec![Some(b"a"), Some(b"bb"), None, Some(b""), None, Some(b"c")];
        let mut col = BinaryColumn::with_capacity(2, 0); // capacities are only hints
        for p in &pattern {
            col.push(*p);
        }
        let arr = col.binary().unwrap();
        assert_eq!(arr.len(), pattern.len());
        for (i, p) in pattern.iter().enumerate() {
            assert_eq!(arr.is_valid(i), p.is_some(), "row {i}");
            if let Some(b) = p {
                assert_eq!(arr.value(i), *b);
            }
        }
        let all = BinaryColumn::with_capacity(1, 1);
        assert_eq!(all.binary().unwrap().null_count(), 0);
        let topics = topic_column("topic", 3).unwrap();
        assert_eq!(topics.iter().collect::<Vec<_>>(), vec![Some("topic"); 3]);
        assert!(topic_column("", 0).unwrap().is_empty());
    }

    #[test]
    fn empty_input_gives_an_empty_batch_with_the_schema() {
        let d = decode_records(&[], &DecodeOptions::default()).unwrap();
        let rb = to_columns(&d, &[], "t", 0).unwrap();
        assert_eq!(rb.num_rows(), 0);
        assert_eq!(rb.num_columns(), 8);
    }
}
