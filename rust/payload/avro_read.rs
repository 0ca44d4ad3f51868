//! A datum read straight from its bytes into the column builders, for the common case of rows
//! read as their own writer schema (no reader schema to resolve to). `apache-avro` would build
//! a `Value` tree per record first (an allocation per field, and for each datum the schema's
//! names map again), which is most of the cost of a record (benches/README.md, *Avro
//! payloads*); this also keeps a map's entries in the order they were written.
//!
//! Only datums that passed [`check`](super::check) come here: every length, count and index was
//! checked against the bytes and the schema, so the reads below do not fail part way through a
//! value (which would leave a list's items appended without its entry). Should one fail all
//! the same, reads stay within the datum and the batch fails with an Arrow error on finishing,
//! never a panic.

use apache_avro::schema::Schema;

use super::columns::{decimal_bytes_i128, does_not_fit, put, Column, StructColumn};
use super::{AvroSchema, MAX_DEPTH};

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn long(&mut self) -> Option<i64> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.long()?).ok()?;
        self.take(n)
    }

    fn text(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    /// Read an array's or map's blocks, each item with `item` (Some(whether it fitted), None
    /// when it does not read): the count of items and whether all fitted.
    fn blocks(&mut self, mut item: impl FnMut(&mut Self) -> Option<bool>) -> Option<(usize, bool)> {
        let (mut added, mut ok) = (0usize, true);
        loop {
            let count = self.long()?;
            if count == 0 {
                break;
            }
            if count < 0 {
                self.long()?; // the block's size in bytes
            }
            for _ in 0..count.unsigned_abs() {
                ok &= item(self)?;
                added += 1;
            }
        }
        Some((added, ok))
    }
}

impl StructColumn {
    /// Append the record `datum` (checked) of `writer`, the schema this column was made from.
    pub(super) fn read_row(&mut self, writer: &AvroSchema, datum: &[u8]) -> Result<(), String> {
        let mut cur = Cursor { buf: datum, pos: 0 };
        let Schema::Record(r) = writer.resolve(&writer.schema) else {
            self.append_blank();
            return Err("the writer schema is not a record".into());
        };
        let mut misfit = None;
        for (i, (field, child)) in r.fields.iter().zip(&mut self.children).enumerate() {
            if !child.read(writer, &field.schema, &mut cur, 1) && misfit.is_none() {
                misfit = Some(does_not_fit(&self.fields[i]));
            }
        }
        self.end_row(misfit)
    }
}

impl Column {
    /// Read one value of `schema` (a checked datum's) and append it as one slot; false when it
    /// does not fit the column (a timestamp or decimal past its Arrow type), null appended.
    fn read(
        &mut self,
        names: &AvroSchema,
        schema: &Schema,
        cur: &mut Cursor<'_>,
        depth: usize,
    ) -> bool {
        let read = if depth <= MAX_DEPTH {
            self.read_value(names, schema, cur, depth)
        } else {
            None
        };
        read.unwrap_or_else(|| {
            self.append_null();
            false
        })
    }

    /// Some(whether everything inside fitted) when a slot was appended; None when the value
    /// does not fit and nothing was appended for it.
    fn read_value(
        &mut self,
        names: &AvroSchema,
        schema: &Schema,
        cur: &mut Cursor<'_>,
        depth: usize,
    ) -> Option<bool> {
        let schema = names.resolve(schema);
        if let Schema::Union(u) = schema {
            let index = usize::try_from(cur.long()?).ok()?;
            let branch = names.resolve(u.variants().get(index)?);
            if let Schema::Null = branch {
                self.append_null();
                return Some(true);
            }
            let Column::Struct(StructColumn {
                extra: Some(members),
                ..
            }) = self
            else {
                // A union read as a single type (nullable, int|long, float|double).
                return self.read_value(names, branch, cur, depth + 1);
            };
            let member = (*members.get(index)?)?;
            let Column::Struct(c) = self else {
                unreachable!("matched above")
            };
            let mut ok = true;
            for (m, child) in c.children.iter_mut().enumerate() {
                if m == member {
                    ok = child.read(names, branch, cur, depth + 1);
                } else {
                    child.append_null();
                }
            }
            c.nulls.append_non_null();
            return Some(ok);
        }
        match (&mut *self, schema) {
            (_, Schema::Null) => self.append_null(),
            (Column::Boolean(b), Schema::Boolean) => b.append_value(cur.take(1)?[0] != 0),
            (Column::Int32(b), Schema::Int | Schema::TimeMillis) => {
                put(b, i32::try_from(cur.long()?).ok()?);
            }
            (Column::Int64(b), Schema::Int | Schema::Long | Schema::TimeMicros) => {
                put(b, cur.long()?);
            }
            (Column::Date32(b), Schema::Date) => {
                put(b, i32::try_from(cur.long()?).ok()?);
            }
            (Column::Timestamp(b), Schema::TimestampMicros | Schema::LocalTimestampMicros) => {
                put(b, cur.long()?);
            }
            (Column::Timestamp(b), Schema::TimestampMillis | Schema::LocalTimestampMillis) => {
                put(b, cur.long()?.checked_mul(1000)?);
            }
            (Column::Float32(b), Schema::Float) => {
                put(b, f32::from_le_bytes(cur.take(4)?.try_into().ok()?));
            }
            (Column::Float64(b), Schema::Float) => {
                put(
                    b,
                    f64::from(f32::from_le_bytes(cur.take(4)?.try_into().ok()?)),
                );
            }
            (Column::Float64(b), Schema::Double) => {
                put(b, f64::from_le_bytes(cur.take(8)?.try_into().ok()?));
            }
            (Column::Utf8(b), Schema::String) => b.append_value(cur.text()?),
            (Column::Utf8(b), Schema::Uuid) => {
                let raw = cur.bytes()?;
                match <[u8; 16]>::try_from(raw) {
                    Ok(bytes) => b.append_value(uuid_text(bytes)),
                    Err(_) => b.append_value(std::str::from_utf8(raw).ok()?),
                }
            }
            (Column::Utf8(b), Schema::Enum(e)) => {
                let index = usize::try_from(cur.long()?).ok()?;
                b.append_value(e.symbols.get(index)?);
            }
            (Column::Binary(b), Schema::Bytes) => b.append_value(cur.bytes()?),
            (Column::Binary(b), Schema::Fixed(f)) => b.append_value(cur.take(f.size)?),
            (Column::Binary(b), Schema::Duration) => b.append_value(cur.take(12)?),
            (Column::Decimal(b, limit, _), Schema::Decimal(d)) => {
                let raw = match names.resolve(&d.inner) {
                    Schema::Fixed(f) => cur.take(f.size)?,
                    _ => cur.bytes()?,
                };
                let v = decimal_bytes_i128(raw).filter(|v| v.unsigned_abs() < limit.unsigned_abs());
                put(b, v?);
            }
            (Column::Struct(c), Schema::Record(r)) if c.extra.is_none() => {
                let mut ok = true;
                for (field, child) in r.fields.iter().zip(&mut c.children) {
                    ok &= child.read(names, &field.schema, cur, depth + 1);
                }
                c.nulls.append_non_null();
                return Some(ok);
            }
            (Column::List(c), Schema::Array(a)) => {
                let (added, ok) =
                    cur.blocks(|cur| Some(c.child.read(names, &a.items, cur, depth + 1)))?;
                c.offsets.checked_end(added)?;
                return Some(ok);
            }
            (Column::Map(c), Schema::Map(m)) => {
                let (added, ok) = cur.blocks(|cur| {
                    c.keys.append_value(cur.text()?);
                    Some(c.values.read(names, &m.types, cur, depth + 1))
                })?;
                c.offsets.checked_end(added)?;
                return Some(ok);
            }
            _ => return None,
        }
        Some(true)
    }
}

/// A 16-byte UUID in its canonical text, as the reference reader gives it.
fn uuid_text(b: [u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}
