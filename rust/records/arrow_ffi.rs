//! The shape of Arrow C Data Interface structures, checked before arrow-rs imports them.
//!
//! arrow-rs's importer asserts (and so panics) when a structure's child or buffer counts do
//! not match its type, and reads an offsets buffer through its pointer to size the values
//! buffer. Whatever an exporter hands over, the import must end in a Python exception, so the
//! counts and pointers it relies on are checked here first. The buffers' contents are checked
//! after the import (`ArrayData::validate_full`).

use std::ffi::{c_char, c_void};

use arrow_array::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::DataType;

/// The C Data Interface's `struct ArrowSchema`, field for field.
#[repr(C)]
struct RawSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut RawSchema,
    dictionary: *mut RawSchema,
    release: Option<unsafe extern "C" fn(*mut RawSchema)>,
    private_data: *mut c_void,
}

/// The C Data Interface's `struct ArrowArray`, field for field.
#[repr(C)]
struct RawArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut RawArray,
    dictionary: *mut RawArray,
    release: Option<unsafe extern "C" fn(*mut RawArray)>,
    private_data: *mut c_void,
}

/// Deeper nesting than any producible column needs; bounds the recursion.
const MAX_DEPTH: usize = 32;
/// More children than a schema of Kafka's five columns (or anything sane) has.
const MAX_CHILDREN: i64 = 1 << 16;
/// Bounds `length + offset` so the importer's buffer-size arithmetic cannot overflow.
const MAX_SLOTS: i64 = 1 << 48;

/// Why an exported structure cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    /// A column of a type that cannot be produced and whose layout is not checked here.
    Unsupported { column: String, data_type: String },
    /// A structure that breaks the C Data Interface.
    Malformed { column: String, message: String },
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShapeError::Unsupported { column, data_type } => {
                write!(f, "column {column:?}: {data_type} cannot be produced")
            }
            ShapeError::Malformed { column, message } if column.is_empty() => {
                write!(f, "the Arrow data is not valid: {message}")
            }
            ShapeError::Malformed { column, message } => {
                write!(
                    f,
                    "column {column:?}: the Arrow data is not valid: {message}"
                )
            }
        }
    }
}

fn malformed(column: &str, message: String) -> ShapeError {
    ShapeError::Malformed {
        column: column.to_owned(),
        message,
    }
}

/// Check an exported schema's tree: not released, a format string, `n_children` child
/// pointers that are not null. Run before arrow-rs reads the schema.
///
/// # Safety
/// `schema` must point to a live `ArrowSchema` whose non-null pointers are valid.
pub unsafe fn check_schema(schema: *const FFI_ArrowSchema) -> Result<(), ShapeError> {
    // SAFETY: the caller's promise; FFI_ArrowSchema is the C struct.
    unsafe { check_schema_at(schema.cast::<RawSchema>(), 0) }
}

unsafe fn check_schema_at(schema: *const RawSchema, depth: usize) -> Result<(), ShapeError> {
    let bad = |message: &str| malformed("", format!("the schema {message}"));
    if depth > MAX_DEPTH {
        return Err(bad(&format!("is nested deeper than {MAX_DEPTH} levels")));
    }
    // SAFETY: `schema` is live (the caller's promise, or a child pointer checked non-null).
    let s = unsafe { &*schema };
    if s.release.is_none() {
        return Err(bad("was already released"));
    }
    if s.format.is_null() {
        return Err(bad("has no format string"));
    }
    if !(0..=MAX_CHILDREN).contains(&s.n_children) {
        return Err(bad(&format!("has {} children", s.n_children)));
    }
    if s.n_children > 0 && s.children.is_null() {
        return Err(bad("has children but no array of them"));
    }
    for i in 0..s.n_children as usize {
        // SAFETY: `children` holds `n_children` pointers.
        let child = unsafe { *s.children.add(i) };
        if child.is_null() {
            return Err(bad(&format!("child {i} is null")));
        }
        // SAFETY: non-null child of a live schema.
        unsafe { check_schema_at(child, depth + 1)? };
    }
    if !s.dictionary.is_null() {
        // SAFETY: non-null dictionary of a live schema.
        unsafe { check_schema_at(s.dictionary, depth + 1)? };
    }
    Ok(())
}

/// How many children an array of `dt` has in the C Data Interface, for the types whose
/// layout is checked; None for the others (views, unions, run-end encoded, dictionaries),
/// which no column that can be produced uses.
fn children_of(dt: &DataType) -> Option<Vec<&DataType>> {
    use DataType::*;
    Some(match dt {
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64
        | Float16 | Float32 | Float64 | Timestamp(..) | Date32 | Date64 | Time32(_) | Time64(_)
        | Duration(_) | Interval(_) | Decimal32(..) | Decimal64(..) | Decimal128(..)
        | Decimal256(..) | Binary | LargeBinary | Utf8 | LargeUtf8 | FixedSizeBinary(_) => vec![],
        List(f) | LargeList(f) | FixedSizeList(f, _) | Map(f, _) => vec![f.data_type()],
        Struct(fields) => fields.iter().map(|f| f.data_type()).collect(),
        _ => return None,
    })
}

/// Check an exported array of type `dt` (the schema's, already read): not released, sane
/// length, offset and null count, the buffer and child counts the type has, non-null buffer
/// and child pointers where the importer follows them, no dictionary. `column` names the
/// top-level column in errors ("" for the batch itself).
///
/// # Safety
/// `array` must point to a live `ArrowArray` whose non-null pointers are valid.
pub unsafe fn check_array(
    array: *const FFI_ArrowArray,
    dt: &DataType,
    column: &str,
) -> Result<(), ShapeError> {
    // SAFETY: the caller's promise; FFI_ArrowArray is the C struct.
    unsafe { check_array_at(array.cast::<RawArray>(), dt, column, 0) }
}

unsafe fn check_array_at(
    array: *const RawArray,
    dt: &DataType,
    column: &str,
    depth: usize,
) -> Result<(), ShapeError> {
    let bad = |message: String| malformed(column, message);
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested deeper than {MAX_DEPTH} levels")));
    }
    let Some(children) = children_of(dt) else {
        return Err(ShapeError::Unsupported {
            column: column.to_owned(),
            data_type: dt.to_string(),
        });
    };
    // SAFETY: `array` is live (the caller's promise, or a child pointer checked non-null).
    let a = unsafe { &*array };
    if a.release.is_none() {
        return Err(bad("the array was already released".into()));
    }
    let slots = a.length.checked_add(a.offset);
    if a.length < 0 || a.offset < 0 || slots.is_none_or(|n| n > MAX_SLOTS) {
        return Err(bad(format!(
            "an array of {dt} has length {} at offset {}",
            a.length, a.offset
        )));
    }
    if a.null_count < -1 || a.null_count > a.length {
        return Err(bad(format!(
            "an array of {} values has {} nulls",
            a.length, a.null_count
        )));
    }
    let layout = arrow_data::layout(dt);
    let buffers = layout.buffers.len() + usize::from(layout.can_contain_null_mask);
    if a.n_buffers != buffers as i64 {
        return Err(bad(format!(
            "an array of {dt} has {} buffers, the type has {buffers}",
            a.n_buffers
        )));
    }
    if buffers > 0 && a.buffers.is_null() {
        return Err(bad(format!("an array of {dt} has no buffers")));
    }
    let has_offsets = matches!(
        dt,
        DataType::Binary
            | DataType::LargeBinary
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::Map(..)
    );
    // The importer reads the last offset to size the values buffer.
    // SAFETY: `buffers` holds `n_buffers` (checked: at least 2 for these types) pointers.
    if has_offsets && a.length > 0 && unsafe { *a.buffers.add(1) }.is_null() {
        return Err(bad(format!(
            "an array of {} values of {dt} has no offsets",
            a.length
        )));
    }
    if !a.dictionary.is_null() {
        return Err(bad(format!("an array of {dt} has a dictionary")));
    }
    if a.n_children != children.len() as i64 {
        return Err(bad(format!(
            "an array of {dt} has {} children, the type has {}",
            a.n_children,
            children.len()
        )));
    }
    if !children.is_empty() && a.children.is_null() {
        return Err(bad(format!("an array of {dt} has no children array")));
    }
    for (i, child_type) in children.into_iter().enumerate() {
        // SAFETY: `children` holds `n_children` (checked) pointers.
        let child = unsafe { *a.children.add(i) };
        if child.is_null() {
            return Err(bad(format!("child {i} of an array of {dt} is null")));
        }
        // A batch's children are its columns: name them in errors.
        let name = match (depth, dt) {
            (0, DataType::Struct(fields)) if column.is_empty() => fields[i].name().as_str(),
            _ => column,
        };
        // SAFETY: non-null child of a live array.
        unsafe { check_array_at(child, child_type, name, depth + 1)? };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, BinaryArray, RecordBatch, StructArray};
    use std::sync::Arc;

    fn exported(batch: &RecordBatch) -> (FFI_ArrowArray, FFI_ArrowSchema, DataType) {
        let data = StructArray::from(batch.clone()).into_data();
        let dt = data.data_type().clone();
        let (array, schema) = arrow_array::ffi::to_ffi(&data).unwrap();
        (array, schema, dt)
    }

    fn batch() -> RecordBatch {
        RecordBatch::try_from_iter([(
            "value",
            Arc::new(BinaryArray::from(vec![Some(&b"x"[..]), None])) as _,
        )])
        .unwrap()
    }

    #[test]
    fn an_exported_batch_passes() {
        let (array, schema, dt) = exported(&batch());
        unsafe {
            check_schema(&schema).unwrap();
            check_array(&array, &dt, "").unwrap();
        }
    }

    #[test]
    fn wrong_counts_and_null_pointers_are_errors_naming_the_column() {
        let (array, _schema, dt) = exported(&batch());
        let raw = (&array as *const FFI_ArrowArray)
            .cast_mut()
            .cast::<RawArray>();
        unsafe {
            // The struct claims a second child.
            (*raw).n_children = 2;
            let err = check_array(&array, &dt, "").unwrap_err();
            assert!(err.to_string().contains("has 2 children"), "{err}");
            (*raw).n_children = 1;
            // The value column's offsets pointer is null.
            let child = *(*raw).children;
            let offsets = (*child).buffers.add(1);
            let saved = *offsets;
            *offsets = std::ptr::null();
            let err = check_array(&array, &dt, "").unwrap_err();
            assert_eq!(
                err.to_string(),
                "column \"value\": the Arrow data is not valid: an array of 2 values of Binary \
                 has no offsets"
            );
            *offsets = saved;
            (*child).n_buffers = 2;
            let err = check_array(&array, &dt, "").unwrap_err();
            assert!(err.to_string().contains("has 2 buffers"), "{err}");
            (*child).n_buffers = 3;
            (*child).length = -1;
            assert!(check_array(&array, &dt, "").is_err());
            (*child).length = 2;
            check_array(&array, &dt, "").unwrap();
        }
    }

    #[test]
    fn unsupported_types_are_named() {
        let (array, _schema, _) = exported(&batch());
        let err = unsafe { check_array(&array, &DataType::Utf8View, "value") }.unwrap_err();
        assert_eq!(
            err.to_string(),
            "column \"value\": Utf8View cannot be produced"
        );
    }

    #[test]
    fn a_schema_with_a_null_child_is_an_error() {
        let (_array, schema, _) = exported(&batch());
        let raw = (&schema as *const FFI_ArrowSchema)
            .cast_mut()
            .cast::<RawSchema>();
        unsafe {
            let child = (*raw).children;
            let saved = *child;
            *child = std::ptr::null_mut();
            let err = check_schema(&schema).unwrap_err();
            assert!(err.to_string().contains("child 0 is null"), "{err}");
            *child = saved;
            check_schema(&schema).unwrap();
        }
    }
}
