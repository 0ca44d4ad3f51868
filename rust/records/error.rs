//! Errors of record-batch decoding. Each says what is wrong and where (the batch's base offset
//! and the byte position within the partition's records).

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordsError {
    #[error("batch at offset {base_offset} (byte {position}): magic {magic} is a legacy message set, which ferrokafka does not read (Kafka 4.x stores only magic 2)")]
    LegacyMagic {
        base_offset: i64,
        position: usize,
        magic: i8,
    },
    #[error("batch at offset {base_offset} (byte {position}): unknown magic {magic}")]
    UnknownMagic {
        base_offset: i64,
        position: usize,
        magic: i8,
    },
    #[error("batch at offset {base_offset} (byte {position}): CRC-32C mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    CrcMismatch {
        base_offset: i64,
        position: usize,
        stored: u32,
        computed: u32,
    },
    #[error("batch at offset {base_offset} (byte {position}): batch length {length} is below the 49-byte header")]
    BatchTooShort {
        base_offset: i64,
        position: usize,
        length: i32,
    },
    #[error("batch at offset {base_offset}: unknown compression codec {codec}")]
    UnknownCodec { base_offset: i64, codec: u8 },
    #[error("batch at offset {base_offset}: {codec} decompression failed: {reason}")]
    Decompression {
        base_offset: i64,
        codec: &'static str,
        reason: String,
    },
    #[error("batch at offset {base_offset}: {codec} data expands past the {limit}-byte limit")]
    DecompressedTooLarge {
        base_offset: i64,
        codec: &'static str,
        limit: usize,
    },
    #[error("batch at offset {base_offset}, record {index}: {what}")]
    CorruptRecord {
        base_offset: i64,
        index: usize,
        what: String,
    },
    #[error("batch at offset {base_offset}: {count} records cannot fit in {bytes} bytes")]
    HostileRecordCount {
        base_offset: i64,
        count: i64,
        bytes: usize,
    },
    #[error(
        "batch at offset {base_offset}: {count} unexpected trailing bytes after the last record"
    )]
    TrailingBytes { base_offset: i64, count: usize },
    #[error("cannot encode batch: {0}")]
    Unencodable(String),
}

impl RecordsError {
    /// The base offset of the batch the error is in (None for encoding errors).
    pub fn base_offset(&self) -> Option<i64> {
        match self {
            RecordsError::LegacyMagic { base_offset, .. }
            | RecordsError::UnknownMagic { base_offset, .. }
            | RecordsError::CrcMismatch { base_offset, .. }
            | RecordsError::BatchTooShort { base_offset, .. }
            | RecordsError::UnknownCodec { base_offset, .. }
            | RecordsError::Decompression { base_offset, .. }
            | RecordsError::DecompressedTooLarge { base_offset, .. }
            | RecordsError::CorruptRecord { base_offset, .. }
            | RecordsError::HostileRecordCount { base_offset, .. }
            | RecordsError::TrailingBytes { base_offset, .. } => Some(*base_offset),
            RecordsError::Unencodable(_) => None,
        }
    }
}

pub type Result<T, E = RecordsError> = std::result::Result<T, E>;
