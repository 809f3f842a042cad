//! `brickform lsp`: the language server spoken to as an editor does, JSON-RPC messages
//! framed with Content-Length headers over the binary's standard input and output.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use crate::common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications and requests from the server not consumed yet.
    seen: Vec<Value>,
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn start(dir: &std::path::Path) -> Client {
        let mut cmd = Command::new(common::bin());
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BRICKFORM_") {
                cmd.env_remove(&k);
            }
        }
        let mut child = cmd
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting brickform lsp");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            while let Some(m) = read_message(&mut stdout) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
            next_id: 1,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message `pick` takes, keeping the others for later.
    fn wait_for(&mut self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&pick) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(m) if pick(&m) => return m,
                Ok(m) => self.seen.push(m),
                Err(RecvTimeoutError::Timeout) => panic!("no {what} in {WAIT:?}: {:#?}", self.seen),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server went away waiting for {what}")
                }
            }
        }
    }

    /// The whole response to a request.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(method, |m| {
            m["id"] == json!(id) && m.get("method").is_none()
        })
    }

    /// The result of a request, which must succeed.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params);
        assert!(r.get("error").is_none(), "{method}: {r:#}");
        r["result"].clone()
    }

    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let m = self.wait_for("diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }
}

fn uri(path: &std::path::Path) -> String {
    format!("file://{}", path.display())
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

fn labels(result: &Value) -> Vec<String> {
    let items = result
        .as_array()
        .or_else(|| result["items"].as_array())
        .cloned()
        .unwrap_or_default();
    items
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

const VARIABLES: &str = r#"variable "owner" {
  description = "Who owns the catalogs"
}
"#;

/// Line 2 refers to an undeclared variable after an emoji: two UTF-16 units, four bytes.
const BROKEN: &str = r#"resource "databricks_catalog" "main" {
  name    = "main"
  comment = "😀${var.nope}"
}
"#;

const FIXED: &str = r#"locals {
  prefix = "dev"
}

resource "databricks_catalog" "main" {
  name           = "${local.prefix}_main"
  comment        = "😀"
  owner          = var.owner
  isolation_mode = "OPEN"
  storage_root   = "s3://bucket/main"
}

resource "databricks_schema" "raw" {
  catalog_name = databricks_catalog.main.name
  name = "raw"
}
"#;

#[test]
fn a_session_from_initialize_to_exit() {
    let dir = common::config(&[("variables.bf.hcl", VARIABLES), ("main.bf.hcl", FIXED)]);
    let dir_path = dir.path().canonicalize().unwrap();
    let main = uri(&dir_path.join("main.bf.hcl"));
    let mut c = Client::start(&dir_path);

    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&dir_path), "capabilities": {}}),
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(caps["documentFormattingProvider"], true);
    c.notify("initialized", json!({}));

    // An error in the unsaved buffer: located, with UTF-16 columns.
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": main, "languageId": "hcl", "version": 1, "text": BROKEN}}),
    );
    let diags = c.diagnostics(&main);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0]["severity"], 1);
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Reference to undeclared input variable"),
        "{diags:#?}"
    );
    assert_eq!(
        diags[0]["range"],
        json!({"start": {"line": 2, "character": 17}, "end": {"line": 2, "character": 25}})
    );

    // Fixed: the diagnostics are cleared.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 2}, "contentChanges": [{"text": FIXED}]}),
    );
    let diags = c.diagnostics(&main);
    assert_eq!(diags, Vec::<Value>::new());

    // Completion: resource types in a new block's label.
    let typed = format!("{FIXED}\nresource \"databricks_ca\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 3}, "contentChanges": [{"text": typed}]}),
    );
    let types = labels(&c.request("textDocument/completion", at(&main, 17, 22)));
    assert!(
        types.contains(&"databricks_catalog".to_string()),
        "{types:?}"
    );
    assert!(
        types.contains(&"databricks_schema".to_string()),
        "{types:?}"
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 4}, "contentChanges": [{"text": FIXED}]}),
    );

    // Arguments and blocks of databricks_catalog, at the start of a line of its body.
    let args = labels(&c.request("textDocument/completion", at(&main, 6, 2)));
    for name in [
        "name",
        "comment",
        "isolation_mode",
        "force_destroy",
        "for_each",
    ] {
        assert!(args.contains(&name.to_string()), "{name} in {args:?}");
    }
    assert!(
        !args.contains(&"full_name".to_string()),
        "computed: {args:?}"
    );

    // An enumerated value inside the string of isolation_mode.
    let values = labels(&c.request("textDocument/completion", at(&main, 8, 20)));
    assert_eq!(values, ["OPEN", "ISOLATED", "OPEN_IN_ACCOUNT"]);

    // References: `var.` and a resource's attributes.
    let vars = labels(&c.request("textDocument/completion", at(&main, 7, 23)));
    assert_eq!(vars, ["owner"]);
    let attrs = labels(&c.request("textDocument/completion", at(&main, 13, 41)));
    assert!(attrs.contains(&"full_name".to_string()), "{attrs:?}");
    let locals = labels(&c.request("textDocument/completion", at(&main, 5, 28)));
    assert_eq!(locals, ["prefix"]);

    // Hover: an argument's schema.
    let hover = c.request("textDocument/hover", at(&main, 9, 4));
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("**storage_root** `string`"), "{shown}");
    assert!(shown.contains("optional"), "{shown}");
    assert!(shown.contains("forces replacement"), "{shown}");
    let hover = c.request("textDocument/hover", at(&main, 5, 4));
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("required"), "{shown}");
    assert!(shown.contains("Catalog name"), "{shown}");

    // Go to definition: a variable in another file, a resource, a local.
    let def = c.request("textDocument/definition", at(&main, 7, 22));
    assert_eq!(def["uri"], uri(&dir_path.join("variables.bf.hcl")));
    assert_eq!(def["range"]["start"], json!({"line": 0, "character": 0}));
    let def = c.request("textDocument/definition", at(&main, 13, 30));
    assert_eq!(def["uri"], main);
    assert_eq!(def["range"]["start"], json!({"line": 4, "character": 0}));
    let def = c.request("textDocument/definition", at(&main, 5, 30));
    assert_eq!(def["range"]["start"]["line"], 1);

    // Symbols: the top-level blocks.
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": main}}),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["locals", "databricks_catalog.main", "databricks_schema.raw"]
    );

    // Formatting: what `brickform fmt` writes.
    let edits = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": main}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    let edits = edits.as_array().unwrap();
    assert_eq!(edits.len(), 1);
    let formatted = edits[0]["newText"].as_str().unwrap();
    assert!(
        formatted.contains("  name         = \"raw\""),
        "{formatted}"
    );
    let fmt_dir = common::config(&[("main.bf.hcl", FIXED)]);
    common::run(fmt_dir.path(), &["fmt"], &[]);
    let by_fmt = std::fs::read_to_string(fmt_dir.path().join("main.bf.hcl")).unwrap();
    assert_eq!(formatted, by_fmt);

    // Bad input: an unknown method, a position past the end, a file that is not there.
    let r = c.call(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": main}}),
    );
    assert_eq!(r["error"]["code"], -32601, "{r:#}");
    let r = c.call("textDocument/completion", at(&main, 999, 999));
    assert!(r.get("error").is_none(), "{r:#}");
    let r = c.call("textDocument/hover", at(&main, 3, 9999));
    assert!(r.get("error").is_none(), "{r:#}");
    let gone = uri(&dir_path.join("gone.bf.hcl"));
    let r = c.call(
        "textDocument/formatting",
        json!({"textDocument": {"uri": gone}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot read"),
        "{r:#}"
    );
    let r = c.call("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "{r:#}");

    // Still serving.
    let vars = labels(&c.request("textDocument/completion", at(&main, 7, 23)));
    assert_eq!(vars, ["owner"]);

    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// A folder with no configuration file, and a file that cannot be read, never stop the
/// server.
#[test]
fn unreadable_files_and_empty_folders() {
    let dir = common::config(&[]);
    let dir_path = dir.path().canonicalize().unwrap();
    std::fs::write(dir_path.join("latin1.bf.hcl"), b"# caf\xe9\n").unwrap();
    let mut c = Client::start(&dir_path);
    c.request("initialize", json!({"processId": null, "capabilities": {}}));
    c.notify("initialized", json!({}));

    let main = uri(&dir_path.join("main.bf.hcl"));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": main, "languageId": "hcl", "version": 1, "text": VARIABLES}}),
    );
    let diags = c.diagnostics(&main);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let message = diags[0]["message"].as_str().unwrap();
    assert!(
        message.contains("Cannot read the configuration file"),
        "{message}"
    );
    assert!(message.contains("UTF-8"), "{message}");

    // A folder with nothing in it: nothing to report, and completion still answers.
    let empty = tempfile::tempdir().unwrap();
    let other = uri(&empty.path().canonicalize().unwrap().join("new.txt"));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": other, "languageId": "hcl", "version": 1, "text": "res"}}),
    );
    let top = labels(&c.request("textDocument/completion", at(&other, 0, 3)));
    assert!(top.contains(&"resource".to_string()), "{top:?}");

    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    assert!(c.child.wait().unwrap().success());
}
