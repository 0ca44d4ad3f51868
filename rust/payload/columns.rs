//! The Arrow builders a format's decoder appends values to: one per column of the schema, in
//! a tree that follows the schema's structs, lists and maps. A format makes the tree from its
//! own schema and appends its own values; appending nulls, closing list and map entries, and
//! finishing the arrays are the same for every format.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int16Builder, Int32Builder, Int64Builder, Int8Builder, NullBuilder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{make_array, Array, ArrayRef, ListArray, MapArray, StructArray};
use arrow_buffer::{
    BooleanBufferBuilder, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{ArrowError, DataType, FieldRef, Fields, TimeUnit};

/// An Arrow builder for values of one type. `X` is what a format keeps with a struct column
/// of its own (Avro: the members of a union read as a struct).
pub(super) enum Column<X> {
    Null(NullBuilder),
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Date32(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    /// With 10^precision (the least magnitude past the precision) and the scale.
    Decimal(Decimal128Builder, i128, i8),
    Struct(StructColumn<X>),
    List(Box<ListColumn<X>>),
    Map(Box<MapColumn<X>>),
}

pub(super) struct StructColumn<X> {
    pub(super) fields: Fields,
    pub(super) children: Vec<Column<X>>,
    pub(super) nulls: NullBufferBuilder,
    /// Rows whose fields are nulled when finished (for a format that nulls a whole row when
    /// one of its values does not fit, after the row's values were appended).
    pub(super) blank: Vec<usize>,
    pub(super) extra: X,
}

pub(super) struct ListColumn<X> {
    pub(super) item: FieldRef,
    pub(super) child: Column<X>,
    pub(super) offsets: Offsets,
}

pub(super) struct MapColumn<X> {
    pub(super) entries: FieldRef,
    pub(super) sorted: bool,
    pub(super) keys: StringBuilder,
    pub(super) values: Column<X>,
    pub(super) offsets: Offsets,
}

/// Where each entry of a list or map column ends among its items, and which entries are null.
pub(super) struct Offsets {
    ends: Vec<i32>,
    nulls: NullBufferBuilder,
}

impl<X> StructColumn<X> {
    /// A struct of `fields`, whose builders are `children`.
    pub(super) fn with_children(fields: Fields, children: Vec<Column<X>>, extra: X) -> Self {
        StructColumn {
            fields,
            children,
            nulls: NullBufferBuilder::new(0),
            blank: Vec::new(),
            extra,
        }
    }

    /// A non-null row of null fields.
    pub(super) fn append_blank(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.nulls.append_non_null();
    }

    pub(super) fn append_null(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.nulls.append_null();
    }

    pub(super) fn finish(&mut self) -> Result<StructArray, ArrowError> {
        let arrays = self
            .children
            .iter_mut()
            .map(Column::finish)
            .collect::<Result<Vec<ArrayRef>, _>>()?;
        let len = self.nulls.len();
        let nulls = self.nulls.finish();
        if self.fields.is_empty() {
            return Ok(StructArray::new_empty_fields(len, nulls));
        }
        let arrays = if self.blank.is_empty() {
            arrays
        } else {
            let mut keep = BooleanBufferBuilder::new(len);
            keep.append_n(len, true);
            for row in self.blank.drain(..) {
                keep.set_bit(row, false);
            }
            let keep = NullBuffer::new(keep.finish());
            arrays
                .into_iter()
                .map(|a| {
                    let nulls = NullBuffer::union(a.logical_nulls().as_ref(), Some(&keep));
                    let data = a.to_data().into_builder().nulls(nulls).build()?;
                    Ok(make_array(data))
                })
                .collect::<Result<Vec<ArrayRef>, ArrowError>>()?
        };
        StructArray::try_new(self.fields.clone(), arrays, nulls)
    }
}

impl<X> ListColumn<X> {
    pub(super) fn new(item: FieldRef, child: Column<X>) -> Self {
        ListColumn {
            item,
            child,
            offsets: Offsets::new(),
        }
    }
}

impl<X> MapColumn<X> {
    /// A map of `entries` (a struct of a string key and a value), whose values are appended
    /// to `values`.
    pub(super) fn new(entries: FieldRef, sorted: bool, values: Column<X>) -> Self {
        MapColumn {
            entries,
            sorted,
            keys: StringBuilder::new(),
            values,
            offsets: Offsets::new(),
        }
    }
}

impl Offsets {
    fn new() -> Self {
        Offsets {
            ends: vec![0],
            nulls: NullBufferBuilder::new(0),
        }
    }

    /// Close an entry of the `added` items appended since the last one; null unless `valid`
    /// (a null entry keeps its items' range; readers skip it).
    pub(super) fn end(&mut self, added: usize, valid: bool) {
        self.ends
            .push(self.ends.last().copied().unwrap_or(0) + added as i32);
        if valid {
            self.nulls.append_non_null();
        } else {
            self.nulls.append_null();
        }
    }

    /// Close a valid entry of `added` items; None when the offset would pass i32.
    pub(super) fn checked_end(&mut self, added: usize) -> Option<()> {
        let last = *self.ends.last()?;
        self.ends
            .push(last.checked_add(i32::try_from(added).ok()?)?);
        self.nulls.append_non_null();
        Some(())
    }

    fn finish(&mut self) -> (OffsetBuffer<i32>, Option<NullBuffer>) {
        let ends = OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut self.ends)));
        self.ends.push(0);
        (ends, self.nulls.finish())
    }
}

impl<X> Column<X> {
    pub(super) fn append_null(&mut self) {
        match self {
            Column::Null(b) => b.append_null(),
            Column::Boolean(b) => b.append_null(),
            Column::Int8(b) => b.append_null(),
            Column::Int16(b) => b.append_null(),
            Column::Int32(b) => b.append_null(),
            Column::Int64(b) => b.append_null(),
            Column::Float32(b) => b.append_null(),
            Column::Float64(b) => b.append_null(),
            Column::Utf8(b) => b.append_null(),
            Column::Binary(b) => b.append_null(),
            Column::Date32(b) => b.append_null(),
            Column::Timestamp(b) => b.append_null(),
            Column::Decimal(b, _, _) => b.append_null(),
            Column::Struct(c) => c.append_null(),
            Column::List(c) => c.offsets.end(0, false),
            Column::Map(c) => c.offsets.end(0, false),
        }
    }

    pub(super) fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match self {
            Column::Null(b) => Arc::new(b.finish()),
            Column::Boolean(b) => Arc::new(b.finish()),
            Column::Int8(b) => Arc::new(b.finish()),
            Column::Int16(b) => Arc::new(b.finish()),
            Column::Int32(b) => Arc::new(b.finish()),
            Column::Int64(b) => Arc::new(b.finish()),
            Column::Float32(b) => Arc::new(b.finish()),
            Column::Float64(b) => Arc::new(b.finish()),
            Column::Utf8(b) => Arc::new(b.finish()),
            Column::Binary(b) => Arc::new(b.finish()),
            Column::Date32(b) => Arc::new(b.finish()),
            Column::Timestamp(b) => Arc::new(b.finish()),
            Column::Decimal(b, _, _) => Arc::new(b.finish()),
            Column::Struct(c) => Arc::new(c.finish()?),
            Column::List(c) => {
                let values = c.child.finish()?;
                let (offsets, nulls) = c.offsets.finish();
                Arc::new(ListArray::try_new(c.item.clone(), offsets, values, nulls)?)
            }
            Column::Map(c) => {
                let DataType::Struct(kv) = c.entries.data_type() else {
                    unreachable!("a map's entries are a struct")
                };
                let keys: ArrayRef = Arc::new(c.keys.finish());
                let values = c.values.finish()?;
                let entries = StructArray::try_new(kv.clone(), vec![keys, values], None)?;
                let (offsets, nulls) = c.offsets.finish();
                Arc::new(MapArray::try_new(
                    c.entries.clone(),
                    offsets,
                    entries,
                    nulls,
                    c.sorted,
                )?)
            }
        })
    }
}

/// The builder of a type with no children; None for a type that has children, or that no
/// format is read into.
pub(super) fn leaf<X>(data_type: &DataType) -> Result<Option<Column<X>>, ArrowError> {
    Ok(Some(match data_type {
        DataType::Null => Column::Null(NullBuilder::new()),
        DataType::Boolean => Column::Boolean(BooleanBuilder::new()),
        DataType::Int8 => Column::Int8(Int8Builder::new()),
        DataType::Int16 => Column::Int16(Int16Builder::new()),
        DataType::Int32 => Column::Int32(Int32Builder::new()),
        DataType::Int64 => Column::Int64(Int64Builder::new()),
        DataType::Float32 => Column::Float32(Float32Builder::new()),
        DataType::Float64 => Column::Float64(Float64Builder::new()),
        DataType::Utf8 => Column::Utf8(StringBuilder::new()),
        DataType::Binary => Column::Binary(BinaryBuilder::new()),
        DataType::Date32 => Column::Date32(Date32Builder::new()),
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            Column::Timestamp(TimestampMicrosecondBuilder::new().with_timezone_opt(tz.clone()))
        }
        DataType::Decimal128(p, s) => Column::Decimal(
            Decimal128Builder::new().with_precision_and_scale(*p, *s)?,
            10i128.pow(u32::from(*p)),
            *s,
        ),
        _ => return Ok(None),
    }))
}
