//! Primitive wire codecs: a bounds-checked [`Reader`], writer helpers, and the [`Wire`] trait
//! implemented for every field type Kafka messages use.
//!
//! Every length and count read from the wire is hostile: it is checked against the bytes that
//! are actually present before anything is allocated.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_bytes::ByteBuf;

use super::error::{DecodeError, Result};

/// How a value is laid out: the message version, and whether that version is "flexible"
/// (compact strings/arrays and tagged fields, KIP-482).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub version: i16,
    pub flexible: bool,
}

impl Version {
    pub fn new(version: i16, flexible: bool) -> Self {
        Version { version, flexible }
    }
}

/// A cursor over a byte slice that never reads past its end.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The unread rest of the buffer (without consuming it).
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                offset: self.pos,
                needed: n,
                remaining: self.remaining(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let bytes = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub fn i8(&mut self) -> Result<i8> {
        Ok(i8::from_be_bytes(self.array("int8")?))
    }
    pub fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_be_bytes(self.array("int16")?))
    }
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array("uint16")?))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array("int32")?))
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array("uint32")?))
    }
    pub fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array("int64")?))
    }
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_be_bytes(self.array("float64")?))
    }

    /// Unsigned LEB128 varint of at most 5 bytes (Kafka's `UNSIGNED_VARINT`).
    pub fn unsigned_varint(&mut self) -> Result<u32> {
        let v = self.unsigned_varlong_max(5)?;
        u32::try_from(v).map_err(|_| DecodeError::VarintTooLong {
            offset: self.pos,
            max_bytes: 5,
        })
    }

    /// Unsigned LEB128 varlong of at most 10 bytes.
    pub fn unsigned_varlong(&mut self) -> Result<u64> {
        self.unsigned_varlong_max(10)
    }

    #[inline]
    fn unsigned_varlong_max(&mut self, max_bytes: usize) -> Result<u64> {
        // Most varints of a record (lengths, deltas) are one byte.
        if let Some(&b) = self.buf.get(self.pos) {
            if b & 0x80 == 0 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..max_bytes {
            // A match, not `ok_or`, which would build the error value for every byte: that
            // showed in a fetch's profile (benches/README.md, *Consuming from a local broker*).
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(DecodeError::Truncated {
                    what: "varint",
                    offset: self.pos,
                    needed: 1,
                    remaining: 0,
                });
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::VarintTooLong {
            offset: start,
            max_bytes,
        })
    }

    /// Zig-zag signed varint (record fields).
    pub fn varint(&mut self) -> Result<i32> {
        let v = self.unsigned_varint()?;
        Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    /// Zig-zag signed varlong (record fields).
    pub fn varlong(&mut self) -> Result<i64> {
        let v = self.unsigned_varlong()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A length prefix: int16 (strings) / int32 (bytes, arrays) in classic versions, an unsigned
    /// varint holding N+1 in flexible ones. `None` is the null marker. The length is checked
    /// against the remaining bytes (times the minimum element size) before it is returned.
    pub fn length(
        &mut self,
        v: Version,
        wide: bool,
        min_elem: usize,
        what: &'static str,
    ) -> Result<Option<usize>> {
        let offset = self.pos;
        let raw: i64 = if v.flexible {
            i64::from(self.unsigned_varint()?) - 1
        } else if wide {
            i64::from(self.i32()?)
        } else {
            i64::from(self.i16()?)
        };
        if raw == -1 {
            return Ok(None);
        }
        if raw < -1 {
            return Err(DecodeError::InvalidLength {
                what,
                offset,
                length: raw,
            });
        }
        let n = raw as usize;
        if n.saturating_mul(min_elem) > self.remaining() {
            return Err(DecodeError::HostileCount {
                what,
                offset,
                count: n,
                remaining: self.remaining(),
            });
        }
        Ok(Some(n))
    }

    /// Read the tagged-field section, handing each (tag, payload) to `f`; unknown tags are for
    /// `f` to ignore.
    pub fn tagged_fields(&mut self, mut f: impl FnMut(u32, &'a [u8]) -> Result<()>) -> Result<()> {
        let offset = self.pos;
        let count = self.unsigned_varint()? as usize;
        if count > self.remaining() {
            return Err(DecodeError::HostileCount {
                what: "tagged fields",
                offset,
                count,
                remaining: self.remaining(),
            });
        }
        for _ in 0..count {
            let tag = self.unsigned_varint()?;
            let size = self.unsigned_varint()? as usize;
            let data = self.take(size, "tagged field")?;
            f(tag, data)?;
        }
        Ok(())
    }

    /// Fail unless every byte was consumed.
    pub fn finish(&self, what: &'static str) -> Result<()> {
        if self.remaining() != 0 {
            return Err(DecodeError::TrailingBytes {
                what,
                offset: self.pos,
                count: self.remaining(),
            });
        }
        Ok(())
    }
}

pub fn put_unsigned_varint(w: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        w.push((v as u8) | 0x80);
        v >>= 7;
    }
    w.push(v as u8);
}

pub fn put_varint(w: &mut Vec<u8>, v: i32) {
    put_unsigned_varint(w, u64::from(((v << 1) ^ (v >> 31)) as u32));
}

pub fn put_varlong(w: &mut Vec<u8>, v: i64) {
    put_unsigned_varint(w, ((v << 1) ^ (v >> 63)) as u64);
}

/// Write a length prefix (see [`Reader::length`]); `None` writes the null marker.
pub fn put_length(w: &mut Vec<u8>, v: Version, wide: bool, len: Option<usize>) {
    match (v.flexible, len) {
        (true, None) => put_unsigned_varint(w, 0),
        (true, Some(n)) => put_unsigned_varint(w, n as u64 + 1),
        (false, None) if wide => w.extend_from_slice(&(-1i32).to_be_bytes()),
        (false, None) => w.extend_from_slice(&(-1i16).to_be_bytes()),
        (false, Some(n)) if wide => w.extend_from_slice(&(n as i32).to_be_bytes()),
        (false, Some(n)) => w.extend_from_slice(&(n as i16).to_be_bytes()),
    }
}

/// Write a tagged-field section from already-encoded `(tag, payload)` pairs (ascending tags).
pub fn put_tagged_fields(w: &mut Vec<u8>, fields: &[(u32, Vec<u8>)]) {
    put_unsigned_varint(w, fields.len() as u64);
    for (tag, data) in fields {
        put_unsigned_varint(w, u64::from(*tag));
        put_unsigned_varint(w, data.len() as u64);
        w.extend_from_slice(data);
    }
}

/// A value with a wire form that depends on the message version.
pub trait Wire: Sized {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self>;
    fn write(&self, w: &mut Vec<u8>, v: Version);
    /// The fewest bytes one value can take on the wire at version `v`: an array's count is
    /// refused when its elements could not fit in the bytes left, so a hostile count cannot
    /// make the decoder reserve (or build) more than the response could hold.
    fn min_size(_v: Version) -> usize {
        1
    }
}

/// The bytes of a length prefix (of a string, bytes or array): a varint of at least one byte
/// in flexible versions, else an int16 (`short`) or int32.
pub fn prefix_size(v: Version, short: bool) -> usize {
    match (v.flexible, short) {
        (true, _) => 1,
        (false, true) => 2,
        (false, false) => 4,
    }
}

macro_rules! fixed_wire {
    ($($ty:ty => $read:ident, $size:expr;)*) => {$(
        impl Wire for $ty {
            fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self> {
                r.$read()
            }
            fn write(&self, w: &mut Vec<u8>, _v: Version) {
                w.extend_from_slice(&self.to_be_bytes());
            }
            fn min_size(_v: Version) -> usize {
                $size
            }
        }
    )*};
}

fixed_wire! {
    i8 => i8, 1;
    i16 => i16, 2;
    u16 => u16, 2;
    i32 => i32, 4;
    u32 => u32, 4;
    i64 => i64, 8;
    f64 => f64, 8;
}

impl Wire for bool {
    fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self> {
        Ok(r.i8()? != 0)
    }
    fn write(&self, w: &mut Vec<u8>, _v: Version) {
        w.push(u8::from(*self));
    }
}

fn read_str(r: &mut Reader<'_>, v: Version) -> Result<Option<String>> {
    let Some(n) = r.length(v, false, 1, "string")? else {
        return Ok(None);
    };
    let offset = r.position();
    let bytes = r.take(n, "string")?;
    std::str::from_utf8(bytes)
        .map(|s| Some(s.to_owned()))
        .map_err(|_| DecodeError::InvalidUtf8 {
            what: "string",
            offset,
        })
}

fn write_str(w: &mut Vec<u8>, v: Version, s: Option<&str>) {
    put_length(w, v, false, s.map(str::len));
    if let Some(s) = s {
        w.extend_from_slice(s.as_bytes());
    }
}

impl Wire for String {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        let offset = r.position();
        read_str(r, v)?.ok_or(DecodeError::UnexpectedNull {
            what: "string",
            offset,
        })
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        write_str(w, v, Some(self));
    }
    fn min_size(v: Version) -> usize {
        prefix_size(v, true)
    }
}

impl Wire for Option<String> {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        read_str(r, v)
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        write_str(w, v, self.as_deref());
    }
    fn min_size(v: Version) -> usize {
        prefix_size(v, true)
    }
}

fn read_bytes(r: &mut Reader<'_>, v: Version) -> Result<Option<ByteBuf>> {
    let Some(n) = r.length(v, true, 1, "bytes")? else {
        return Ok(None);
    };
    let bytes = r.take(n, "bytes")?;
    Ok(Some(ByteBuf::from(bytes.to_vec())))
}

fn write_bytes(w: &mut Vec<u8>, v: Version, b: Option<&[u8]>) {
    put_length(w, v, true, b.map(<[u8]>::len));
    if let Some(b) = b {
        w.extend_from_slice(b);
    }
}

impl Wire for ByteBuf {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        let offset = r.position();
        read_bytes(r, v)?.ok_or(DecodeError::UnexpectedNull {
            what: "bytes",
            offset,
        })
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        write_bytes(w, v, Some(self));
    }
    fn min_size(v: Version) -> usize {
        prefix_size(v, false)
    }
}

impl Wire for Option<ByteBuf> {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        read_bytes(r, v)
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        write_bytes(w, v, self.as_deref().map(|b| &b[..]));
    }
    fn min_size(v: Version) -> usize {
        prefix_size(v, false)
    }
}

/// The most bytes an array reserves before its elements are read.
const MAX_RESERVE: usize = 1 << 20;

fn read_array<T: Wire>(r: &mut Reader<'_>, v: Version) -> Result<Option<Vec<T>>> {
    let Some(n) = r.length(v, true, T::min_size(v), "array")? else {
        return Ok(None);
    };
    // The count is bounded by the bytes left, but an element can be far larger in memory
    // than on the wire: reserve no more than MAX_RESERVE up front and let a real array grow.
    let mut out = Vec::with_capacity(n.min(MAX_RESERVE / std::mem::size_of::<T>().max(1)));
    for _ in 0..n {
        out.push(T::read(r, v)?);
    }
    Ok(Some(out))
}

fn write_array<T: Wire>(w: &mut Vec<u8>, v: Version, items: Option<&[T]>) {
    put_length(w, v, true, items.map(<[T]>::len));
    for item in items.into_iter().flatten() {
        item.write(w, v);
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        let offset = r.position();
        read_array(r, v)?.ok_or(DecodeError::UnexpectedNull {
            what: "array",
            offset,
        })
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        write_array(w, v, Some(self));
    }
    fn min_size(v: Version) -> usize {
        prefix_size(v, false)
    }
}

impl<T: Wire> Wire for Option<Vec<T>> {
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self> {
        read_array(r, v)
    }
    fn write(&self, w: &mut Vec<u8>, v: Version) {
        write_array(w, v, self.as_deref());
    }
    fn min_size(v: Version) -> usize {
        prefix_size(v, false)
    }
}

/// A 16-byte UUID (topic ids). Crosses into Python as 16 `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

impl Serialize for Uuid {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Uuid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let buf = ByteBuf::deserialize(d)?;
        let arr: [u8; 16] = buf
            .as_slice()
            .try_into()
            .map_err(|_| serde::de::Error::invalid_length(buf.len(), &"16 bytes"))?;
        Ok(Uuid(arr))
    }
}

impl Wire for Uuid {
    fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self> {
        Ok(Uuid(r.array("uuid")?))
    }
    fn write(&self, w: &mut Vec<u8>, _v: Version) {
        w.extend_from_slice(&self.0);
    }
    fn min_size(_v: Version) -> usize {
        16
    }
}

#[doc(hidden)]
#[macro_export]
macro_rules! __kafka_max_version {
    (_) => {
        i16::MAX
    };
    ($v:literal) => {
        $v
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __kafka_default {
    () => {
        Default::default()
    };
    ($e:expr) => {
        $e
    };
}

/// Declare a protocol struct: its fields with the versions they exist in (`[min, max]`, `_` for
/// "still present"), an optional default for versions that lack the field, and its tagged fields.
/// Generates the struct (serde-enabled, all fields public) and its [`Wire`] impl.
///
/// ```ignore
/// kafka_struct! {
///     pub struct Broker {
///         node_id: i32 [0, _],
///         rack: Option<String> [1, _],
///         leader_epoch: i32 [7, _] = -1,
///     }
///     tagged {
///         cluster_id: String = 0 [12, _],
///     }
/// }
/// ```
#[macro_export]
macro_rules! kafka_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $field:ident : $ty:ty [ $min:literal , $max:tt ] $( = $default:expr )? ),* $(,)?
        }
        $( tagged {
            $( $tfield:ident : $tty:ty = $tag:literal [ $tmin:literal , $tmax:tt ] ),* $(,)?
        } )?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $( pub $field: $ty, )*
            $( $( pub $tfield: Option<$tty>, )* )?
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $field: $crate::__kafka_default!($($default)?), )*
                    $( $( $tfield: None, )* )?
                }
            }
        }

        impl $crate::protocol::codec::Wire for $name {
            #[allow(unused_comparisons, unused_mut, unused_variables, clippy::manual_range_contains)]
            fn read(
                r: &mut $crate::protocol::codec::Reader<'_>,
                v: $crate::protocol::codec::Version,
            ) -> $crate::protocol::error::Result<Self> {
                let mut out = Self::default();
                $(
                    if v.version >= $min && v.version <= $crate::__kafka_max_version!($max) {
                        out.$field = <$ty as $crate::protocol::codec::Wire>::read(r, v)
                            .map_err(|e| e.in_field(concat!(stringify!($name), ".", stringify!($field))))?;
                    }
                )*
                if v.flexible {
                    r.tagged_fields(|tag, data| {
                        match tag {
                            $( $(
                                $tag if v.version >= $tmin
                                    && v.version <= $crate::__kafka_max_version!($tmax) => {
                                    let mut sub = $crate::protocol::codec::Reader::new(data);
                                    let value = <$tty as $crate::protocol::codec::Wire>::read(&mut sub, v)
                                        .map_err(|e| e.in_field(concat!(stringify!($name), ".", stringify!($tfield))))?;
                                    out.$tfield = Some(value);
                                }
                            )* )?
                            _ => {}
                        }
                        Ok(())
                    })?;
                }
                Ok(out)
            }

            #[allow(unused_comparisons, unused_mut, unused_variables, clippy::manual_range_contains)]
            fn write(&self, w: &mut Vec<u8>, v: $crate::protocol::codec::Version) {
                $(
                    if v.version >= $min && v.version <= $crate::__kafka_max_version!($max) {
                        $crate::protocol::codec::Wire::write(&self.$field, w, v);
                    }
                )*
                if v.flexible {
                    let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
                    $( $(
                        if v.version >= $tmin && v.version <= $crate::__kafka_max_version!($tmax) {
                            if let Some(value) = &self.$tfield {
                                let mut buf = Vec::new();
                                $crate::protocol::codec::Wire::write(value, &mut buf, v);
                                tagged.push(($tag, buf));
                            }
                        }
                    )* )?
                    $crate::protocol::codec::put_tagged_fields(w, &tagged);
                }
            }

            /// The sum of the fields' least sizes at `v`, and the tagged-field count's byte
            /// (never 0: a hostile count of empty elements would cost nothing to send).
            #[allow(unused_comparisons, unused_mut, clippy::manual_range_contains)]
            fn min_size(v: $crate::protocol::codec::Version) -> usize {
                let mut n = 0;
                $(
                    if v.version >= $min && v.version <= $crate::__kafka_max_version!($max) {
                        n += <$ty as $crate::protocol::codec::Wire>::min_size(v);
                    }
                )*
                if v.flexible {
                    n += 1;
                }
                n.max(1)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CLASSIC: Version = Version {
        version: 0,
        flexible: false,
    };
    const FLEX: Version = Version {
        version: 0,
        flexible: true,
    };

    fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(value: &T, v: Version) {
        let mut buf = Vec::new();
        value.write(&mut buf, v);
        let mut r = Reader::new(&buf);
        let back = T::read(&mut r, v).expect("decodes");
        r.finish("value").expect("consumes everything");
        assert_eq!(&back, value);
    }

    proptest! {
        #[test]
        fn ints_round_trip(a: i8, b: i16, c: i32, d: i64, e: u16, f: u32, g: bool) {
            for v in [CLASSIC, FLEX] {
                round_trip(&a, v); round_trip(&b, v); round_trip(&c, v);
                round_trip(&d, v); round_trip(&e, v); round_trip(&f, v); round_trip(&g, v);
            }
        }

        #[test]
        fn float_round_trip(x in any::<f64>().prop_filter("not NaN", |x| !x.is_nan())) {
            round_trip(&x, CLASSIC);
        }

        #[test]
        fn varints_round_trip(a: i32, b: i64, c: u32, d: u64) {
            let mut buf = Vec::new();
            put_varint(&mut buf, a);
            put_varlong(&mut buf, b);
            put_unsigned_varint(&mut buf, u64::from(c));
            put_unsigned_varint(&mut buf, d);
            let mut r = Reader::new(&buf);
            prop_assert_eq!(r.varint().unwrap(), a);
            prop_assert_eq!(r.varlong().unwrap(), b);
            prop_assert_eq!(r.unsigned_varint().unwrap(), c);
            prop_assert_eq!(r.unsigned_varlong().unwrap(), d);
            prop_assert!(r.finish("varints").is_ok());
        }

        #[test]
        fn strings_bytes_arrays_round_trip(
            s in ".{0,40}",
            ns in proptest::option::of(".{0,40}"),
            b in proptest::collection::vec(any::<u8>(), 0..64),
            nb in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..64)),
            arr in proptest::collection::vec(any::<i32>(), 0..20),
            narr in proptest::option::of(proptest::collection::vec(".{0,8}", 0..10)),
            uuid: [u8; 16],
        ) {
            for v in [CLASSIC, FLEX] {
                round_trip(&s, v);
                round_trip(&ns, v);
                round_trip(&ByteBuf::from(b.clone()), v);
                round_trip(&nb.clone().map(ByteBuf::from), v);
                round_trip(&arr, v);
                round_trip(&narr, v);
                round_trip(&Uuid(uuid), v);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            for v in [CLASSIC, FLEX] {
                let _ = String::read(&mut Reader::new(&data), v);
                let _ = <Option<Vec<String>>>::read(&mut Reader::new(&data), v);
                let _ = ByteBuf::read(&mut Reader::new(&data), v);
                let _ = Reader::new(&data).tagged_fields(|_, _| Ok(()));
                let _ = Reader::new(&data).varlong();
            }
        }
    }

    #[test]
    fn varint_known_encodings() {
        // Zig-zag: 0 -> 0, -1 -> 1, 1 -> 2, -64 -> 127, 64 -> 128 (two bytes).
        for (value, bytes) in [
            (0, vec![0x00]),
            (-1, vec![0x01]),
            (1, vec![0x02]),
            (-64, vec![0x7f]),
            (64, vec![0x80, 0x01]),
            (i32::MIN, vec![0xff, 0xff, 0xff, 0xff, 0x0f]),
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, value);
            assert_eq!(buf, bytes, "varint {value}");
        }
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let data = [0xff; 6];
        let err = Reader::new(&data).unsigned_varint().unwrap_err();
        assert!(matches!(err, DecodeError::VarintTooLong { offset: 0, .. }));
        let data = [0xff; 11];
        assert!(Reader::new(&data).unsigned_varlong().is_err());
    }

    #[test]
    fn hostile_array_count_does_not_allocate() {
        // int32 count of 2^31-1 elements followed by nothing.
        let data = i32::MAX.to_be_bytes();
        let err = <Vec<i64>>::read(&mut Reader::new(&data), CLASSIC).unwrap_err();
        assert!(
            matches!(err, DecodeError::HostileCount { count, remaining: 0, .. } if count == i32::MAX as usize)
        );
    }

    crate::kafka_struct! {
        pub struct Pair {
            a: i64 [0, _],
            b: String [0, _],
        }
    }

    #[test]
    fn an_array_count_is_bounded_by_its_elements_least_size() {
        // Ten bytes could hold ten 1-byte elements but not one (i64, string) pair (10 bytes
        // classic, 9 + 1 flexible): the count is refused before anything is read.
        for v in [CLASSIC, FLEX] {
            assert_eq!(Pair::min_size(v), 10);
            let mut data = Vec::new();
            put_length(&mut data, v, true, Some(2));
            data.extend_from_slice(&[0; 10]);
            let err = <Vec<Pair>>::read(&mut Reader::new(&data), v).unwrap_err();
            assert!(
                matches!(err, DecodeError::HostileCount { count: 2, .. }),
                "{err:?}"
            );
        }
    }

    /// Large in memory, one byte on the wire; any byte but 0 is refused.
    #[derive(Debug)]
    struct Big(#[allow(dead_code)] [u8; 1 << 16]);

    impl Wire for Big {
        fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self> {
            let offset = r.position();
            match r.i8()? {
                0 => Ok(Big([0; 1 << 16])),
                _ => Err(DecodeError::UnexpectedNull {
                    what: "big",
                    offset,
                }),
            }
        }
        fn write(&self, _w: &mut Vec<u8>, _v: Version) {}
    }

    #[test]
    fn a_hostile_array_reserves_a_bounded_amount() {
        // A million 64 KiB elements would reserve 64 GiB at once (an allocation failure
        // aborts the process); the reservation is capped and the bad second element ends
        // the read.
        let n = 1usize << 20;
        let mut data = (n as i32).to_be_bytes().to_vec();
        data.resize(4 + n, 0);
        data[5] = 1;
        let err = <Vec<Big>>::read(&mut Reader::new(&data), CLASSIC).unwrap_err();
        assert!(matches!(err, DecodeError::UnexpectedNull { offset: 5, .. }));
    }

    #[test]
    fn null_where_not_nullable_is_an_error() {
        let data = (-1i16).to_be_bytes();
        let err = String::read(&mut Reader::new(&data), CLASSIC).unwrap_err();
        assert!(matches!(err, DecodeError::UnexpectedNull { .. }));
        assert_eq!(
            <Option<String>>::read(&mut Reader::new(&data), CLASSIC).unwrap(),
            None
        );
    }

    #[test]
    fn invalid_utf8_names_its_offset() {
        let data = [0x00, 0x02, 0xc3, 0x28];
        let err = String::read(&mut Reader::new(&data), CLASSIC).unwrap_err();
        assert_eq!(
            err,
            DecodeError::InvalidUtf8 {
                what: "string",
                offset: 2
            }
        );
    }

    #[test]
    fn compact_forms_are_n_plus_one() {
        let mut buf = Vec::new();
        "ab".to_string().write(&mut buf, FLEX);
        assert_eq!(buf, vec![3, b'a', b'b']);
        let mut buf = Vec::new();
        None::<String>.write(&mut buf, FLEX);
        assert_eq!(buf, vec![0]);
    }

    #[test]
    fn trailing_bytes_are_reported() {
        let r = Reader::new(&[1, 2, 3]);
        assert!(matches!(
            r.finish("body"),
            Err(DecodeError::TrailingBytes { count: 3, .. })
        ));
    }
}
