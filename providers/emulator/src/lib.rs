//! The local workspace: an emulator of the Databricks REST API, served by axum on loopback.
//!
//! ```no_run
//! # async fn demo() -> Result<(), brickform_emulator::EmulatorError> {
//! use brickform_emulator::{Emulator, EmulatorConfig};
//! let emu = Emulator::start(EmulatorConfig::for_tests()).await?;
//! let host = emu.url(); // e.g. http://127.0.0.1:43817
//! # let _ = host;
//! emu.shutdown().await;
//! # Ok(()) }
//! ```

mod access;
mod app;
mod auth;
mod behaviours;
mod body;
mod clusters;
mod compute;
mod config;
mod control;
mod entra;
mod errors;
mod files;
mod identity;
mod jobs;
mod journal;
mod mlflow;
mod normalise;
mod pages;
mod permissions;
mod pipelines;
mod policies;
mod pools;
mod repos;
mod runtimes;
mod scim;
mod secrets;
mod settings;
mod sql;
mod store;
mod uc;
mod util;
mod warehouses;
mod workspace;

pub use behaviours::{BEHAVIOURS, Behaviour, BehaviourError, Behaviours, OFF_BY_DEFAULT};
pub use config::{EmulatorConfig, Timings};
pub use entra::TENANT as AZURE_TENANT;
pub use errors::ApiError;
pub use journal::ReplayError;
pub use scim::ACCOUNT_ID as LOCAL_ACCOUNT_ID;
pub use store::{JOURNAL_FILE, JournalDamage, PersistError, STATE_FILE, read_workspace};
/// The service's lists the local workspace checks what it is sent against, for a test that
/// holds the provider's own lists to them.
pub use uc::{CONNECTION_TYPES, NEW_WORKSPACE_CATALOG, grantable_privileges};

use app::App;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error(transparent)]
    Persist(#[from] PersistError),
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot start the emulator runtime: {0}")]
    Runtime(std::io::Error),
}

/// Entry point; see [`Emulator::start`].
pub struct Emulator;

/// A running workspace. Dropping it stops the server (without waiting).
pub struct RunningEmulator {
    addr: SocketAddr,
    app: Arc<App>,
    data_dir: Option<PathBuf>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Emulator {
    /// Loads (or creates) the workspace and serves it on `127.0.0.1:config.port` from the
    /// current tokio runtime.
    pub async fn start(config: EmulatorConfig) -> Result<RunningEmulator, EmulatorError> {
        let app = Arc::new(build_app(&config)?);
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, config.port)))
                .await
                .map_err(|source| EmulatorError::Bind {
                    port: config.port,
                    source,
                })?;
        let addr = listener
            .local_addr()
            .map_err(|source| EmulatorError::Bind {
                port: config.port,
                source,
            })?;
        let (stop, stopped) = oneshot::channel::<()>();
        let router = router(app.clone());
        let task = tokio::spawn(serve(listener, router, config.clone(), stopped));
        Ok(RunningEmulator {
            addr,
            app,
            data_dir: config.data_dir,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The router alone, for embedding in another server or driving with `tower::Service`.
    pub fn router(config: &EmulatorConfig) -> Result<Router, EmulatorError> {
        Ok(router(Arc::new(build_app(config)?)))
    }
}

/// The accept loop. HTTP/1.1 only: every client of a workspace speaks it, and hyper's
/// header read timeout (which also closes idle keep-alive connections) is an HTTP/1 setting.
async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    config: EmulatorConfig,
    stopped: oneshot::Receiver<()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt as _;
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout);
    let body_timeout = config.body_timeout;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(stopped);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!("local workspace: cannot accept a connection: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut stopped => break,
        };
        let router = router.clone();
        // A second handle on the socket, so a `drop` fault can make its close a reset.
        let reset_handle = std::sync::Arc::new(std::sync::Mutex::new(
            socket2::SockRef::from(&stream).try_clone().ok(),
        ));
        let service =
            hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                // A body that stops arriving fails the read (408) instead of holding the task.
                let req = req.map(|b| {
                    axum::body::Body::new(tower_http::timeout::TimeoutBody::new(body_timeout, b))
                });
                let answer = router.clone().oneshot(req);
                let reset_handle = reset_handle.clone();
                async move {
                    let Ok(response) = answer.await;
                    // An injected `drop` fault: failing the service makes hyper close the
                    // connection without writing anything, so the client sees no answer; with
                    // SO_LINGER 0 the close is a reset (RST), as from a peer that crashed.
                    if response
                        .extensions()
                        .get::<control::DropConnection>()
                        .is_some()
                    {
                        let handle = reset_handle
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .take();
                        if let Some(socket) = handle {
                            let _ = socket.set_linger(Some(std::time::Duration::ZERO));
                        }
                        return Err(DroppedByFault);
                    }
                    Ok(response)
                }
            });
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("local workspace connection ended: {e}");
            }
        });
    }
    drop(listener);
    // In-flight requests finish; idle connections close at once.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
}

/// Why the accept loop closed a connection without answering.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by an injected fault")]
struct DroppedByFault;

/// How long a stopping server waits for in-flight requests.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

fn build_app(config: &EmulatorConfig) -> Result<App, EmulatorError> {
    let (persister, loaded) = match &config.data_dir {
        Some(dir) => {
            let (p, s) = store::Persister::open(dir)?;
            (Some(p), s)
        }
        None => (None, None),
    };
    let fresh = loaded.is_none();
    let mut state = loaded.unwrap_or_else(|| store::State::new(&config.user_name, store::now_ms()));
    state.loaded(&config.user_name);
    let st = store::Store::new(state, persister);
    let hooks = DOMAINS.iter().filter_map(|d| d.clock).collect();
    let app = App::new(config, st, hooks);
    // Only a workspace created now gets what a new one starts with: a loaded one keeps what
    // its user made of it (a dropped `main` stays dropped).
    if fresh {
        app.populate_new().map_err(|e| PersistError::Io {
            path: config.data_dir.clone().unwrap_or_default(),
            source: std::io::Error::other(e.message),
        })?;
    }
    Ok(app)
}

/// Every domain of the workspace, one line each: its module (which serves `routes()`), the
/// tables it keeps in the workspace state (its `Tables`, a [`store::Domain`]; the state
/// has one field per domain, named after it), and the hook it runs when time passes. A new
/// domain is its module and one line here.
///
/// Expands `$then! { ... }` with the table, so each place that needs the list (the router
/// and clock hooks below, the state in store.rs) builds its part from the same lines.
/// Clock hooks run in this order: jobs before pipelines, so a job's pipeline task sees its
/// update end before a finished pipeline delete removes the pipeline. New workspaces are
/// seeded in this order too.
macro_rules! domains {
    ($then:ident) => {
        $then! {
            auth;
            entra;
            scim: Tables;
            runtimes;
            identity;
            uc: Tables;
            settings: Tables;
            jobs: Tables, clock = tick;
            pipelines: Tables, clock = advance;
            workspace: Tables;
            repos: Tables;
            permissions: Tables;
            files: Tables;
            secrets: Tables;
            warehouses: Tables, clock = advance;
            policies: Tables;
            pools: Tables;
            sql: Tables;
            clusters: Tables, clock = advance;
            mlflow: Tables;
            access: Tables;
        }
    };
}
pub(crate) use domains;

/// One service area of the workspace: its routes, and what it does when time passes.
struct Domain {
    routes: fn() -> Router<Arc<App>>,
    clock: Option<app::ClockHook>,
}

/// `Some(hook)`, or `None` for a domain that has no clock hook.
macro_rules! clock_hook {
    () => {
        None
    };
    ($hook:path) => {
        Some($hook)
    };
}

/// The routes and clock hooks of every domain, from the domains' table.
macro_rules! service_domains {
    ($( $domain:ident $(: $tables:ident $(, clock = $clock:ident)?)? ;)*) => {
        const DOMAINS: &[Domain] = &[$(
            Domain {
                routes: $domain::routes,
                clock: clock_hook!($($($domain::$clock)?)?),
            },
        )*];
    };
}

domains!(service_domains);

fn router(app: Arc<App>) -> Router {
    let api = DOMAINS
        .iter()
        .fold(Router::new(), |r, d| r.merge((d.routes)()))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            control::middleware,
        ));
    let control = control::routes().merge(identity::control_routes()).layer(
        axum::middleware::from_fn_with_state(app.clone(), control::guard),
    );
    api.merge(control)
        // The middlewares read bodies under their own limits; handlers re-read those bytes.
        .layer(DefaultBodyLimit::disable())
        .with_state(app)
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(
        "ENDPOINT_NOT_FOUND",
        format!("No API found for '{method} {}'", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "ENDPOINT_NOT_FOUND",
        format!("Method {method} is not allowed for '{}'", uri.path()),
    )
}

impl RunningEmulator {
    /// `http://127.0.0.1:PORT`, the workspace host for clients.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }

    /// Changes how long runs and pipeline updates take, from now on.
    pub fn set_timings(&self, timings: Timings) {
        self.app.set_timings(timings);
    }

    /// Turns modelled behaviours of the real service on or off, from now on.
    pub fn set_behaviours(&self, behaviours: Behaviours) {
        self.app.set_behaviours(behaviours);
    }

    pub fn behaviours(&self) -> Behaviours {
        self.app.behaviours()
    }

    /// The seed of `normalise_answers`, from now on.
    pub fn set_normalise_seed(&self, seed: u64) {
        self.app.set_normalise_seed(seed);
    }

    /// Moves the emulator's clock forward, so timed states advance without sleeping.
    pub fn advance_clock(&self, by: std::time::Duration) {
        self.app
            .advance_clock(i64::try_from(by.as_millis()).unwrap_or(i64::MAX));
    }

    /// The whole workspace as JSON (what `GET /__emulator/state` returns).
    pub fn state(&self) -> serde_json::Value {
        self.app.dump().unwrap_or(serde_json::Value::Null)
    }

    /// Stops accepting requests, lets in-flight ones finish, and writes the workspace.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        let _ = self.app.save();
    }
}

impl Drop for RunningEmulator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
