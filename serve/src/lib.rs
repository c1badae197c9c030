//! `dtb serve`: a tablebase explorer over HTTP. A JSON API in the shape of the lichess
//! tablebase API (`/api/v1/{variant}?fen=`, `/api/v1/{variant}/mainline?fen=`,
//! `/api/v1/variants`), PDN games analysed (`POST /api/v1/{variant}/analyze`) and a board
//! page at `/` whose assets are built into the binary.
//!
//! This crate depends on `dtb-probe` only: the `dtb` command (dtb-gen) calls [`run`], and
//! the HTTP stack (axum, hyper, tokio, tower-http) stays out of the generator's code.
//!
//! Serving: each connection is its own task (a slow client holds up no one), a request's
//! header must arrive within [`HEADER_TIMEOUT`], a request within [`REQUEST_TIMEOUT`] (408),
//! bodies are refused past [`MAX_BODY_BYTES`] (past [`api::MAX_PDN_BYTES`] for a PDN text to
//! analyze) and request targets past [`MAX_URI_BYTES`]
//! (414); at most [`MAX_CONNECTIONS`] connections are served at once (more wait in the
//! kernel's backlog). Probes run on tokio's blocking pool, at most [`Config::probe_threads`]
//! at a time, never on the executor. Files are read only through the [`Tablebase`]s given,
//! which list their directories at start-up: nothing in a request names a file.
//!
//! A tablebase's count profile ([`Tablebase::open_variant`] with `count=`, or the preset's)
//! is the one `counter=` answers are under, where its directory has DTC tables.
//!
//! ```no_run
//! use dtb_probe::{Tablebase, Variant};
//! let tb = Tablebase::open_variant("tables", &Variant::parse("english,count=20")?)?;
//! let config = dtb_serve::Config::new("127.0.0.1:8080".parse()?, vec![tb]);
//! dtb_serve::run(config, |addr| println!("listening on http://{addr}"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod api;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use dtb_probe::{Tablebase, Variant};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

pub use api::{ApiError, Served};

/// Longest request target (path and query) served, in bytes; longer ones get 414.
pub const MAX_URI_BYTES: usize = 2048;
/// Largest request body accepted, in bytes, but for a PDN text to analyze (the other
/// requests take none; more gets 413).
pub const MAX_BODY_BYTES: usize = 1024;
/// Time a client has to send a request's header before its connection is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a request may take from its header to its answer (queueing for a probe included);
/// past it the answer is 408.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 4096;

/// `Cache-Control` of a position's answer: tables do not change while served.
const CACHE_OK: &str = "public, max-age=86400";
/// `Cache-Control` of a 400 or 404 answer (a 404 may change when tables are added and the
/// server restarted).
const CACHE_CLIENT_ERROR: &str = "public, max-age=300";

/// What to serve and how.
pub struct Config {
    /// Address to listen on (port 0: any free port, see [`run`]'s `on_listen`).
    pub listen: SocketAddr,
    /// One tablebase per variant (its rules name the path `/api/v1/{name}`).
    pub tables: Vec<Tablebase>,
    /// Probes running at once on the blocking pool (default: twice the cores).
    pub probe_threads: usize,
}

impl Config {
    /// Serve `tables` on `listen` with the default probe concurrency.
    pub fn new(listen: SocketAddr, tables: Vec<Tablebase>) -> Config {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Config {
            listen,
            tables,
            probe_threads: 2 * cores,
        }
    }
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Two tablebases for one variant (add both directories to one [`Tablebase`]).
    #[error("variant {0} is given twice")]
    DuplicateVariant(String),
    /// No tablebase given.
    #[error("nothing to serve: no tables given")]
    Empty,
    /// The runtime could not start, or the address could not be bound.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

struct App {
    variants: BTreeMap<&'static str, Arc<Served>>,
    probes: Arc<Semaphore>,
}

/// Serve until interrupted (Ctrl-C): binds `config.listen`, calls `on_listen` with the bound
/// address (the port chosen where it was 0), then answers requests.
///
/// # Errors
/// [`ServeError`]: no or duplicate variants, a runtime or bind failure.
pub fn run(config: Config, on_listen: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    let app = app(config.tables, config.probe_threads)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| ServeError::Io {
            what: "starting the async runtime".to_string(),
            source,
        })?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| ServeError::Io {
                what: format!("binding {}", config.listen),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Io {
            what: "reading the bound address".to_string(),
            source,
        })?;
        on_listen(addr);
        serve(listener, router(app)).await;
        Ok(())
    })
}

impl App {
    /// The tables of the variant named `name` in a URL, read as the command line reads a
    /// `--variant`: a name in any case (`English`), or a preset with overrides
    /// (`english,blocked=majority`) naming a served rule set; with `count=`, only if it is
    /// the served count profile (`english,count=20`).
    fn find(&self, name: &str) -> Option<&Arc<Served>> {
        if let Some(s) = self.variants.get(name) {
            return Some(s);
        }
        if let Some((_, s)) = self
            .variants
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
        {
            return Some(s);
        }
        let v = Variant::parse(name).ok()?;
        let counted = name.split(',').any(|item| {
            item.split_once('=')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("count"))
        });
        let code = v.rules.encode();
        self.variants
            .values()
            .find(|s| s.rules.encode() == code && (!counted || *s.tb.count_profile() == v.count))
    }
}

fn app(tables: Vec<Tablebase>, probe_threads: usize) -> Result<Arc<App>, ServeError> {
    if tables.is_empty() {
        return Err(ServeError::Empty);
    }
    let mut variants = BTreeMap::new();
    for tb in tables {
        let name = tb.rules().name;
        if variants.insert(name, Arc::new(Served::new(tb))).is_some() {
            return Err(ServeError::DuplicateVariant(name.to_string()));
        }
    }
    Ok(Arc::new(App {
        variants,
        probes: Arc::new(Semaphore::new(probe_threads.max(1))),
    }))
}

/// Accept connections until Ctrl-C, each served on its own task with a header timeout.
async fn serve(listener: tokio::net::TcpListener, router: Router) {
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut stop = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let Ok(permit) = connections.clone().acquire_owned().await else {
            return;
        };
        let (stream, _peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, go on.
                    eprintln!("dtb serve: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => return,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            // A client that goes away mid-answer is not the server's error.
            let _ = conn.await;
        });
    }
}

fn router(app: Arc<App>) -> Router {
    let cors = CorsLayer::new().allow_origin(Any).allow_methods([
        Method::GET,
        Method::HEAD,
        Method::OPTIONS,
        Method::POST,
    ]);
    // The PDN text is read, and its size checked, by `analyze` itself.
    let games = Router::new().route("/api/v1/{variant}/analyze", post(analyze));
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/style.css", get(style))
        .route("/api/v1/variants", get(variants))
        .route("/api/v1/{variant}", get(position))
        .route("/api/v1/{variant}/mainline", get(mainline))
        .fallback(not_found)
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .merge(games)
        .with_state(app)
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(cors)
        .layer(middleware::from_fn(limit_uri))
}

async fn limit_uri(req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if len > MAX_URI_BYTES {
        return error_response(
            StatusCode::URI_TOO_LONG,
            &format!("request target longer than {MAX_URI_BYTES} bytes"),
        );
    }
    next.run(req).await
}

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}

async fn page() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8")
}

async fn script() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

async fn style() -> Response {
    asset(STYLE_CSS, "text/css; charset=utf-8")
}

fn json_response(status: StatusCode, body: &Value, cache: &'static str) -> Response {
    let mut r = (status, axum::Json(body)).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

fn error_response(status: StatusCode, message: &str) -> Response {
    let cache = if status.is_server_error() || status == StatusCode::URI_TOO_LONG {
        "no-store"
    } else {
        CACHE_CLIENT_ERROR
    };
    json_response(
        status,
        &json!({"error": message, "status": status.as_u16()}),
        cache,
    )
}

fn api_error_response(e: &ApiError, what: &str) -> Response {
    if let ApiError::Internal { log, .. } = e {
        eprintln!("dtb serve: {what}: {log}");
    }
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error_response(status, &e.to_string())
}

async fn not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, "no such page or API endpoint")
}

async fn variants(State(app): State<Arc<App>>) -> Response {
    let body = api::variants(app.variants.values().map(|s| s.as_ref()));
    json_response(StatusCode::OK, &body, CACHE_OK)
}

#[derive(Deserialize)]
struct FenQuery {
    fen: Option<String>,
    /// `numeric` or `algebraic` (default: the variant's players' notation).
    notation: Option<String>,
    /// Plies since the count rule's counter was last reset ([`api::counter_param`]).
    counter: Option<String>,
}

type Handler = fn(&Served, &str, dtb_probe::fen::Notation, Option<u16>) -> Result<Value, ApiError>;

/// The mainline is the game-theoretic best line (DTW): a counter there is refused rather
/// than ignored.
fn mainline_at(
    s: &Served,
    fen: &str,
    notation: dtb_probe::fen::Notation,
    counter: Option<u16>,
) -> Result<Value, ApiError> {
    if counter.is_some() {
        return Err(ApiError::BadRequest(
            "counter= is for /api/v1/{variant}?fen= (values under the count rule); the \
             mainline is the game-theoretic best line and takes no counter"
                .to_string(),
        ));
    }
    api::mainline(s, fen, notation)
}

async fn position(
    State(app): State<Arc<App>>,
    Path(variant): Path<String>,
    query: Result<Query<FenQuery>, QueryRejection>,
) -> Response {
    answer(app, variant, query, api::position).await
}

async fn mainline(
    State(app): State<Arc<App>>,
    Path(variant): Path<String>,
    query: Result<Query<FenQuery>, QueryRejection>,
) -> Response {
    answer(app, variant, query, mainline_at).await
}

#[derive(Deserialize)]
struct NotationQuery {
    /// `numeric` or `algebraic` (default: the variant's players' notation).
    notation: Option<String>,
}

/// `POST /api/v1/{variant}/analyze`: the body is PDN text (UTF-8, or else Latin-1), at most
/// [`api::MAX_PDN_BYTES`] (413 past it, whether its `Content-Length` says so or it is sent
/// in chunks); the games are analysed on the blocking pool ([`api::analyze`]).
async fn analyze(
    State(app): State<Arc<App>>,
    Path(variant): Path<String>,
    query: Result<Query<NotationQuery>, QueryRejection>,
    req: Request,
) -> Response {
    let Some(served) = app.find(&variant).cloned() else {
        return unknown_variant(&app, &variant);
    };
    let notation = match &query {
        Ok(Query(q)) => match api::notation_param(&served.rules, q.notation.as_deref()) {
            Ok(n) => n,
            Err(e) => return api_error_response(&e, &variant),
        },
        Err(e) => return error_response(StatusCode::BAD_REQUEST, &format!("bad query: {e}")),
    };
    let too_large = || {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "PDN text longer than {} bytes: send fewer games at a time, or run dtb analyze",
                api::MAX_PDN_BYTES
            ),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > api::MAX_PDN_BYTES as u64) {
        return too_large();
    }
    let bytes = match Limited::new(req.into_body(), api::MAX_PDN_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large(),
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &format!("could not read the request body: {e}"),
            )
        }
    };
    let text = match String::from_utf8(bytes.to_vec()) {
        Ok(s) => s,
        Err(e) => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
    };
    let Ok(permit) = app.probes.clone().acquire_owned().await else {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "server shutting down");
    };
    let result = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        api::analyze(&served, &text, notation)
    })
    .await;
    match result {
        Ok(Ok(body)) => json_response(StatusCode::OK, &body, "no-store"),
        Ok(Err(e)) => api_error_response(&e, &format!("{variant} analyze")),
        Err(join) => {
            eprintln!("dtb serve: {variant} analyze: the analysis failed: {join}");
            error_response(StatusCode::INTERNAL_SERVER_ERROR, "the analysis failed")
        }
    }
}

fn unknown_variant(app: &App, variant: &str) -> Response {
    let known: Vec<String> = app.variants.values().map(|s| s.spec()).collect();
    error_response(
        StatusCode::NOT_FOUND,
        &format!(
            "no tables served for variant {variant:?}; served: {}",
            known.join(", ")
        ),
    )
}

/// Look the variant up, check the FEN, and run the probe `f` on the blocking pool.
async fn answer(
    app: Arc<App>,
    variant: String,
    query: Result<Query<FenQuery>, QueryRejection>,
    f: Handler,
) -> Response {
    let Some(served) = app.find(&variant).cloned() else {
        return unknown_variant(&app, &variant);
    };
    let (fen, notation, counter) = match &query {
        Ok(Query(q)) => match api::fen_param(q.fen.as_deref()).and_then(|f| {
            Ok((
                f.to_string(),
                api::notation_param(&served.rules, q.notation.as_deref())?,
                api::counter_param(q.counter.as_deref())?,
            ))
        }) {
            Ok(v) => v,
            Err(e) => return api_error_response(&e, &variant),
        },
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, &format!("bad query: {e}"));
        }
    };
    let Ok(permit) = app.probes.clone().acquire_owned().await else {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "server shutting down");
    };
    let what = format!("{variant} {fen}");
    let result = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        f(&served, &fen, notation, counter)
    })
    .await;
    match result {
        Ok(Ok(body)) => json_response(StatusCode::OK, &body, CACHE_OK),
        Ok(Err(e)) => api_error_response(&e, &what),
        Err(join) => {
            eprintln!("dtb serve: {what}: the probe failed: {join}");
            error_response(StatusCode::INTERNAL_SERVER_ERROR, "the probe failed")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtb_probe::Rules;

    #[test]
    fn variants_are_found_as_the_command_line_names_them() {
        let tables = vec![
            Tablebase::new(Rules::ENGLISH),
            Tablebase::new(Rules::by_name("russian").unwrap()),
        ];
        let app = app(tables, 1).unwrap();
        let name = |v: &str| app.find(v).map(|s| s.rules.name);
        assert_eq!(name("english"), Some("english"));
        assert_eq!(name("English"), Some("english"));
        assert_eq!(name("RUSSIAN"), Some("russian"));
        assert_eq!(name("english, Blocked=LOSS"), Some("english"));
        assert_eq!(name("english,blocked=draw"), None);
        assert_eq!(name("international"), None);
        assert_eq!(name(""), None);
        // The preset's count profile is served unless --variant said otherwise: `count=`
        // in a URL names it, or another one, which is not served.
        assert_eq!(name("english,count=80"), Some("english"));
        assert_eq!(name("english,count=20"), None);
        let mut counted = Tablebase::new(Rules::ENGLISH);
        counted.set_count_profile(Variant::parse("english,count=20").unwrap().count);
        let app = super::app(vec![counted], 1).unwrap();
        let name = |v: &str| app.find(v).map(|s| s.spec());
        assert_eq!(name("english"), Some("english,count=20".to_string()));
        assert_eq!(
            name("english,count=20"),
            Some("english,count=20".to_string())
        );
        assert_eq!(
            name("english,blocked=loss"),
            Some("english,count=20".to_string())
        );
        assert_eq!(name("english,count=80"), None);
        assert_eq!(name("english,count=x"), None);
    }
}
