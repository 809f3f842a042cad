//! `examples/quickstart` applied and destroyed on the local workspace (`--local`), from a
//! copy so the repository's example directory stays clean; every example formatted and
//! valid.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{local_dump, objects, run, run_ok};
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == ".brickform" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

#[test]
fn quickstart_applies_with_no_drift_and_destroys_to_nothing() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_dir(&src, d);

    run_ok(d, &["--local", "validate"], &[]);
    let out = run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    assert!(
        out.contains("Apply complete! Resources: 6 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(
        out.contains("volume_path = \"/Volumes/quickstart_dev/raw/landing\""),
        "{out}"
    );
    let made = objects(&local_dump(d));
    let mut want = vec![
        "catalog:quickstart_dev".to_string(),
        "schema:quickstart_dev.raw".into(),
        "schema:quickstart_dev.silver".into(),
        "volume:quickstart_dev.raw.landing".into(),
        "file:/Volumes/quickstart_dev/raw/landing/data.csv".into(),
        "workspace:/Users/local-user@brickform.local/quickstart/hello".into(),
    ];
    want.sort();
    assert_eq!(made, want);
    // `local serve --local` serves that same workspace, so the SDK or a browser sees it.
    {
        let serve = common::Serve::start_local(d);
        let listed = serve.ok("GET", "/api/2.1/unity-catalog/catalogs", None);
        let names: Vec<&str> = listed["catalogs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert!(names.contains(&"quickstart_dev"), "{listed}");
    }
    // The file holds the example's data.csv, byte for byte.
    let dump = local_dump(d);
    let stored = dump["files"]["/Volumes/quickstart_dev/raw/landing/data.csv"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let data = std::fs::read(src.join("src/data.csv")).unwrap();
    assert_eq!(stored, b64(&data));

    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "no drift after apply\n{out}\n{err}");

    // Editing the uploaded source is a planned update of that file alone.
    std::fs::write(d.join("src/data.csv"), "id,name\n1,a\n2,b\n3,c\n").unwrap();
    let (code, out, _) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("# databricks_file.sample will be updated in-place")
            && out.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");

    let out = run_ok(d, &["--local", "destroy", "--auto-approve"], &[]);
    assert!(
        out.contains("Destroy complete! 6 destroyed, 0 left behind."),
        "{out}"
    );
    let dump = local_dump(d);
    assert_eq!(objects(&dump), Vec::<String>::new());
    assert!(
        dump["catalogs"].get("quickstart_dev").is_none(),
        "{}",
        dump["catalogs"]
    );
    let out = run_ok(d, &["--local", "destroy", "--auto-approve"], &[]);
    assert!(
        out.contains("0 destroyed") || out.contains("No objects need to be destroyed"),
        "{out}"
    );
}

fn b64(b: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Every example is as `brickform fmt` writes it, and validates: they are what newcomers
/// copy.
#[test]
fn every_example_is_formatted_and_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        seen += 1;
        let copy = common::example_copy(dir.file_name().unwrap().to_str().unwrap());
        // The configuration directory and the modules inside it.
        let mut dirs = vec![".".to_string()];
        let mut stack = vec![copy.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    let has_config = std::fs::read_dir(&p).unwrap().any(|f| {
                        f.unwrap()
                            .file_name()
                            .to_string_lossy()
                            .ends_with(".bf.hcl")
                    });
                    if has_config {
                        dirs.push(p.strip_prefix(copy.path()).unwrap().display().to_string());
                    }
                    stack.push(p);
                }
            }
        }
        let mut args = vec!["fmt", "--check", "--diff"];
        args.extend(dirs.iter().map(String::as_str));
        let (code, out, err) = common::run(copy.path(), &args, &[]);
        assert_eq!(code, 0, "{} is not formatted:\n{out}{err}", dir.display());
        let (code, out, err) = common::run(copy.path(), &["validate"], &[]);
        assert_eq!(code, 0, "{}:\n{out}{err}", dir.display());
    }
    assert!(seen >= 5, "{seen} examples");
}
