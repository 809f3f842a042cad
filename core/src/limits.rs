//! Limits no real configuration reaches, in one place.
//!
//! Each exists so that hostile or mistaken input ends in a located error instead of an
//! allocation failure (which aborts the process), a panic or a command that never returns.
//! The values are far above anything a provider's service itself accepts, so a working
//! configuration never meets them; docs/language.md lists them for users.

use crate::value::{Object, Value};
use std::io::Read;
use std::path::Path;

/// The largest file brickform reads: configuration files, `--var-file`s, `file()` and the
/// other file functions, `templatefile`, a resource's `source =`, saved plans. Larger than
/// any file a configuration ships to a service (imports of source files stop at 10 MB on
/// the ones brickform knows); the whole file is held in memory.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The longest string an expression may produce, in bytes: `file()` of a larger file is an
/// error (a larger file can still be uploaded with `source =`, which is not a string).
pub const MAX_STRING_BYTES: usize = 64 * 1024 * 1024;

/// The most elements one list, set, map or object may hold.
pub const MAX_COLLECTION_ELEMENTS: usize = 1_000_000;

/// The most instances one resource or data block may expand to with `count` or `for_each`.
pub const MAX_INSTANCES: usize = 100_000;

/// How much data one expression's evaluation may build or copy, in bytes as
/// [`value_bytes`] counts them: every value read from a variable, local or resource, every
/// function result and every rendered template is charged. This bounds memory and time
/// where each single value stays under the limits above but copies multiply them (a local
/// that doubles the previous one, a `for` over a `for`).
pub const MAX_EVALUATION_BYTES: u64 = 256 * 1024 * 1024;

/// How much data a whole plan may hold in evaluated values (locals, instances, data
/// sources), as [`value_bytes`] counts them. Each expression stays under
/// [`MAX_EVALUATION_BYTES`], but one large value copied into many instances or many locals
/// could still exhaust memory: this bounds their sum.
pub const MAX_PLAN_BYTES: u64 = 1024 * 1024 * 1024;

/// What one step of iteration (a `for` element, a splat element) costs against
/// [`MAX_EVALUATION_BYTES`], so nested loops over small literals are bounded too.
pub const STEP_BYTES: u64 = ELEMENT_BYTES;

/// What one element of a value costs in [`value_bytes`]: its in-memory size, so a million
/// empty strings cost about what their memory does.
const ELEMENT_BYTES: u64 = std::mem::size_of::<Value>() as u64;

/// How deeply lists, maps and objects may nest in a value the plan holds (a local, an
/// instance with its attributes, an output). Far past any service's documents, and low
/// enough that whatever walks a value (state and plan files, renderers, diffs) never
/// nests deeper than JSON readers accept.
pub const MAX_VALUE_DEPTH: usize = 64;

/// The approximate memory a value holds: its elements plus the bytes of its strings and
/// keys. Stops counting once past `cap` (it is only compared against a limit), so measuring
/// a huge value costs no more than the limit.
pub fn value_bytes(v: &Value, cap: u64) -> u64 {
    measure(v, cap).0
}

/// [`value_bytes`], and how deeply the value nests (a scalar is 0, `[1]` is 1), as far as
/// it was measured.
pub fn measure(v: &Value, cap: u64) -> (u64, usize) {
    match v {
        // Most values measured are scalars: no stack for them.
        Value::String(s) => return (ELEMENT_BYTES.saturating_add(s.len() as u64), 0),
        Value::List(_) | Value::Object(_) => {}
        _ => return (ELEMENT_BYTES, 0),
    }
    let mut total = 0u64;
    let mut deepest = 0;
    let mut stack = Vec::with_capacity(16);
    stack.push((v, 0usize));
    while let Some((v, depth)) = stack.pop() {
        total = total.saturating_add(ELEMENT_BYTES);
        match v {
            Value::String(s) => total = total.saturating_add(s.len() as u64),
            Value::List(l) => {
                deepest = deepest.max(depth + 1);
                stack.extend(l.iter().map(|v| (v, depth + 1)));
            }
            Value::Object(o) => {
                deepest = deepest.max(depth + 1);
                for (k, v) in o.iter() {
                    total = total.saturating_add(k.len() as u64);
                    stack.push((v, depth + 1));
                }
            }
            _ => {}
        }
        if total > cap {
            break;
        }
    }
    (total, deepest)
}

/// [`measure`] of `Value::Object(o)`.
pub fn measure_object(o: &Object, cap: u64) -> (u64, usize) {
    let mut total = ELEMENT_BYTES;
    let mut deepest = 1;
    for (k, v) in o {
        let (size, depth) = measure(v, cap.saturating_sub(total));
        total = total.saturating_add(k.len() as u64).saturating_add(size);
        deepest = deepest.max(depth + 1);
        if total > cap {
            break;
        }
    }
    (total, deepest)
}

/// A limit a value breaks, or one about to be built would; said as a sentence for a
/// diagnostic's detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error(
        "the value nests lists, maps or objects {depth} levels deep, more than the limit of {MAX_VALUE_DEPTH}"
    )]
    TooDeep { depth: usize },
    #[error(
        "the result would be a string of {len} bytes, more than the limit of {} MiB",
        MAX_STRING_BYTES >> 20
    )]
    StringTooLong { len: usize },
    #[error(
        "the result would be a collection of {len} elements, more than the limit of {MAX_COLLECTION_ELEMENTS}"
    )]
    TooManyElements { len: usize },
}

/// A value nesting `depth` levels is too deep.
pub fn check_depth(depth: usize) -> Result<(), LimitError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(LimitError::TooDeep { depth });
    }
    Ok(())
}

/// The first limit a value breaks — a string over [`MAX_STRING_BYTES`] or a collection over
/// [`MAX_COLLECTION_ELEMENTS`] — as a sentence for a diagnostic.
pub fn check_value(v: &Value) -> Result<(), LimitError> {
    match v {
        Value::String(s) => return check_string_len(s.len()),
        Value::List(_) | Value::Object(_) => {}
        _ => return Ok(()),
    }
    let mut stack = Vec::with_capacity(16);
    stack.push(v);
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => check_string_len(s.len())?,
            Value::List(l) => {
                check_collection_len(l.len())?;
                stack.extend(l.iter());
            }
            Value::Object(o) => {
                check_collection_len(o.len())?;
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    Ok(())
}

/// A string of `len` bytes (about to be built, or built) is too long.
pub fn check_string_len(len: usize) -> Result<(), LimitError> {
    if len > MAX_STRING_BYTES {
        return Err(LimitError::StringTooLong { len });
    }
    Ok(())
}

/// A collection of `len` elements (about to be built, or built) is too large.
pub fn check_collection_len(len: usize) -> Result<(), LimitError> {
    if len > MAX_COLLECTION_ELEMENTS {
        return Err(LimitError::TooManyElements { len });
    }
    Ok(())
}

/// Why a path cannot be read as a file, checked before it is opened: a named pipe would
/// block the reader forever, a device (`/dev/urandom`, `/dev/zero`) never ends, a directory
/// or a dangling link fails only later and less clearly. `None` for a regular file (or a
/// link to one).
pub fn not_a_file(path: &Path) -> Option<String> {
    let link = std::fs::symlink_metadata(path).ok();
    let is_link = link.as_ref().is_some_and(|m| m.file_type().is_symlink());
    let target = || {
        std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if is_link && e.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!(
                "it is a symbolic link to {}, which does not exist",
                target()
            ));
        }
        Err(e) => return Some(e.to_string()),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return None;
    }
    let what = file_type_name(&ft);
    Some(if is_link {
        format!(
            "it is a symbolic link to {}, which is {what}, not a file",
            target()
        )
    } else {
        format!("it is {what}, not a file")
    })
}

#[cfg(unix)]
fn file_type_name(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a named pipe (FIFO)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn file_type_name(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Why [`read_file`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("no file exists at {0}")]
    NotFound(String),
    /// Not a regular file; the reason says what it is.
    #[error("{0}")]
    NotAFile(String),
    #[error("it is {size} bytes, more than the limit of {} MiB", MAX_FILE_BYTES >> 20)]
    TooLarge { size: u64 },
    #[error("{0}")]
    Io(std::io::Error),
    /// Read by [`read_text_file`]: where its first byte that is not UTF-8 is.
    #[error("it is not UTF-8 text (the first invalid byte is at line {line}, column {column})")]
    NotUtf8 { line: usize, column: usize },
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`]. Anything else — a named pipe, a
/// device, a directory, a socket — is refused before it is opened; the file is opened
/// without blocking and checked again once open, so a path swapped for a pipe in between
/// cannot block either, and a file that grows past the limit while read is cut off there.
pub fn read_file(path: &Path) -> Result<Vec<u8>, ReadError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(why) = not_a_file(path).filter(|w| w.contains("symbolic link")) {
                return Err(ReadError::NotAFile(why));
            }
            return Err(ReadError::NotFound(path.display().to_string()));
        }
        _ => {}
    }
    if let Some(why) = not_a_file(path) {
        return Err(ReadError::NotAFile(why));
    }
    let file = open_nonblocking(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile(format!(
            "it is {}, not a file",
            file_type_name(&meta.file_type())
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge { size: meta.len() });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// [`read_file`] as UTF-8 text; its error says why in words (for a diagnostic's detail).
pub fn read_text_file(path: &Path) -> Result<String, ReadError> {
    let bytes = read_file(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        let column = valid.iter().rev().take_while(|b| **b != b'\n').count() + 1;
        ReadError::NotUtf8 { line, column }
    })
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer. It has no effect
    // on reads of a regular file, the only kind read after the check that follows.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(ok.success());
        let err = read_file(&fifo).unwrap_err().to_string();
        assert!(err.contains("named pipe"), "{err}");
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let err = read_file(Path::new("/dev/urandom"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a device, not a file"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = read_file(dir.path()).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
        let err = read_file(&dir.path().join("none")).unwrap_err();
        assert!(matches!(err, ReadError::NotFound(_)), "{err}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big");
        // Sparse: takes no disk space.
        std::fs::File::create(&f)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let err = read_file(&f).unwrap_err().to_string();
        assert!(err.contains("more than the limit of 256 MiB"), "{err}");
        std::fs::File::create(&f).unwrap().set_len(10).unwrap();
        assert_eq!(read_file(&f).unwrap().len(), 10);
    }

    #[test]
    fn the_language_reference_lists_each_limit() {
        let doc = include_str!("../../docs/language.md");
        for row in [
            format!("| {} MiB |", MAX_FILE_BYTES >> 20),
            format!("| {} MiB |", MAX_STRING_BYTES >> 20),
            format!("| {} MiB |", MAX_EVALUATION_BYTES >> 20),
            format!("at most {MAX_INSTANCES}"),
            format!("more than the limit of {MAX_COLLECTION_ELEMENTS}"),
        ] {
            assert!(doc.contains(&row), "docs/language.md lacks {row:?}");
        }
    }

    #[test]
    fn value_bytes_stops_at_the_cap() {
        let big = Value::List(vec![Value::String("x".repeat(100)); 1000]);
        assert!(value_bytes(&big, u64::MAX) > 100_000);
        assert!(value_bytes(&big, 1000) < 2000);
        let long = Value::List(vec![Value::Null; MAX_COLLECTION_ELEMENTS + 1]);
        assert!(
            check_value(&long)
                .unwrap_err()
                .to_string()
                .contains("1000001 elements")
        );
    }
}
