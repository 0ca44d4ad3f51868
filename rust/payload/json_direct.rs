//! The direct path: a payload read straight into the builders, with no `Value` and no
//! allocation per key or string. It takes what the `Value` path's parse takes (the same parser,
//! every value parsed as the `Value` parses it, skipped ones too), and gives the same values,
//! for payloads that are objects with no key given twice in an object read as a struct (the
//! `Value` keeps the last one). Anything else fails the read, which may be part way through a
//! row: values already appended that the builders cannot take back. So a batch is read
//! directly until a row fails, then again with every row from that one on checked first (a
//! read that appends nothing), the rows that fail the check going the `Value` path.

use super::*;

/// Whether the direct path takes `text` (an object), read without appending.
pub(super) fn direct_fits(root: &mut StructColumn, text: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(text);
    de.deserialize_any(CheckStruct(root)).is_ok()
}

/// Read `text` (an object) into `root`: Err(reason) for a bad row, None when the read failed,
/// leaving the builders part way through the row.
pub(super) fn direct_row(root: &mut StructColumn, text: &[u8]) -> Option<Result<(), String>> {
    let mut de = serde_json::Deserializer::from_slice(text);
    match de.deserialize_any(WriteStruct(root)).ok()? {
        None => Some(Ok(())),
        Some(i) => Some(Err(misfit(&root.fields[i]))),
    }
}

/// Any JSON value, parsed and dropped.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

/// An object key: the field of `fields` it names, if any.
struct Key<'c> {
    fields: &'c Fields,
    index: &'c HashMap<Box<str>, usize>,
    hint: usize,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(field_of(self.fields, self.index, self.hint, key))
    }
}

/// Checks a value for `column`: Err for what the direct path does not take.
struct Check<'c>(&'c mut Column);

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.0 {
            Column::Struct(c) => d.deserialize_any(CheckStruct(c)),
            Column::List(c) => d.deserialize_any(CheckList(&mut c.child)),
            _ => d.deserialize_any(SkipVisitor).map(drop),
        }
    }
}

/// Scalars, and arrays and objects of the wrong kind, are parsed and dropped.
macro_rules! skip_others {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

struct CheckStruct<'c>(&'c mut StructColumn);

impl<'de> Visitor<'de> for CheckStruct<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    skip_others!();
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        SkipVisitor.visit_seq(seq).map(drop)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let StructColumn {
            fields,
            children,
            extra: keys,
            ..
        } = self.0;
        each_field(fields, keys, map, |map, i| {
            map.next_value_seed(Check(&mut children[i]))
        })
    }
}

/// Read an object's keys, `value(map, i)` reading the value of field `i` and the values of keys
/// the schema does not name parsed and dropped. A key given twice, or a struct that names two
/// fields alike, fails the read (the `Value` path keeps the last value).
fn each_field<'de, A: MapAccess<'de>>(
    fields: &Fields,
    keys: &mut Keys,
    mut map: A,
    mut value: impl FnMut(&mut A, usize) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    if keys.twice {
        return Err(de::Error::custom("a struct with two fields of one name"));
    }
    keys.seen.fill(false);
    let mut hint = 0;
    while let Some(field) = map.next_key_seed(Key {
        fields,
        index: &keys.index,
        hint,
    })? {
        match field {
            Some(i) => {
                if std::mem::replace(&mut keys.seen[i], true) {
                    return Err(de::Error::custom("a key given twice"));
                }
                value(&mut map, i)?;
                hint = i + 1;
            }
            None => {
                map.next_value::<Skip>()?;
            }
        }
    }
    Ok(())
}

struct CheckList<'c>(&'c mut Column);

impl<'de> Visitor<'de> for CheckList<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    skip_others!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Check(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        SkipVisitor.visit_map(map).map(drop)
    }
}

/// Appends a checked value to `column`: false when it does not fit (as [`Column::append`]).
struct Write<'c>(&'c mut Column);

impl<'de> DeserializeSeed<'de> for Write<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        if let Column::Map(_) = self.0 {
            // A map keeps its keys sorted and the last of a key given twice, as the `Value`
            // does: that is what it is read into.
            let value = Value::deserialize(d)?;
            return Ok(self.0.append(Some(&value)));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Write<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        self.0.append_null();
        Ok(true)
    }
    fn visit_bool<E>(self, v: bool) -> Result<bool, E> {
        Ok(self.0.append_scalar(Scalar::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<bool, E> {
        Ok(self.0.append_scalar(Scalar::Num(&v.into())))
    }
    fn visit_u64<E>(self, v: u64) -> Result<bool, E> {
        Ok(self.0.append_scalar(Scalar::Num(&v.into())))
    }
    fn visit_f64<E>(self, v: f64) -> Result<bool, E> {
        match Number::from_f64(v) {
            Some(n) => Ok(self.0.append_scalar(Scalar::Num(&n))),
            // What the `Value` makes of a number it cannot hold.
            None => {
                self.0.append_null();
                Ok(true)
            }
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(self.0.append_scalar(Scalar::Str(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        match self.0 {
            Column::List(c) => {
                let (mut ok, mut items) = (true, 0);
                while let Some(fits) = seq.next_element_seed(Write(&mut c.child))? {
                    ok &= fits;
                    items += 1;
                }
                // Spark nulls a list for one misfit item.
                c.offsets.end(items, ok);
                Ok(ok)
            }
            Column::Utf8(b) => {
                let value = Value::deserialize(SeqAccessDeserializer::new(seq))?;
                b.append_value(value.to_string());
                Ok(true)
            }
            other => {
                while seq.next_element::<Skip>()?.is_some() {}
                other.append_null();
                Ok(false)
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        match self.0 {
            Column::Struct(c) => Ok(write_object(c, map)?.is_none()),
            Column::Utf8(b) => {
                // The compact text of the `Value`: keys sorted, the last of a key given twice.
                let value = Value::deserialize(MapAccessDeserializer::new(map))?;
                b.append_value(value.to_string());
                Ok(true)
            }
            other => {
                SkipVisitor.visit_map(map)?;
                other.append_null();
                Ok(false)
            }
        }
    }
}

/// Reads a checked payload's top-level object: the first field that did not fit, if any.
struct WriteStruct<'c>(&'c mut StructColumn);

impl<'de> Visitor<'de> for WriteStruct<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<usize>, A::Error> {
        write_object(self.0, map)
    }
}

/// Append an object's fields; the first field (in the schema's order)
/// that did not fit, if any.
fn write_object<'de, A: MapAccess<'de>>(
    c: &mut StructColumn,
    map: A,
) -> Result<Option<usize>, A::Error> {
    let StructColumn {
        fields,
        children,
        nulls,
        extra: keys,
        ..
    } = c;
    let mut first_misfit: Option<usize> = None;
    each_field(fields, keys, map, |map, i| {
        if !map.next_value_seed(Write(&mut children[i]))? {
            first_misfit = Some(first_misfit.map_or(i, |m| m.min(i)));
        }
        Ok(())
    })?;
    for (child, seen) in children.iter_mut().zip(&keys.seen) {
        if !seen {
            child.append_null();
        }
    }
    nulls.append_non_null();
    Ok(first_misfit)
}
