//! The console's input: lines of standard input, read on a thread of their own. A read
//! that waits for the terminal must not hold the async runtime, where Ctrl-C is handled
//! (see `crate::interrupt`), and tokio's own stdin would keep the runtime from shutting
//! down until the next line arrives.

use std::io::{BufRead, Read};

/// The longest line read, in bytes: as long as the longest string an expression may make.
pub const MAX_LINE_BYTES: usize = brickform_core::limits::MAX_STRING_BYTES;

/// One line of input.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// Its text, without its line ending; bytes that are not UTF-8 become U+FFFD.
    Text(String),
    /// Longer than [`MAX_LINE_BYTES`]: skipped up to its end.
    TooLong,
}

/// Starts reading standard input; the receiver yields each line, an error, then nothing.
pub fn spawn() -> tokio::sync::mpsc::Receiver<std::io::Result<Line>> {
    // One line ahead at most: a long input is not held in memory all at once.
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let next = match read_line(&mut input, MAX_LINE_BYTES) {
                Ok(None) => return,
                Ok(Some(line)) => Ok(line),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let failed = next.is_err();
            // The console stopped reading (`exit`): nothing waits for more.
            if tx.blocking_send(next).is_err() || failed {
                return;
            }
        }
    });
    rx
}

/// The next line of `input`, at most `max` bytes long; `None` at its end.
pub fn read_line(input: &mut impl BufRead, max: usize) -> std::io::Result<Option<Line>> {
    let mut buf = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    if input.by_ref().take(limit).read_until(b'\n', &mut buf)? == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') && buf.len() > max {
        // The rest of the line is read in small pieces and dropped.
        loop {
            let mut rest = Vec::new();
            let n = input
                .by_ref()
                .take(64 * 1024)
                .read_until(b'\n', &mut rest)?;
            if n == 0 || rest.last() == Some(&b'\n') {
                return Ok(Some(Line::TooLong));
            }
        }
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(Some(Line::Text(String::from_utf8_lossy(&buf).into_owned())))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = std::io::Cursor::new(input.to_vec());
        std::iter::from_fn(|| read_line(&mut r, max).unwrap()).collect()
    }

    #[test]
    fn lines_without_their_endings() {
        assert_eq!(
            all(b"a\r\nb\n\nc", 100),
            [
                Line::Text("a".into()),
                Line::Text("b".into()),
                Line::Text("".into()),
                Line::Text("c".into())
            ]
        );
        assert_eq!(all(b"", 100), []);
    }

    #[test]
    fn a_line_too_long_is_skipped_whole() {
        assert_eq!(
            all(b"12345\n123456\nok\n1234567", 5),
            [
                Line::Text("12345".into()),
                Line::TooLong,
                Line::Text("ok".into()),
                Line::TooLong
            ]
        );
    }

    #[test]
    fn bytes_that_are_not_text_are_replaced() {
        assert_eq!(
            all(b"\xff\xfe\"x\"\n", 100),
            [Line::Text("\u{fffd}\u{fffd}\"x\"".into())]
        );
    }
}
