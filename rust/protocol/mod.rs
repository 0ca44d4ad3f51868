//! The sans-I/O Kafka protocol codec: primitives, headers, framing, error codes and messages.

pub mod codec;
pub mod error;
pub mod error_code;
pub mod frame;
pub mod header;
pub mod messages;
