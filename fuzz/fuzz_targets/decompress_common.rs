//! Shared by the decompress_* targets (each includes it with `#[path]`): hostile input never
//! yields more than the limit, the limit is exact, and what the codec compresses comes back
//! unchanged.
use _native::records::compression::{compress, decompress};
use _native::records::Codec;

const LIMIT: usize = 1 << 20;

pub fn check(codec: Codec, data: &[u8]) {
    let name = codec.name();
    if let Ok(out) = decompress(codec, data, LIMIT, 0) {
        assert!(out.len() <= LIMIT, "{name}: output beyond the limit");
        // The limit is inclusive and exact: the same output at limit = its length, an error
        // one byte below.
        let exact = decompress(codec, data, out.len(), 0);
        assert_eq!(
            exact.as_ref().ok(),
            Some(&out),
            "{name}: limit = output length"
        );
        if !out.is_empty() {
            assert!(
                decompress(codec, data, out.len() - 1, 0).is_err(),
                "{name}: output above the limit accepted"
            );
        }
    }
    let packed = compress(codec, data).expect("compress");
    let back = decompress(codec, &packed, LIMIT.max(data.len()), 0).expect("round trip");
    assert_eq!(back, data, "{name}: round trip");
}
