//! `brickform lsp`: a language server for `*.bf.hcl` files over standard input and output.
//!
//! Built on rust-analyzer's own protocol crates: `lsp-server` (the JSON-RPC framing, the
//! initialize and shutdown handshakes, a channel of messages) and `lsp-types` (the
//! protocol's types). They were chosen over `tower-lsp-server` because the server is
//! synchronous by nature — each request is answered from the buffers and the loaded
//! configuration, nothing waits on a network — so an async framework, its tower stack
//! and its task juggling would buy nothing; `lsp-server` is small (four dependencies),
//! keeps the main loop in our hands (checks are coalesced while messages are queued), and
//! is maintained with the most used Rust language server. `lsp-types` is held at 0.95,
//! the version rust-analyzer itself uses, whose `Url` converts to and from file paths.
//!
//! What it serves, for the whole configuration directory of a document (every
//! `*.bf.hcl` there, open buffers' unsaved text in place of the files'):
//! - diagnostics: what `brickform validate` reports (the same checker, handed in by the
//!   binary), published per file, never with network access;
//! - completion: block types, resource and data source types, arguments and nested blocks
//!   from the kinds' schemas, enumerated values, references (`var.`, `local.`, `module.`,
//!   `TYPE.NAME.`);
//! - hover on arguments and blocks (their schema), on resource types and references;
//! - go to definition of `var.x`, `local.y`, `module.m`, `TYPE.NAME`, `data.TYPE.NAME`;
//! - document symbols (the top-level blocks) and formatting (`brickform fmt`'s).

pub mod analysis;
pub mod scan;
pub mod text;

use brickform_core::diagnostics::{Diagnostics, Severity};
use brickform_core::lang::load::{CONFIG_SUFFIX, Config, Overlay, load_dir_with};
use brickform_core::provider::Registry;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CompletionOptions, Diagnostic, DiagnosticSeverity, DocumentSymbol, DocumentSymbolResponse,
    GotoDefinitionResponse, Location, OneOf, PublishDiagnosticsParams, ServerCapabilities,
    SymbolKind, TextDocumentSyncCapability, TextDocumentSyncKind, TextEdit, Url,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use text::LineIndex;

/// What `brickform validate` reports of a loaded configuration, given what loading it
/// found: the binary hands in its own check, so both report the same.
pub type Checker = Box<dyn Fn(&Config, Diagnostics) -> Diagnostics + Send>;

/// What the server announces it does.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "\"".into()]),
            ..Default::default()
        }),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        ..Default::default()
    }
}

/// Why the server stopped other than at the client's `exit`.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the language server protocol: {0}")]
    Protocol(#[from] lsp_server::ProtocolError),
    #[error("the client stopped reading the server's messages")]
    ClientGone,
    #[error("encoding the server's capabilities: {0}")]
    Json(#[from] serde_json::Error),
    #[error("standard input or output: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves the client on standard input and output until it says `exit` (or goes away).
pub fn run_stdio(registry: Registry, check: Checker) -> Result<(), ServeError> {
    // A bug in a handler answers that request with an error; it does not end the server
    // (the binary's hook would exit the process).
    std::panic::set_hook(Box::new(|info| {
        eprintln!("brickform lsp: internal error (a bug; please report it): {info}");
    }));
    let (connection, io_threads) = Connection::stdio();
    let caps = serde_json::to_value(capabilities())?;
    connection.initialize(caps)?;
    Server::new(registry, check).serve(&connection)?;
    drop(connection);
    io_threads.join()?;
    Ok(())
}

#[derive(Default)]
struct DirState {
    /// The configuration as last loaded, with what loading found; `None` once stale.
    loaded: Option<(Arc<Config>, Diagnostics)>,
    /// Files diagnostics were last published for (to clear them).
    published: BTreeSet<Url>,
}

pub struct Server {
    registry: Registry,
    check: Checker,
    /// Open documents' text.
    docs: HashMap<Url, String>,
    dirs: HashMap<PathBuf, DirState>,
    /// Directories whose diagnostics are to be published once no message is waiting.
    pending: BTreeSet<PathBuf>,
}

/// A request's failure, as the protocol answers it.
struct Failure(ErrorCode, String);

type Answer = Result<serde_json::Value, Failure>;

fn params<P: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<P, Failure> {
    serde_json::from_value(value).map_err(|e| Failure(ErrorCode::InvalidParams, e.to_string()))
}

fn json(value: impl serde::Serialize) -> Answer {
    serde_json::to_value(value).map_err(|e| Failure(ErrorCode::InternalError, e.to_string()))
}

/// The configuration directory of a document, and its file name, when it is a
/// configuration file on disk.
fn config_file(uri: &Url) -> Option<(PathBuf, String)> {
    let path = uri.to_file_path().ok()?;
    let name = path.file_name()?.to_str()?.to_string();
    if !name.ends_with(CONFIG_SUFFIX) {
        return None;
    }
    Some((path.parent()?.to_path_buf(), name))
}

impl Server {
    pub fn new(registry: Registry, check: Checker) -> Self {
        Server {
            registry,
            check,
            docs: HashMap::new(),
            dirs: HashMap::new(),
            pending: BTreeSet::new(),
        }
    }

    /// The message loop, after the initialize handshake.
    pub fn serve(&mut self, connection: &Connection) -> Result<(), ServeError> {
        for msg in &connection.receiver {
            match msg {
                Message::Request(r) => {
                    if connection.handle_shutdown(&r)? {
                        return Ok(());
                    }
                    let id = r.id.clone();
                    let response =
                        match std::panic::catch_unwind(AssertUnwindSafe(|| self.request(r))) {
                            Ok(Ok(value)) => Response::new_ok(id, value),
                            Ok(Err(Failure(code, message))) => {
                                Response::new_err(id, code as i32, message)
                            }
                            Err(_) => Response::new_err(
                                id,
                                ErrorCode::InternalError as i32,
                                "internal error (a bug): see the server's standard error".into(),
                            ),
                        };
                    connection
                        .sender
                        .send(response.into())
                        .map_err(|_| ServeError::ClientGone)?;
                }
                Message::Notification(n) => {
                    if n.method == notif::Exit::METHOD {
                        return Ok(());
                    }
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| self.notification(n)));
                }
                Message::Response(_) => {}
            }
            // Checks wait until the client has said everything it queued (a burst of
            // changes is checked once).
            if connection.receiver.is_empty() {
                for dir in std::mem::take(&mut self.pending) {
                    let published =
                        std::panic::catch_unwind(AssertUnwindSafe(|| self.diagnostics(&dir)));
                    for n in published.unwrap_or_default() {
                        connection
                            .sender
                            .send(Message::Notification(n))
                            .map_err(|_| ServeError::ClientGone)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn notification(&mut self, n: Notification) {
        let uri = match n.method.as_str() {
            notif::DidOpenTextDocument::METHOD => {
                let Ok(p) = params::<lsp_types::DidOpenTextDocumentParams>(n.params) else {
                    return;
                };
                self.docs
                    .insert(p.text_document.uri.clone(), p.text_document.text);
                p.text_document.uri
            }
            notif::DidChangeTextDocument::METHOD => {
                let Ok(p) = params::<lsp_types::DidChangeTextDocumentParams>(n.params) else {
                    return;
                };
                // Full synchronisation: the last change is the whole text.
                if let Some(change) = p.content_changes.into_iter().last() {
                    self.docs.insert(p.text_document.uri.clone(), change.text);
                }
                p.text_document.uri
            }
            notif::DidSaveTextDocument::METHOD => {
                let Ok(p) = params::<lsp_types::DidSaveTextDocumentParams>(n.params) else {
                    return;
                };
                if let Some(text) = p.text {
                    self.docs.insert(p.text_document.uri.clone(), text);
                }
                p.text_document.uri
            }
            notif::DidCloseTextDocument::METHOD => {
                let Ok(p) = params::<lsp_types::DidCloseTextDocumentParams>(n.params) else {
                    return;
                };
                self.docs.remove(&p.text_document.uri);
                p.text_document.uri
            }
            _ => return,
        };
        if let Some((dir, _)) = config_file(&uri) {
            self.dirs.entry(dir.clone()).or_default().loaded = None;
            self.pending.insert(dir);
        }
    }

    fn request(&mut self, r: Request) -> Answer {
        match r.method.as_str() {
            req::Completion::METHOD => {
                let p: lsp_types::CompletionParams = params(r.params)?;
                let pos = p.text_document_position;
                let (config, text) = self.document(&pos.text_document.uri)?;
                let offset = LineIndex::new(&text).offset(pos.position);
                json(analysis::complete(&self.registry, &config, &text, offset))
            }
            req::HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = params(r.params)?;
                let pos = p.text_document_position_params;
                let (config, text) = self.document(&pos.text_document.uri)?;
                let offset = LineIndex::new(&text).offset(pos.position);
                json(analysis::hover(&self.registry, &config, &text, offset))
            }
            req::GotoDefinition::METHOD => {
                let p: lsp_types::GotoDefinitionParams = params(r.params)?;
                let pos = p.text_document_position_params;
                let (config, text) = self.document(&pos.text_document.uri)?;
                let offset = LineIndex::new(&text).offset(pos.position);
                let Some((path, span)) = analysis::definition(&config, &text, offset) else {
                    return Ok(serde_json::Value::Null);
                };
                let (Ok(uri), Some(file)) =
                    (Url::from_file_path(&path), config.sources.get(span.file))
                else {
                    return Ok(serde_json::Value::Null);
                };
                let range = LineIndex::new(&file.text).range(span.range.clone());
                json(GotoDefinitionResponse::Scalar(Location::new(uri, range)))
            }
            req::DocumentSymbolRequest::METHOD => {
                let p: lsp_types::DocumentSymbolParams = params(r.params)?;
                let text = self.text(&p.text_document.uri)?;
                json(DocumentSymbolResponse::Nested(symbols(&text)))
            }
            req::Formatting::METHOD => {
                let p: lsp_types::DocumentFormattingParams = params(r.params)?;
                let text = self.text(&p.text_document.uri)?;
                // A file that does not parse is not formatted (its diagnostics say why).
                let Ok(formatted) = brickform_core::lang::fmt::format_source(&text) else {
                    return Ok(serde_json::Value::Null);
                };
                let edits = if formatted == text {
                    Vec::new()
                } else {
                    vec![TextEdit::new(LineIndex::new(&text).all(), formatted)]
                };
                json(edits)
            }
            _ => Err(Failure(
                ErrorCode::MethodNotFound,
                format!("brickform lsp does not serve {}", r.method),
            )),
        }
    }

    /// A document's text: the open buffer's, else the file's.
    fn text(&self, uri: &Url) -> Result<String, Failure> {
        if let Some(text) = self.docs.get(uri) {
            return Ok(text.clone());
        }
        let path = uri.to_file_path().map_err(|()| {
            Failure(
                ErrorCode::InvalidParams,
                format!("{uri} is neither open nor a file"),
            )
        })?;
        brickform_core::limits::read_text_file(&path).map_err(|why| {
            Failure(
                ErrorCode::RequestFailed,
                format!("cannot read {}: {why}", path.display()),
            )
        })
    }

    /// A document's text and its directory's configuration (an empty one for a document
    /// that is not a configuration file on disk).
    fn document(&mut self, uri: &Url) -> Result<(Arc<Config>, String), Failure> {
        let text = self.text(uri)?;
        let config = match config_file(uri) {
            Some((dir, _)) => self.load(&dir).0,
            None => Arc::new(Config::default()),
        };
        Ok((config, text))
    }

    /// The directory's configuration with the open buffers' text, loaded again when
    /// something changed since.
    fn load(&mut self, dir: &Path) -> (Arc<Config>, Diagnostics) {
        let state = self.dirs.entry(dir.to_path_buf()).or_default();
        if let Some((config, diags)) = &state.loaded {
            return (config.clone(), diags.clone());
        }
        let overlay: Overlay = self
            .docs
            .iter()
            .filter_map(|(uri, text)| {
                let (d, name) = config_file(uri)?;
                (d == dir).then(|| (name, text.clone()))
            })
            .collect();
        let (config, diags) = load_dir_with(dir, &overlay);
        let loaded = (Arc::new(config), diags);
        state.loaded = Some(loaded.clone());
        loaded
    }

    /// The notifications publishing a directory's diagnostics: one per file that has
    /// some, or had some, or is open there.
    fn diagnostics(&mut self, dir: &Path) -> Vec<Notification> {
        let (config, load_diags) = self.load(dir);
        let mut diags = if config.sources.files().next().is_none() && load_diags.is_empty() {
            // No configuration here (every file gone): nothing to say.
            Diagnostics::new()
        } else {
            (self.check)(&config, load_diags)
        };
        diags.sort();
        let mut by_file: BTreeMap<Url, Vec<Diagnostic>> = BTreeMap::new();
        let open: Vec<Url> = self
            .docs
            .keys()
            .filter(|u| config_file(u).is_some_and(|(d, _)| d == dir))
            .cloned()
            .collect();
        for u in &open {
            by_file.entry(u.clone()).or_default();
        }
        for d in diags.iter() {
            let located = d.span.as_ref().and_then(|s| {
                let file = config.sources.get(s.file)?;
                let path = if file.path.is_absolute() {
                    file.path.clone()
                } else {
                    dir.join(&file.path)
                };
                let uri = Url::from_file_path(path).ok()?;
                Some((uri, LineIndex::new(&file.text).range(s.range.clone())))
            });
            let mut message = d.summary.clone();
            for more in [&d.label, &d.detail, &d.hint].into_iter().flatten() {
                message.push('\n');
                message.push_str(more);
            }
            let diagnostic = |range| Diagnostic {
                range,
                severity: Some(match d.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                }),
                source: Some("brickform".into()),
                message: message.clone(),
                ..Default::default()
            };
            match located {
                Some((uri, range)) => by_file.entry(uri).or_default().push(diagnostic(range)),
                // Not in a file (a file that cannot be read): shown at the top of each open
                // document of the directory.
                None => {
                    for u in &open {
                        by_file
                            .entry(u.clone())
                            .or_default()
                            .push(diagnostic(Default::default()));
                    }
                }
            }
        }
        let state = self.dirs.entry(dir.to_path_buf()).or_default();
        for old in std::mem::take(&mut state.published) {
            by_file.entry(old).or_default();
        }
        state.published = by_file
            .iter()
            .filter(|(_, d)| !d.is_empty())
            .map(|(u, _)| u.clone())
            .collect();
        by_file
            .into_iter()
            .map(|(uri, diagnostics)| {
                Notification::new(
                    notif::PublishDiagnostics::METHOD.into(),
                    PublishDiagnosticsParams::new(uri, diagnostics, None),
                )
            })
            .collect()
    }
}

/// The top-level blocks of a file, each with its labels; the arguments of `locals` as
/// its children. Empty when the file does not parse.
pub fn symbols(text: &str) -> Vec<DocumentSymbol> {
    use hcl_edit::Span as _;
    use hcl_edit::structure::Structure;
    let Ok(body) = hcl_edit::parser::parse_body(text) else {
        return Vec::new();
    };
    let index = LineIndex::new(text);
    #[allow(deprecated)] // `DocumentSymbol::deprecated` must be written, as `None`
    let symbol =
        |name: String, kind, detail: Option<String>, range, selection, children| DocumentSymbol {
            name,
            detail,
            kind,
            tags: None,
            deprecated: None,
            range,
            selection_range: selection,
            children,
        };
    body.iter()
        .filter_map(|s| {
            let Structure::Block(b) = s else { return None };
            let ident = b.ident.as_str();
            let labels: Vec<&str> = b.labels.iter().map(|l| l.as_str()).collect();
            let span = b.span()?;
            let range = index.range(span.clone());
            let selection = index.range(b.ident.span().unwrap_or(span));
            let kind = match ident {
                "resource" => SymbolKind::CLASS,
                "data" => SymbolKind::STRUCT,
                "variable" => SymbolKind::VARIABLE,
                "locals" => SymbolKind::NAMESPACE,
                "output" => SymbolKind::PROPERTY,
                "module" => SymbolKind::MODULE,
                "provider" => SymbolKind::PACKAGE,
                _ => SymbolKind::OBJECT,
            };
            let name = match (ident, labels.as_slice()) {
                (_, []) => ident.to_string(),
                ("resource", [t, n]) => format!("{t}.{n}"),
                ("data", [t, n]) => format!("data.{t}.{n}"),
                _ => format!("{ident} {}", labels.join(" ")),
            };
            let children = (ident == "locals").then(|| {
                b.body
                    .iter()
                    .filter_map(|s| {
                        let Structure::Attribute(a) = s else {
                            return None;
                        };
                        let r = index.range(a.span()?);
                        let sel = a.key.span().map_or(r, |k| index.range(k));
                        Some(symbol(
                            a.key.as_str().to_string(),
                            SymbolKind::CONSTANT,
                            None,
                            r,
                            sel,
                            None,
                        ))
                    })
                    .collect()
            });
            Some(symbol(
                name,
                kind,
                Some(ident.to_string()),
                range,
                selection,
                children,
            ))
        })
        .collect()
}
