//! `winguard serve`: the admission webhook over HTTPS.
//!
//! A thin adapter: [`crate::admission`] decides every review; this module reads bodies, keeps
//! rules, config and certificates current, counts, logs and drains. Routes: `POST /validate`,
//! `POST /mutate`, `GET /healthz`, `GET /readyz`, `GET /metrics`.
//!
//! Files are polled rather than watched: Kubernetes updates a mounted Secret or ConfigMap by
//! swapping a `..data` symlink, which inotify watches on the files themselves miss, and a poll of
//! two small files every couple of seconds costs nothing.

pub(crate) mod metrics;
pub(crate) mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::admission::{self, Endpoint, Verdict};
use crate::policy::{Policy, PolicySource};
use metrics::{EndpointLabels, Metrics, RequestLabels, ResultLabels, RuleLabels};
use tls::CertFiles;

/// The largest AdmissionReview read (the API server's own request limit is 3 MiB).
pub(crate) const MAX_BODY: usize = 3 * 1024 * 1024;
/// How much of a body past [`MAX_BODY`] is read and thrown away before the 413 is sent. A client
/// that writes its whole body before reading (HTTP/1.1 without `Expect: 100-continue`) would
/// otherwise find the connection reset under it and never see the 413; over HTTP/2 the answer
/// would come with a RST_STREAM before the client finished sending. Past this bound (or the
/// request timeout) the 413 goes out at once and the connection is closed.
const MAX_DISCARD: usize = 32 * 1024 * 1024;

/// How `serve` logs: lines of text, or one JSON object a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// What `winguard serve` was asked for (the command line's flags, as plain values).
#[derive(Debug)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// Serving certificate chain and its key (PEM), re-read when they change.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Generate a CA and a certificate for localhost instead, into `self_signed_dir` or a
    /// folder of this user's alone.
    pub self_signed: bool,
    pub self_signed_dir: Option<PathBuf>,
    /// Rules and config; the config file is re-read when it changes, and a bad new version is
    /// rejected while the last good one stays in force.
    pub setup: PolicySource,
    pub log_format: LogFormat,
    /// Most connections open at once; more are closed on arrival.
    pub max_connections: usize,
    /// Seconds SIGTERM waits for in-flight requests before closing connections.
    pub drain_timeout: u64,
    /// Seconds a client may take over a TLS handshake, its first request's headers, or a body.
    pub request_timeout: f64,
    /// Seconds between checks of the certificate and config files for changes.
    pub reload_interval: f64,
    /// Also serve `/metrics` and `/healthz` over plain HTTP here.
    pub metrics_listen: Option<SocketAddr>,
}

/// What the handlers share.
struct AppState {
    /// `None` until rules and config are loaded, and again while draining.
    setup: ArcSwapOption<Policy>,
    metrics: Metrics,
    request_timeout: Duration,
}

/// Why the webhook could not start, or stopped on a failure.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot load rules and config: {0}")]
    Policy(#[source] crate::error::Errors),
    #[error(
        "`serve` needs a serving certificate: --tls-cert FILE --tls-key FILE (in a cluster, the \
         secret cert-manager writes), or --self-signed to make one for localhost (local use)"
    )]
    NoCertificate,
    #[error("cannot create a self-signed certificate: {0}")]
    SelfSigned(String),
    #[error("cannot load the TLS certificate: {0}")]
    Certificate(String),
    #[error("cannot listen for metrics on {addr}: {source}")]
    MetricsListen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("server failed: {0}")]
    Server(#[source] std::io::Error),
}

/// Runs the webhook until SIGTERM or Ctrl-C; an error when it could not start or failed (the
/// CLI prints it and turns it into its exit code).
pub(crate) fn run(args: ServeOptions) -> Result<(), ServeError> {
    // Held to the end: dropping it writes out the log lines still queued.
    let _log_guard = init_logging(args.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(serve(args))
}

/// Logs go to stderr through a writer thread: a review's line is handed over and written in
/// batches (one `write` for all lines queued meanwhile), not one `write` per review on the worker
/// that answered it (a system call the worker would wait on). Not lossy: when the queue is
/// full, the handler waits rather than drop a line; the queue is short (a few MB at most), so a
/// slow log reader cannot grow the server's memory.
fn init_logging(format: LogFormat) -> tracing_appender::non_blocking::WorkerGuard {
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(8192)
        .thread_name("winguard-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    let builder = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO);
    match format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
    guard
}

async fn serve(args: ServeOptions) -> Result<(), ServeError> {
    let config_path = args.setup.config_path();
    let setup = args
        .setup
        .load(config_path.as_deref())
        .map_err(ServeError::Policy)?;
    let certs = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => CertFiles {
            cert: cert.clone(),
            key: key.clone(),
        },
        _ if !args.self_signed => return Err(ServeError::NoCertificate),
        _ => {
            let hosts = ["localhost", "127.0.0.1", "::1"].map(String::from);
            let made = tls::self_signed_folder(args.self_signed_dir.as_deref())
                .and_then(|dir| Ok((tls::self_signed(&dir, &hosts)?, dir)));
            let (files, dir) = made.map_err(|e| ServeError::SelfSigned(e.to_string()))?;
            tracing::info!(ca = %dir.join("ca.crt").display(), "self-signed certificate for localhost; trust this CA");
            files
        }
    };
    let tls_config = certs
        .load()
        .map(|c| axum_server::tls_rustls::RustlsConfig::from_config(Arc::new(c)))
        .map_err(ServeError::Certificate)?;

    let request_timeout = Duration::from_secs_f64(args.request_timeout.max(0.01));
    let state = Arc::new(AppState {
        setup: ArcSwapOption::from_pointee(setup),
        metrics: Metrics::default(),
        request_timeout,
    });
    state.metrics.ready.set(1);
    let app = router(Arc::clone(&state));

    let handle = axum_server::Handle::new();
    let acceptor = axum_server::tls_rustls::RustlsAcceptor::new(tls_config.clone())
        .handshake_timeout(request_timeout)
        .acceptor(tls::LimitAcceptor::new(args.max_connections));
    let mut server = axum_server::bind(args.listen)
        .acceptor(acceptor)
        .handle(handle.clone())
        .first_request_timeout(request_timeout)
        .accept_error_handler(|peer, e| tracing::debug!(?peer, error = %e, "connection refused"));
    server
        .http_builder()
        .http1()
        .header_read_timeout(request_timeout);

    // Announce the bound address (the port may have been 0).
    let announce = handle.clone();
    tokio::spawn(async move {
        if let Some(addr) = announce.listening().await {
            tracing::info!(%addr, "listening");
            eprintln!("winguard serve: listening on https://{addr}");
        }
    });

    if let Some(addr) = args.metrics_listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::MetricsListen { addr, source })?;
        let bound = listener.local_addr().unwrap_or(addr);
        tracing::info!(addr = %bound, "metrics over plain HTTP");
        eprintln!("winguard serve: metrics on http://{bound}/metrics");
        let metrics_routes = Router::new()
            .route("/metrics", get(metrics_text))
            .route("/healthz", get(|| async { "ok\n" }));
        let metrics_app = answer_unrouted_after_body(metrics_routes).with_state(Arc::clone(&state));
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, metrics_app)
                .with_graceful_shutdown(shutdown_signal())
                .await
            {
                tracing::error!(error = %e, "metrics listener failed");
            }
        });
    }

    let interval = Duration::from_secs_f64(args.reload_interval.max(0.05));
    let drain_timeout = Duration::from_secs(args.drain_timeout);
    tokio::spawn(watch_certificates(
        certs,
        tls_config,
        Arc::clone(&state),
        interval,
    ));
    tokio::spawn(watch_config(
        args.setup,
        config_path,
        Arc::clone(&state),
        interval,
    ));

    let drain = handle.clone();
    let draining_state = Arc::clone(&state);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!(
            timeout_seconds = drain_timeout.as_secs(),
            "shutting down: draining in-flight requests"
        );
        // Unready first, so the Service stops sending new reviews here.
        draining_state.metrics.ready.set(0);
        drain.graceful_shutdown(Some(drain_timeout));
    });
    server
        .serve(app.into_make_service())
        .await
        .map_err(ServeError::Server)?;
    tracing::info!("stopped");
    Ok(())
}

fn router(state: Arc<AppState>) -> Router {
    let routes = Router::new()
        .route(
            "/validate",
            post(|State(s): State<Arc<AppState>>, req: Request| admit(s, Endpoint::Validate, req)),
        )
        .route(
            "/mutate",
            post(|State(s): State<Arc<AppState>>, req: Request| admit(s, Endpoint::Mutate, req)),
        )
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text));
    answer_unrouted_after_body(routes).with_state(state)
}

/// Gives `routes` a 404 for unknown paths and a 405 for methods a path does not take (with its
/// `Allow` header), both sent only once the request body has been read. axum's own answer
/// drops the body unread: over HTTP/2 the stream then ends in a RST_STREAM, which clients that
/// read while they upload (curl among them) report as a failed request instead of the status;
/// over HTTP/1.1 the connection is closed under a client still writing its body.
/// Must be called after the last route is added (the 405 applies to the routes it sees).
fn answer_unrouted_after_body(routes: Router<Arc<AppState>>) -> Router<Arc<AppState>> {
    routes
        .fallback(|State(s): State<Arc<AppState>>, req: Request| {
            answer_after_body(s, req, StatusCode::NOT_FOUND)
        })
        .method_not_allowed_fallback(|State(s): State<Arc<AppState>>, req: Request| {
            answer_after_body(s, req, StatusCode::METHOD_NOT_ALLOWED)
        })
}

/// Reads the request body to its end and throws it away (within [`MAX_DISCARD`] and the request
/// timeout), then answers `status`. Past those bounds the answer goes out at once and, over
/// HTTP/1.1, closes the connection.
async fn answer_after_body(state: Arc<AppState>, req: Request, status: StatusCode) -> Response {
    let declared = declared_length(&req);
    let http1 = req.version() <= axum::http::Version::HTTP_11;
    let received =
        tokio::time::timeout(state.request_timeout, receive(req.into_body(), declared, 0)).await;
    let read_whole = matches!(
        received,
        Ok(Received::Body(_) | Received::TooLarge { drained: true })
    );
    let response = status.into_response();
    if read_whole {
        response
    } else {
        close_if_http1(response, http1)
    }
}

/// The body length a request declares in `Content-Length`, if it does.
fn declared_length(req: &Request) -> Option<usize> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
}

/// Over HTTP/1.1, closes the connection after `response`: a client sending bodies the server
/// will not read cannot then hold the connection (and one whose body was not read whole cannot
/// be reused). HTTP/2 has no such header: there the stream ended with the body, or is reset
/// past the bound.
fn close_if_http1(mut response: Response, http1: bool) -> Response {
    if http1 {
        response.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.metrics.ready.get() == 1 && state.setup.load().is_some() {
        "ready\n".into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response()
    }
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
        .into_response()
}

/// A JSON error body for requests that never became a review (too large, too slow).
fn plain_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// What became of a request body.
enum Received {
    Body(Vec<u8>),
    /// Larger than the bytes kept; `drained` when all of it was read (and thrown away).
    TooLarge {
        drained: bool,
    },
    Failed(String),
}

/// Reads a request body of up to `keep` bytes. A larger one is read to its end and thrown away,
/// up to [`MAX_DISCARD`] bytes, so the client can finish sending and then read the answer.
async fn receive(body: Body, declared: Option<usize>, keep: usize) -> Received {
    use http_body_util::BodyExt;
    if declared.is_some_and(|n| n > MAX_DISCARD) {
        return Received::TooLarge { drained: false };
    }
    let mut body = body;
    let mut kept: Vec<u8> = Vec::with_capacity(declared.unwrap_or(0).min(keep));
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => return Received::Failed(e.to_string()),
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        seen += data.len();
        if seen > MAX_DISCARD {
            return Received::TooLarge { drained: false };
        }
        if seen <= keep {
            kept.extend_from_slice(&data);
        }
    }
    if seen > keep || declared.is_some_and(|n| n > keep) {
        Received::TooLarge { drained: true }
    } else {
        Received::Body(kept)
    }
}

/// Reads the body within the limits, has the admission adapter answer it, counts and logs.
async fn admit(state: Arc<AppState>, endpoint: Endpoint, req: Request) -> Response {
    let started = Instant::now();
    let _in_flight = metrics::InFlight::enter(&state.metrics.in_flight);
    let declared = declared_length(&req);
    let http1 = req.version() <= axum::http::Version::HTTP_11;
    let received = tokio::time::timeout(
        state.request_timeout,
        receive(req.into_body(), declared, MAX_BODY),
    );
    let body = match received.await {
        Ok(Received::Body(bytes)) => bytes,
        Ok(Received::TooLarge { drained }) => {
            count(&state, endpoint, Verdict::Invalid, started);
            tracing::info!(
                endpoint = endpoint.as_str(),
                declared_bytes = declared,
                drained,
                "review body over 3 MiB: 413"
            );
            let response = plain_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the review is larger than 3 MiB",
            );
            return close_if_http1(response, http1);
        }
        Ok(Received::Failed(e)) => {
            count(&state, endpoint, Verdict::Invalid, started);
            return plain_error(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {e}"),
            );
        }
        Err(_) => {
            count(&state, endpoint, Verdict::Invalid, started);
            return plain_error(
                StatusCode::REQUEST_TIMEOUT,
                "the request body took too long to arrive",
            );
        }
    };
    let Some(setup) = state.setup.load_full() else {
        count(&state, endpoint, Verdict::Invalid, started);
        return plain_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "rules and config are not loaded yet",
        );
    };
    // The adapter does not panic on any input the tests know of; should a bug make it, the
    // request gets a structured rejection and the server goes on.
    let review = || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            admission::review(&setup, endpoint, &body)
        }))
    };
    // A review that reads images' platforms may wait on a registry: the worker thread is handed
    // over to the runtime's other tasks meanwhile. (The registry has logged what it could not
    // read; its list is only for the CLI's summary.)
    let answer = match &setup.images {
        Some(registry) => {
            let answer = tokio::task::block_in_place(review);
            registry.take_warnings();
            answer
        }
        None => review(),
    };
    let answer = match answer {
        Ok(a) => a,
        Err(_) => {
            tracing::error!(
                endpoint = endpoint.as_str(),
                "internal error answering a review"
            );
            count(&state, endpoint, Verdict::Invalid, started);
            return plain_error(
                StatusCode::BAD_REQUEST,
                "winguard could not evaluate this review",
            );
        }
    };
    for rule in &answer.rules {
        state
            .metrics
            .findings
            .get_or_create(&RuleLabels { rule: rule.clone() })
            .inc();
    }
    let latency = count(&state, endpoint, answer.verdict, started);
    // Kind, namespace and name only: object contents may be Secrets.
    tracing::info!(
        endpoint = endpoint.as_str(),
        uid = %answer.uid,
        kind = %answer.kind,
        namespace = %answer.namespace,
        name = %answer.name,
        verdict = answer.verdict.as_str(),
        rules = %answer.rules.join(","),
        error = answer.error.as_deref().unwrap_or(""),
        latency_us = latency.as_micros() as u64,
        "review"
    );
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_REQUEST);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(answer.body),
    )
        .into_response()
}

/// Counts a request and its latency; returns the latency.
fn count(state: &AppState, endpoint: Endpoint, verdict: Verdict, started: Instant) -> Duration {
    let latency = started.elapsed();
    state
        .metrics
        .requests
        .get_or_create(&RequestLabels {
            endpoint: endpoint.as_str(),
            verdict: verdict.as_str(),
        })
        .inc();
    state
        .metrics
        .latency
        .get_or_create(&EndpointLabels {
            endpoint: endpoint.as_str(),
        })
        .observe(latency.as_secs_f64());
    latency
}

/// Reloads the certificate when its files change. New handshakes use the new one; connections
/// already open keep theirs, so no request fails during a rotation.
async fn watch_certificates(
    files: CertFiles,
    config: axum_server::tls_rustls::RustlsConfig,
    state: Arc<AppState>,
    interval: Duration,
) {
    let mut last = files.read().ok();
    loop {
        tokio::time::sleep(interval).await;
        let Ok(now) = files.read() else {
            // Mid-rotation a file may be briefly missing; the next poll sees it.
            continue;
        };
        if last.as_ref() == Some(&now) {
            continue;
        }
        match tls::server_config(&now.0, &now.1) {
            Ok(c) => {
                config.reload_from_config(Arc::new(c));
                state
                    .metrics
                    .certificate_reloads
                    .get_or_create(&ResultLabels { result: "success" })
                    .inc();
                tracing::info!(cert = %files.cert.display(), "certificate reloaded");
            }
            Err(e) => {
                state
                    .metrics
                    .certificate_reloads
                    .get_or_create(&ResultLabels { result: "failure" })
                    .inc();
                tracing::error!(cert = %files.cert.display(), error = %e, "new certificate rejected; the previous one stays in use");
            }
        }
        last = Some(now);
    }
}

/// Reloads rules and config when the config file or the nodes file (`--nodes`, a ConfigMap mount
/// kept current from the cluster) changes, and at midnight (exemptions expire by date). A bad new
/// config or nodes file is rejected and the last good setup stays in force.
async fn watch_config(
    args: PolicySource,
    path: Option<PathBuf>,
    state: Arc<AppState>,
    interval: Duration,
) {
    let read = |p: Option<&PathBuf>| p.and_then(|p| std::fs::read(p).ok());
    let files = || (read(path.as_ref()), read(args.nodes.as_ref()));
    let mut last = files();
    loop {
        tokio::time::sleep(interval).await;
        let now = files();
        let today = jiff::Zoned::now().date();
        let stale_day = state
            .setup
            .load()
            .as_ref()
            .is_some_and(|s| s.today != today);
        if now == last && !stale_day {
            continue;
        }
        match args.load(path.as_deref()) {
            Ok(setup) => {
                if state.metrics.ready.get() == 1 {
                    state.setup.store(Some(Arc::new(setup)));
                }
                if now != last {
                    state
                        .metrics
                        .config_reloads
                        .get_or_create(&ResultLabels { result: "success" })
                        .inc();
                    tracing::info!(config = ?path, nodes = ?args.nodes, "config reloaded");
                }
            }
            Err(e) => {
                state
                    .metrics
                    .config_reloads
                    .get_or_create(&ResultLabels { result: "failure" })
                    .inc();
                tracing::error!(config = ?path, nodes = ?args.nodes, error = %e, "new config rejected; the last good one stays in force");
            }
        }
        last = now;
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
