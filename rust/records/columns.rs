//! Decoded records as one Arrow record batch in exactly Spark's Kafka source schema:
//! `key binary, value binary, topic string, partition int32, offset int64,
//! timestamp timestamp[us, UTC], timestampType int32,
//! headers list<struct<key string, value binary>>`, every field nullable.
//!
//! Each value byte is copied once, from the fetched (or decompressed) batch into the Arrow
//! buffer; the buffers are then handed over as they are (Arrow C data interface).

use std::sync::{Arc, OnceLock};

use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use super::batch::{DecodedRecords, Slot};

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

/// The schema of Spark's Kafka source, as Arrow.
pub fn spark_schema() -> SchemaRef {
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

/// Offsets, bytes and validity of a nullable binary column, filled in one pass. The validity
/// bitmap is only built once a null arrives (most columns have none).
struct BinaryColumn {
    offsets: Vec<i32>,
    data: Vec<u8>,
    valid: Option<BooleanBufferBuilder>,
    rows: usize,
}

const TOO_LARGE: &str = "a binary column of one fetch exceeds 2 GiB; lower fetch sizes";

impl BinaryColumn {
    fn with_capacity(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        BinaryColumn {
            offsets,
            data: Vec::with_capacity(bytes),
            valid: None,
            rows,
        }
    }

    #[inline]
    fn push(&mut self, bytes: Option<&[u8]>) -> Result<(), ArrowError> {
        match bytes {
            Some(b) => {
                self.data.extend_from_slice(b);
                if let Some(valid) = &mut self.valid {
                    valid.append(true);
                }
            }
            None => {
                let before = self.offsets.len() - 1;
                let rows = self.rows;
                let valid = self.valid.get_or_insert_with(|| {
                    let mut v = BooleanBufferBuilder::new(rows.max(before + 1));
                    v.append_n(before, true);
                    v
                });
                valid.append(false);
            }
        }
        let end = i32::try_from(self.data.len())
            .map_err(|_| ArrowError::InvalidArgumentError(TOO_LARGE.into()))?;
        self.offsets.push(end);
        Ok(())
    }

    /// `rows` copies of the same bytes (the topic column).
    fn repeated(value: &[u8], rows: usize) -> Result<Self, ArrowError> {
        let total = value.len().saturating_mul(rows);
        if i32::try_from(total).is_err() {
            return Err(ArrowError::InvalidArgumentError(TOO_LARGE.into()));
        }
        let step = value.len() as i32;
        Ok(BinaryColumn {
            offsets: (0..=rows as i32).map(|i| i * step).collect(),
            data: value.repeat(rows),
            valid: None,
            rows,
        })
    }

    fn parts(self) -> (OffsetBuffer<i32>, Buffer, Option<NullBuffer>) {
        let nulls = self.valid.map(|mut v| NullBuffer::new(v.finish()));
        (
            OffsetBuffer::new(ScalarBuffer::from(self.offsets)),
            Buffer::from_vec(self.data),
            nulls,
        )
    }

    fn binary(self) -> Result<BinaryArray, ArrowError> {
        let (offsets, data, nulls) = self.parts();
        BinaryArray::try_new(offsets, data, nulls)
    }

    fn utf8(self) -> Result<StringArray, ArrowError> {
        let (offsets, data, nulls) = self.parts();
        StringArray::try_new(offsets, data, nulls)
    }
}

fn slot_len(s: &Option<Slot>) -> usize {
    s.map_or(0, |s| s.len as usize)
}

/// Build the Spark-schema record batch of one partition's decoded records.
/// `input` is the records bytes that `decoded` came from.
pub fn to_spark_batch(
    decoded: &DecodedRecords,
    input: &[u8],
    topic: &str,
    partition: i32,
) -> Result<RecordBatch, ArrowError> {
    let rows = decoded.len();
    let get = |s: Option<Slot>| s.map(|s| decoded.bytes(input, s));

    let key_bytes = decoded.keys.iter().map(slot_len).sum();
    let mut keys = BinaryColumn::with_capacity(rows, key_bytes);
    for k in &decoded.keys {
        keys.push(get(*k))?;
    }
    let value_bytes = decoded.values.iter().map(slot_len).sum();
    let mut values = BinaryColumn::with_capacity(rows, value_bytes);
    for v in &decoded.values {
        values.push(get(*v))?;
    }

    let topics = BinaryColumn::repeated(topic.as_bytes(), rows)?;

    let n_headers = decoded.headers.len();
    let mut h_keys = BinaryColumn::with_capacity(n_headers, 0);
    let mut h_values = BinaryColumn::with_capacity(n_headers, 0);
    for h in &decoded.headers {
        h_keys.push(Some(decoded.bytes(input, h.key)))?;
        h_values.push(get(h.value))?;
    }
    let header_structs = StructArray::try_new(
        header_fields(),
        vec![
            Arc::new(h_keys.utf8()?) as ArrayRef,
            Arc::new(h_values.binary()?),
        ],
        None,
    )?;
    let list_offsets: Vec<i32> = decoded
        .header_starts
        .iter()
        .map(|&s| i32::try_from(s).unwrap_or(i32::MAX))
        .collect();
    let headers = ListArray::try_new(
        headers_item(),
        OffsetBuffer::new(ScalarBuffer::from(list_offsets)),
        Arc::new(header_structs),
        None,
    )?;

    let timestamps: Vec<i64> = decoded
        .timestamps
        .iter()
        .map(|ms| ms.saturating_mul(1000))
        .collect();
    let ts_types: Vec<i32> = decoded
        .timestamp_types
        .iter()
        .map(|&t| i32::from(t))
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(keys.binary()?),
        Arc::new(values.binary()?),
        Arc::new(topics.utf8()?),
        Arc::new(Int32Array::new(
            ScalarBuffer::from(vec![partition; rows]),
            None,
        )),
        Arc::new(Int64Array::new(
            ScalarBuffer::from(decoded.offsets.clone()),
            None,
        )),
        Arc::new(
            TimestampMicrosecondArray::new(ScalarBuffer::from(timestamps), None)
                .with_timezone("UTC"),
        ),
        Arc::new(Int32Array::new(ScalarBuffer::from(ts_types), None)),
        Arc::new(headers),
    ];
    debug_assert!(columns.iter().all(|c| c.len() == rows));
    RecordBatch::try_new(spark_schema(), columns)
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
        for codec in [
            Codec::None,
            Codec::Gzip,
            Codec::Snappy,
            Codec::Lz4,
            Codec::Zstd,
        ] {
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
            let rb = to_spark_batch(&d, &raw, "t", 7).unwrap();
            assert_eq!(rb.schema(), spark_schema());
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
            col.push(*p).unwrap();
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
        let topics = BinaryColumn::repeated(b"topic", 3).unwrap().utf8().unwrap();
        assert_eq!(topics.iter().collect::<Vec<_>>(), vec![Some("topic"); 3]);
        assert!(BinaryColumn::repeated(b"", 0)
            .unwrap()
            .utf8()
            .unwrap()
            .is_empty());
    }

    #[test]
    fn empty_input_gives_an_empty_batch_with_the_schema() {
        let d = decode_records(&[], &DecodeOptions::default()).unwrap();
        let rb = to_spark_batch(&d, &[], "t", 0).unwrap();
        assert_eq!(rb.num_rows(), 0);
        assert_eq!(rb.num_columns(), 8);
    }
}
