//! What the Files API does to the workspace state, apart from HTTP: files and directories
//! inside UC volumes, keyed by their normalized path.

use super::FsEntry;
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::{remove_prefix, rename_prefix, with_prefix};

/// Moves a directory tree (a volume, schema or catalog rename).
pub fn rename_tree(st: &mut State, old: &str, new: &str) {
    rename_prefix(&mut st.files.files, old, new, |_, _| {});
}

pub fn remove_tree(st: &mut State, prefix: &str) {
    remove_prefix(&mut st.files.files, prefix);
}

fn not_found(path: &str) -> ApiError {
    ApiError::not_found(
        "NOT_FOUND",
        format!("The file or directory '{path}' does not exist."),
    )
}

/// `/Volumes/Cat/Sch/Vol/a//b/` → `/Volumes/cat/sch/vol/a/b`: the UC part is
/// case-insensitive like UC names, the rest is kept as is.
pub fn normalize(raw: &str) -> ApiResult<String> {
    let segs: Vec<&str> = raw.split('/').filter(|s| !s.is_empty()).collect();
    if segs.iter().any(|s| *s == "." || *s == "..") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{raw}' must be absolute without '.' or '..'"
        )));
    }
    if segs.first() != Some(&"Volumes") || segs.len() < 4 {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '/{raw}' is not in a volume (/Volumes/<catalog>/<schema>/<volume>/...)"
        )));
    }
    let mut out = String::new();
    for (i, s) in segs.iter().enumerate() {
        out.push('/');
        if (1..4).contains(&i) {
            out.push_str(&s.to_lowercase())
        } else {
            out.push_str(s)
        }
    }
    Ok(out)
}

/// The root of the volume `path` lies in, which must exist.
fn check_volume(st: &State, path: &str) -> ApiResult<String> {
    crate::uc::volume_root(st, path).ok_or_else(|| {
        ApiError::not_found(
            "NOT_FOUND",
            format!("The volume of '{path}' does not exist."),
        )
    })
}

fn is_dir(st: &State, root: &str, path: &str) -> bool {
    path == root || matches!(st.files.files.get(path), Some(FsEntry::Directory { .. }))
}

/// Creates the missing directories between the volume root and `dir` (inclusive).
fn mkdirs(st: &mut State, root: &str, dir: &str, now: i64) -> ApiResult<()> {
    let mut cur = root.to_string();
    for seg in dir[root.len()..].split('/').filter(|s| !s.is_empty()) {
        cur = format!("{cur}/{seg}");
        match st.files.files.get(&cur) {
            Some(FsEntry::File { .. }) => {
                return Err(ApiError::conflict(
                    "ALREADY_EXISTS",
                    format!("'{cur}' is a file, not a directory."),
                ));
            }
            Some(FsEntry::Directory { .. }) => {}
            None => {
                st.files
                    .files
                    .insert(cur.clone(), FsEntry::Directory { modified: now });
            }
        }
    }
    Ok(())
}

/// Writes a file (its missing parent directories too); an existing one only with
/// `overwrite`.
pub fn put_file(
    st: &mut State,
    ctx: &Ctx,
    path: &str,
    content: Vec<u8>,
    overwrite: bool,
) -> ApiResult<()> {
    let root = check_volume(st, path)?;
    if path == root {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{path}' is a volume, not a file"
        )));
    }
    match st.files.files.get(path) {
        Some(FsEntry::Directory { .. }) => {
            return Err(ApiError::conflict(
                "ALREADY_EXISTS",
                format!("'{path}' is a directory."),
            ));
        }
        Some(FsEntry::File { .. }) if !overwrite => {
            return Err(ApiError::conflict(
                "ALREADY_EXISTS",
                format!("The file '{path}' already exists and overwrite is false."),
            ));
        }
        _ => {}
    }
    let parent = path
        .rsplit_once('/')
        .map_or(root.as_str(), |(p, _)| p)
        .to_string();
    mkdirs(st, &root, &parent, ctx.now)?;
    st.files.files.insert(
        path.to_string(),
        FsEntry::File {
            content,
            modified: ctx.now,
        },
    );
    Ok(())
}

/// A file's content and when it was last written.
pub fn read_file<'a>(st: &'a State, path: &str) -> ApiResult<(&'a [u8], i64)> {
    match st.files.files.get(path) {
        Some(FsEntry::File { content, modified }) => Ok((content, *modified)),
        _ => Err(not_found(path)),
    }
}

pub fn delete_file(st: &mut State, path: &str) -> ApiResult<()> {
    match st.files.files.get(path) {
        Some(FsEntry::File { .. }) => {
            st.files.files.remove(path);
            Ok(())
        }
        Some(FsEntry::Directory { .. }) => Err(ApiError::invalid(format!(
            "'{path}' is a directory; use the directories API."
        ))),
        None => Err(not_found(path)),
    }
}

/// Creates a directory with its missing parents.
pub fn put_dir(st: &mut State, ctx: &Ctx, path: &str) -> ApiResult<()> {
    let root = check_volume(st, path)?;
    mkdirs(st, &root, path, ctx.now)
}

/// Whether `path` is a directory of an existing volume (or the volume itself).
pub fn dir_exists(st: &State, path: &str) -> bool {
    crate::uc::volume_root(st, path).is_some_and(|root| is_dir(st, &root, path))
}

/// One entry of a directory listing.
#[derive(Debug, PartialEq)]
pub struct DirEntry<'a> {
    pub path: &'a str,
    pub name: &'a str,
    /// `None` for a directory.
    pub file_size: Option<usize>,
    pub last_modified: i64,
}

/// One page of a directory's entries, in path order.
pub fn list_dir<'a>(
    st: &'a State,
    path: &str,
    page: &Page,
) -> ApiResult<(Vec<DirEntry<'a>>, Option<String>)> {
    let root = check_volume(st, path)?;
    if !is_dir(st, &root, path) {
        return Err(not_found(path));
    }
    let prefix = format!("{path}/");
    let n = prefix.len();
    let iter = st
        .files
        .files
        .range(prefix.clone()..)
        .take_while(move |(k, _)| k.starts_with(&prefix))
        .filter(|(k, _)| !k[n..].contains('/'))
        .filter(|(k, _)| page.after.as_deref().is_none_or(|a| k.as_str() > a))
        .map(|(k, e)| {
            let (file_size, last_modified) = match e {
                FsEntry::Directory { modified } => (None, *modified),
                FsEntry::File { content, modified } => (Some(content.len()), *modified),
            };
            let entry = DirEntry {
                path: k,
                name: &k[n..],
                file_size,
                last_modified,
            };
            (k.clone(), entry)
        });
    Ok(page.collect(iter))
}

/// Deletes an empty directory (not a volume's root).
pub fn delete_dir(st: &mut State, path: &str) -> ApiResult<()> {
    let root = check_volume(st, path)?;
    if path == root {
        return Err(ApiError::invalid(format!(
            "'{path}' is a volume; delete the volume instead."
        )));
    }
    if !matches!(st.files.files.get(path), Some(FsEntry::Directory { .. })) {
        return Err(not_found(path));
    }
    if with_prefix(&st.files.files, &format!("{path}/"))
        .next()
        .is_some()
    {
        return Err(ApiError::not_empty(
            "DIRECTORY_NOT_EMPTY",
            format!("The directory '{path}' is not empty."),
        ));
    }
    st.files.files.remove(path);
    Ok(())
}

/// Whether a file exists at a volume path (used by job runs).
pub fn file_exists(st: &State, raw: &str) -> bool {
    normalize(raw).is_ok_and(|p| matches!(st.files.files.get(&p), Some(FsEntry::File { .. })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(now: i64) -> Ctx<'static> {
        Ctx::for_test(now, 100)
    }

    use serde_json::Map;

    fn with_volume() -> State {
        let mut st = State::new("u@x", 0);
        st.uc.volumes.insert("c.s.v".into(), Map::new());
        st
    }

    #[test]
    fn paths_are_normalized_and_must_lie_in_a_volume() {
        assert_eq!(
            normalize("/Volumes/C/S/V//a/B/").unwrap(),
            "/Volumes/c/s/v/a/B"
        );
        assert!(normalize("/Volumes/c/s").is_err());
        assert!(normalize("/Volumes/c/s/v/../x").is_err());
        let mut st = with_volume();
        let e = put_file(&mut st, &ctx(1), "/Volumes/c/s/w/f", Vec::new(), true).unwrap_err();
        assert_eq!(
            e.message,
            "The volume of '/Volumes/c/s/w/f' does not exist."
        );
    }

    #[test]
    fn a_file_write_makes_its_directories_and_lists_show_one_level() {
        let mut st = with_volume();
        put_file(
            &mut st,
            &ctx(1),
            "/Volumes/c/s/v/a/b/f.txt",
            b"hi".to_vec(),
            true,
        )
        .unwrap();
        assert!(dir_exists(&st, "/Volumes/c/s/v/a/b") && dir_exists(&st, "/Volumes/c/s/v"));
        assert!(file_exists(&st, "/Volumes/C/s/v/a/b/f.txt"));
        assert_eq!(
            read_file(&st, "/Volumes/c/s/v/a/b/f.txt").unwrap(),
            (&b"hi"[..], 1)
        );
        let e = put_file(
            &mut st,
            &ctx(2),
            "/Volumes/c/s/v/a/b/f.txt",
            Vec::new(),
            false,
        )
        .unwrap_err();
        assert_eq!(e.code, "ALREADY_EXISTS");
        let all = Page::new(None, None, 1000, 1000, "page_size").unwrap();
        let (entries, _) = list_dir(&st, "/Volumes/c/s/v/a", &all).unwrap();
        assert_eq!(
            entries,
            [DirEntry {
                path: "/Volumes/c/s/v/a/b",
                name: "b",
                file_size: None,
                last_modified: 1
            }]
        );
        assert_eq!(
            delete_dir(&mut st, "/Volumes/c/s/v/a/b").unwrap_err().code,
            "DIRECTORY_NOT_EMPTY"
        );
        delete_file(&mut st, "/Volumes/c/s/v/a/b/f.txt").unwrap();
        delete_dir(&mut st, "/Volumes/c/s/v/a/b").unwrap();
        assert!(delete_dir(&mut st, "/Volumes/c/s/v").is_err());
    }
}
