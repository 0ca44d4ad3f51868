//! Record batches (magic v2): decoding with CRC-32C checks, the four codecs, control records and
//! read_committed filtering, and encoding for the producer. Sans-I/O like the protocol core.

pub mod acquired;
pub mod arrow_ffi;
pub mod arrow_input;
pub mod batch;
pub mod builder;
pub mod columns;
pub mod compression;
pub mod error;
pub mod position;
pub mod sizes;

pub use batch::{
    batch_last_offsets, batch_position, decode_into, decode_records, decode_records_taking,
    records_end, BatchData, BatchHeader, BatchStart, DecodeOptions, DecodeSummary, DecodedRecords,
    HeaderSlot, RecordFields, RecordSink, Slot, TakeBatch,
};
pub use builder::{
    build_batch, build_control_batch, finish_batch, BatchOptions, Record, RecordsWriter,
};
pub use columns::{columns_schema, decode_columns, to_columns, ColumnsError, ColumnsSink};
pub use compression::Codec;
pub use error::RecordsError;

#[cfg(test)]
mod corpus_replay;
#[cfg(test)]
mod sink_tests;
#[cfg(test)]
mod tests;
