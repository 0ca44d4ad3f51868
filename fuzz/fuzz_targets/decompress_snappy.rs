#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "decompress_common.rs"]
mod common;

fuzz_target!(|data: &[u8]| common::check(_native::records::Codec::Snappy, data));
