//! File functions. Relative paths resolve against the configuration directory, never the
//! process's working directory, so a plan does not depend on where brickform was started.

use super::hashing::{Algorithm, Encoding, digest};
use super::{Args, Outcome, Spec};
use crate::value::Value;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::path::{Path, PathBuf};

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("abspath", &["path"], abspath),
    Spec::fixed("file", &["path"], file),
    Spec::fixed("filebase64", &["path"], filebase64),
    Spec::fixed("filebase64sha256", &["path"], |a| {
        file_digest(a, Algorithm::Sha256, Encoding::Base64)
    }),
    Spec::fixed("filebase64sha512", &["path"], |a| {
        file_digest(a, Algorithm::Sha512, Encoding::Base64)
    }),
    Spec::fixed("fileexists", &["path"], fileexists),
    Spec::fixed("filemd5", &["path"], |a| {
        file_digest(a, Algorithm::Md5, Encoding::Hex)
    }),
    Spec::fixed("fileset", &["path", "pattern"], fileset),
    Spec::fixed("filesha1", &["path"], |a| {
        file_digest(a, Algorithm::Sha1, Encoding::Hex)
    }),
    Spec::fixed("filesha256", &["path"], |a| {
        file_digest(a, Algorithm::Sha256, Encoding::Hex)
    }),
    Spec::fixed("filesha512", &["path"], |a| {
        file_digest(a, Algorithm::Sha512, Encoding::Hex)
    }),
    Spec::fixed("pathexpand", &["path"], pathexpand),
];

/// `~` or `~/…` with the home directory in place of `~`, as Terraform (go-homedir) expands
/// it; any other path unchanged. `~user/…` cannot be expanded.
fn expand_home(path: &str) -> Result<PathBuf, &'static str> {
    let Some(rest) = path.strip_prefix('~') else {
        return Ok(PathBuf::from(path));
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err("cannot expand user-specific home dir");
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or("cannot expand ~: HOME is not set")?;
    Ok(clean(&Path::new(&home).join(rest.trim_start_matches('/'))))
}

/// `path` with `.` and `..` steps resolved lexically (symbolic links are not followed), as
/// Go's `filepath.Clean` does; `..` above the root stays at the root.
fn clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// The text of a path with `/` separators.
fn slashed(path: &Path) -> String {
    path.to_string_lossy()
        .replace(std::path::MAIN_SEPARATOR, "/")
}

/// `pathexpand(path)`: the home directory in place of a leading `~`.
fn pathexpand(a: &Args) -> Outcome<Value> {
    let given = a.string(0)?;
    let expanded = expand_home(&given).map_err(|why| a.invalid(0, why))?;
    Ok(Value::String(if given.starts_with('~') {
        slashed(&expanded)
    } else {
        given
    }))
}

/// `abspath(path)`: an absolute, cleaned path. A relative one is taken from the
/// configuration directory (where the command runs, as Terraform takes it from its working
/// directory).
fn abspath(a: &Args) -> Outcome<Value> {
    let given = a.string(0)?;
    let base = std::path::absolute(a.ctx.base_dir).map_err(|e| a.invalid(0, e))?;
    Ok(Value::String(slashed(&clean(&base.join(&given)))))
}

/// Resolves argument `i` as a path: `~/` is the home directory, relative paths are taken
/// from the configuration directory.
fn resolve(a: &Args, i: usize) -> Outcome<(String, PathBuf)> {
    let given = a.string(i)?;
    let expanded = expand_home(&given).map_err(|why| a.invalid(i, why))?;
    let full = if expanded.is_absolute() {
        expanded
    } else {
        a.ctx.base_dir.join(expanded)
    };
    Ok((given, full))
}

/// Reads argument 0 as a file: a regular file only (a named pipe would block, a device
/// never end) and at most [`crate::limits::MAX_FILE_BYTES`].
fn read(a: &Args) -> Outcome<(String, Vec<u8>)> {
    use crate::limits::ReadError;
    let (given, path) = resolve(a, 0)?;
    match crate::limits::read_file(&path) {
        Ok(bytes) => Ok((given, bytes)),
        Err(ReadError::NotFound(_)) => Err(a.invalid(
            0,
            format_args!(
                "no file exists at {}; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource",
                crate::value::quote(&given)
            ),
        )),
        Err(e) => Err(a.invalid(0, format_args!("cannot read {}: {e}", crate::value::quote(&given)))),
    }
}

fn file(a: &Args) -> Outcome<Value> {
    let (given, bytes) = read(a)?;
    String::from_utf8(bytes).map(Value::String).map_err(|_| {
        a.invalid(
            0,
            format_args!(
                "contents of {} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead",
                crate::value::quote(&given)
            ),
        )
    })
}

fn filebase64(a: &Args) -> Outcome<Value> {
    Ok(Value::String(STANDARD.encode(read(a)?.1)))
}

fn file_digest(a: &Args, algorithm: Algorithm, encoding: Encoding) -> Outcome<Value> {
    Ok(Value::String(digest(&read(a)?.1, algorithm, encoding)))
}

/// True for a regular file, false when nothing is there; anything else (a directory, an
/// unreadable path) is an error rather than a silent false.
fn fileexists(a: &Args) -> Outcome<Value> {
    let (given, path) = resolve(a, 0)?;
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => Ok(Value::Bool(true)),
        Ok(_) => Err(a.invalid(
            0,
            format_args!("{} is not a regular file", crate::value::quote(&given)),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Bool(false)),
        Err(e) => Err(a.invalid(
            0,
            format_args!("failed to stat {}: {e}", crate::value::quote(&given)),
        )),
    }
}

/// A file pattern as the glob crate takes it: a last part `**` stands for every file below
/// (as in Terraform's `fileset` and its users' habits), where glob's `**` alone matches
/// only folders.
pub fn glob_pattern(pattern: &str) -> std::borrow::Cow<'_, str> {
    if pattern == "**" || pattern.ends_with("/**") {
        std::borrow::Cow::Owned(format!("{pattern}/*"))
    } else {
        std::borrow::Cow::Borrowed(pattern)
    }
}

/// `fileset(path, pattern)`: the regular files under `path` matching the glob (`*`, `**`,
/// `?`, `[...]`), as sorted paths relative to `path` with `/` separators.
fn fileset(a: &Args) -> Outcome<Value> {
    let (_, root) = resolve(a, 0)?;
    // Globbed from an absolute root: glob writes a relative root's matches without its
    // leading `./`, and none of them would then lie under the root as given.
    let root = std::path::absolute(&root).unwrap_or(root);
    let pattern = a.string(1)?;
    let root_text = root.to_string_lossy();
    let full = format!(
        "{}/{}",
        glob::Pattern::escape(root_text.trim_end_matches('/')),
        glob_pattern(&pattern)
    );
    let entries = glob::glob(&full).map_err(|e| {
        a.invalid(
            1,
            format_args!(
                "failed to glob pattern {}: {e}",
                crate::value::quote(&pattern)
            ),
        )
    })?;
    let mut out = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| a.failed(format_args!("failed to read {}: {e}", e.path().display())))?;
        if !path.is_file() {
            continue;
        }
        if let Ok(rel) = path.strip_prefix(&root) {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(Value::String(parts.join("/")));
        }
    }
    Ok(Value::List(super::make_set(out)?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test fixtures: a failure to set up should abort the test
mod tests {
    use super::super::test_support::*;
    use super::super::{FunctionContext, call};
    use crate::value::Value;

    fn run_in(
        dir: &std::path::Path,
        name: &str,
        args: Vec<Value>,
    ) -> Result<Value, super::super::FunctionError> {
        call(name, &args, &FunctionContext { base_dir: dir })
    }

    #[test]
    fn paths_are_made_absolute_and_expanded_as_terraform_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().display().to_string();
        let abs = |p: &str| run_in(dir.path(), "abspath", vec![s(p)]).unwrap();
        assert_eq!(abs("a/b/../c.txt"), s(&format!("{root}/a/c.txt")));
        assert_eq!(abs("./x/./y/"), s(&format!("{root}/x/y")));
        assert_eq!(abs("/etc/../tmp/./z"), s("/tmp/z"));
        assert_eq!(abs("/../.."), s("/"));
        // A relative configuration directory is taken from where the command runs.
        let cwd = std::env::current_dir().unwrap().display().to_string();
        assert_eq!(
            run_in(std::path::Path::new("."), "abspath", vec![s("q")]).unwrap(),
            s(&format!("{cwd}/q"))
        );
        let home = std::env::var("HOME").unwrap();
        let expand = |p: &str| run_in(dir.path(), "pathexpand", vec![s(p)]);
        assert_eq!(expand("~/.ssh/id").unwrap(), s(&format!("{home}/.ssh/id")));
        assert_eq!(expand("~").unwrap(), s(&home));
        assert_eq!(expand("rel/~/x").unwrap(), s("rel/~/x"));
        assert_eq!(expand("/abs").unwrap(), s("/abs"));
        let err = expand("~bob/x").unwrap_err();
        assert!(
            err.message.contains("cannot expand user-specific home dir"),
            "{}",
            err.message
        );
        assert_eq!(err.arg, Some(0));
        assert!(super::clean(std::path::Path::new("../../a/..")) == std::path::Path::new("../.."));
    }

    fn setup() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hello.txt"), "hello world").unwrap();
        std::fs::write(dir.path().join("bin.dat"), [0xff, 0xfe]).unwrap();
        std::fs::create_dir_all(dir.path().join("sql/nested")).unwrap();
        std::fs::write(dir.path().join("sql/a.sql"), "select 1").unwrap();
        std::fs::write(dir.path().join("sql/nested/b.sql"), "select 2").unwrap();
        std::fs::write(dir.path().join("sql/readme.md"), "x").unwrap();
        dir
    }

    #[test]
    fn reading_files() {
        let dir = setup();
        let d = dir.path();
        assert_eq!(
            run_in(d, "file", vec![s("hello.txt")]).unwrap(),
            s("hello world")
        );
        assert_eq!(
            run_in(d, "filebase64", vec![s("bin.dat")]).unwrap(),
            s("//4=")
        );
        assert_eq!(
            run_in(d, "filesha256", vec![s("hello.txt")]).unwrap(),
            s("b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9")
        );
        assert_eq!(
            run_in(d, "filemd5", vec![s("hello.txt")]).unwrap(),
            s("5eb63bbbe01eeed093cb22bb8f5acdc3")
        );
        assert_eq!(
            run_in(d, "filebase64sha256", vec![s("hello.txt")]).unwrap(),
            s("uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=")
        );
        assert_eq!(
            run_in(d, "filesha1", vec![s("hello.txt")]).unwrap(),
            s("2aae6c35c94fcfb415dbe95f408b9ce91ee846ed")
        );
        let abs = d.join("hello.txt").to_string_lossy().into_owned();
        assert_eq!(
            run_in(std::path::Path::new("/"), "file", vec![s(&abs)]).unwrap(),
            s("hello world")
        );
    }

    #[test]
    fn file_errors() {
        let dir = setup();
        let d = dir.path();
        let e = run_in(d, "file", vec![s("missing.txt")]).unwrap_err();
        assert!(
            e.message.starts_with(
                "Invalid value for \"path\" parameter: no file exists at \"missing.txt\""
            ),
            "{}",
            e.message
        );
        assert_eq!(e.arg, Some(0));
        assert!(
            run_in(d, "file", vec![s("bin.dat")])
                .unwrap_err()
                .message
                .contains("not valid UTF-8")
        );
        for f in [
            "filebase64",
            "filesha256",
            "filemd5",
            "filebase64sha256",
            "filesha1",
            "filesha512",
            "filebase64sha512",
        ] {
            assert!(
                run_in(d, f, vec![s("nope")])
                    .unwrap_err()
                    .message
                    .contains("no file exists"),
                "{f}"
            );
        }
        assert_eq!(ok("file", vec![Value::Unknown]), Value::Unknown);
    }

    #[test]
    fn fileset_finds_files_under_a_relative_configuration_directory() {
        // The directory the configuration is in, as `-C DIR` or a run from it gives it:
        // relative to where brickform runs.
        let dir = tempfile::tempdir_in(".").unwrap();
        let name = dir.path().file_name().unwrap().to_owned();
        std::fs::create_dir_all(dir.path().join("notebooks")).unwrap();
        std::fs::write(dir.path().join("notebooks/a.py"), "1").unwrap();
        std::fs::write(dir.path().join("x.txt"), "1").unwrap();
        for base in [
            std::path::Path::new(".").join(&name),
            std::path::PathBuf::from(&name),
        ] {
            for (root, pattern, want) in [
                ("notebooks", "*.py", "a.py"),
                (".", "*.txt", "x.txt"),
                ("./notebooks", "*", "a.py"),
            ] {
                assert_eq!(
                    run_in(&base, "fileset", vec![s(root), s(pattern)]).unwrap(),
                    strs(&[want]),
                    "{} {root} {pattern}",
                    base.display()
                );
            }
        }
    }

    #[test]
    fn exists_and_sets() {
        let dir = setup();
        let d = dir.path();
        assert_eq!(
            run_in(d, "fileexists", vec![s("hello.txt")]).unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            run_in(d, "fileexists", vec![s("nope.txt")]).unwrap(),
            Value::Bool(false)
        );
        assert!(
            run_in(d, "fileexists", vec![s("sql")])
                .unwrap_err()
                .message
                .contains("is not a regular file")
        );
        assert_eq!(
            run_in(d, "fileset", vec![s("sql"), s("*.sql")]).unwrap(),
            strs(&["a.sql"])
        );
        assert_eq!(
            run_in(d, "fileset", vec![s("sql"), s("**/*.sql")]).unwrap(),
            strs(&["a.sql", "nested/b.sql"])
        );
        assert_eq!(
            run_in(d, "fileset", vec![s("."), s("*.txt")]).unwrap(),
            strs(&["hello.txt"])
        );
        // `**` as the last part: every file below, as in Terraform.
        assert_eq!(
            run_in(d, "fileset", vec![s("sql"), s("**")]).unwrap(),
            strs(&["a.sql", "nested/b.sql", "readme.md"])
        );
        assert_eq!(
            run_in(d, "fileset", vec![s("."), s("sql/nested/**")]).unwrap(),
            strs(&["sql/nested/b.sql"])
        );
        assert_eq!(
            run_in(d, "fileset", vec![s("sql"), s("*.none")]).unwrap(),
            list(vec![])
        );
        assert!(
            run_in(d, "fileset", vec![s("sql"), s("[")])
                .unwrap_err()
                .message
                .contains("failed to glob pattern")
        );
    }
}
