//! The bounds check every datum passes before either reader sees it: lengths and counts within
//! the bytes left, union and enum indexes within their schema, nesting within [`MAX_DEPTH`],
//! strings UTF-8 (see avro.rs for why).

use std::collections::HashMap;

use apache_avro::schema::{Name, Schema};

use super::{AvroSchema, MAX_DEPTH, MAX_ITEMS};

/// Walk a datum of `schema` with bounds (see the module's comment); Err says what is wrong.
pub fn check(schema: &AvroSchema, datum: &[u8]) -> Result<(), String> {
    let mut walk = Walk {
        names: &schema.names,
        buf: datum,
        pos: 0,
        items: 0,
    };
    walk.value(&schema.schema, 0)
}

struct Walk<'a> {
    names: &'a HashMap<Name, Schema>,
    buf: &'a [u8],
    pos: usize,
    items: usize,
}

impl<'a> Walk<'a> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn long(&mut self) -> Result<i64, String> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(format!("truncated at byte {}", self.pos));
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        Err(format!(
            "a varint longer than 10 bytes at byte {}",
            self.pos
        ))
    }

    fn skip(&mut self, n: usize) -> Result<(), String> {
        if n > self.left() {
            return Err(format!(
                "{n} bytes at byte {}, but {} are left",
                self.pos,
                self.left()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn length(&mut self) -> Result<usize, String> {
        let at = self.pos;
        let n = self.long()?;
        usize::try_from(n).map_err(|_| format!("a negative length {n} at byte {at}"))
    }

    fn value(&mut self, schema: &Schema, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match schema {
            Schema::Null => Ok(()),
            Schema::Boolean => {
                let at = self.pos;
                self.skip(1)?;
                match self.buf[at] {
                    0 | 1 => Ok(()),
                    b => Err(format!("a boolean byte {b:#04x} at byte {at}")),
                }
            }
            Schema::Int | Schema::Date | Schema::TimeMillis => {
                let at = self.pos;
                let v = self.long()?;
                i32::try_from(v)
                    .map(|_| ())
                    .map_err(|_| format!("an int {v} past 32 bits at byte {at}"))
            }
            Schema::Long
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos => self.long().map(|_| ()),
            Schema::Float => self.skip(4),
            Schema::Double => self.skip(8),
            Schema::String | Schema::Uuid => {
                let n = self.length()?;
                let at = self.pos;
                self.skip(n)?;
                std::str::from_utf8(&self.buf[at..at + n])
                    .map(|_| ())
                    .map_err(|e| format!("a string at byte {at} that is not UTF-8: {e}"))
            }
            Schema::Bytes | Schema::BigDecimal => {
                let n = self.length()?;
                self.skip(n)
            }
            Schema::Fixed(f) => self.skip(f.size),
            Schema::Duration => self.skip(12),
            Schema::Decimal(d) => self.value(&d.inner, depth + 1),
            Schema::Enum(e) => {
                let at = self.pos;
                let i = self.long()?;
                if usize::try_from(i).is_ok_and(|i| i < e.symbols.len()) {
                    Ok(())
                } else {
                    Err(format!(
                        "enum index {i} at byte {at}, but {} has {} symbols",
                        e.name,
                        e.symbols.len()
                    ))
                }
            }
            Schema::Union(u) => {
                let at = self.pos;
                let i = self.long()?;
                let branch = usize::try_from(i)
                    .ok()
                    .and_then(|i| u.variants().get(i))
                    .ok_or_else(|| {
                        format!(
                            "union index {i} at byte {at}, but the union has {} branches",
                            u.variants().len()
                        )
                    })?;
                self.value(branch, depth + 1)
            }
            Schema::Array(a) => self.blocks(None, &a.items, depth),
            Schema::Map(m) => self.blocks(Some(&Schema::String), &m.types, depth),
            Schema::Record(r) => {
                for f in &r.fields {
                    self.value(&f.schema, depth + 1)?;
                }
                Ok(())
            }
            Schema::Ref { name } => {
                let names: &'a HashMap<Name, Schema> = self.names;
                match names.get(name) {
                    Some(s) => self.value(s, depth + 1),
                    None => Err(format!("the schema has no type named {name}")),
                }
            }
        }
    }

    /// The blocks of an array (`key` None) or map: item counts, each block's byte size when
    /// the count is negative, then the items.
    fn blocks(&mut self, key: Option<&Schema>, item: &Schema, depth: usize) -> Result<(), String> {
        loop {
            let at = self.pos;
            let count = self.long()?;
            if count == 0 {
                return Ok(());
            }
            if count < 0 {
                self.length()?; // the block's size in bytes, of no use to a walk
            }
            let count = count.unsigned_abs();
            let total = usize::try_from(count)
                .ok()
                .and_then(|c| c.checked_add(self.items))
                .filter(|&t| t <= MAX_ITEMS)
                .ok_or_else(|| {
                    format!("a block of {count} items at byte {at}: past {MAX_ITEMS} in one datum")
                })?;
            // Every item of a key or of a type that takes bytes takes at least one.
            if (key.is_some() || !self.zero_size(item, 0)) && count > self.left() as u64 {
                return Err(format!(
                    "a block of {count} items at byte {at}, but {} bytes are left",
                    self.left()
                ));
            }
            self.items = total;
            for _ in 0..count {
                if let Some(k) = key {
                    self.value(k, depth + 1)?;
                }
                self.value(item, depth + 1)?;
            }
        }
    }

    /// Whether a value of `schema` can take no bytes.
    fn zero_size(&self, schema: &Schema, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match schema {
            Schema::Null => true,
            Schema::Fixed(f) => f.size == 0,
            Schema::Decimal(d) => self.zero_size(&d.inner, depth + 1),
            Schema::Record(r) => r
                .fields
                .iter()
                .all(|f| self.zero_size(&f.schema, depth + 1)),
            Schema::Ref { name } => self
                .names
                .get(name)
                .is_some_and(|s| self.zero_size(s, depth + 1)),
            _ => false,
        }
    }
}
