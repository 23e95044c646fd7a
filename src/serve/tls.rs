//! TLS for the webhook: rustls configs from PEM files, a self-signed pair for local use, and a
//! bound on concurrent connections.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A server config from a certificate chain and key in PEM: TLS 1.3 and 1.2 only, HTTP/2 and
/// HTTP/1.1 offered by ALPN (the API server speaks HTTP/2 to webhooks when offered).
pub(super) fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<ServerConfig, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("certificate: {e}"))?;
    if certs.is_empty() {
        return Err("certificate: no PEM certificate in the file".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("key: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("certificate and key: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The certificate and key files, read together so a rotation is seen whole.
#[derive(Debug, Clone)]
pub(crate) struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl CertFiles {
    /// Both files' bytes (compared between polls to notice a rotation).
    pub(crate) fn read(&self) -> Result<(Vec<u8>, Vec<u8>), String> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        Ok((read(&self.cert)?, read(&self.key)?))
    }

    pub(super) fn load(&self) -> Result<ServerConfig, String> {
        let (cert, key) = self.read()?;
        server_config(&cert, &key)
            .map_err(|e| format!("{} / {}: {e}", self.cert.display(), self.key.display()))
    }
}

/// Why `--self-signed` could not make its certificate.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SelfSignedError {
    #[error("generating a self-signed certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Write(#[from] crate::write::WriteError),
    #[error(
        "{}: {problem}; the private key goes only into a folder of this user's that no one \
         else can enter (remove it, or name another with --self-signed-dir)",
        path.display()
    )]
    UnsafeFolder {
        path: PathBuf,
        problem: FolderProblem,
    },
}

impl SelfSignedError {
    /// For `map_err`: an I/O error on `path`.
    fn io(path: &Path) -> impl FnOnce(io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| SelfSignedError::Io { path, source }
    }
}

/// What makes an existing default folder unfit for a private key.
#[derive(Debug)]
// Owners and modes are checked on Unix only.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) enum FolderProblem {
    Symlink,
    NotAFolder,
    OwnedByAnother { owner: u32, user: u32 },
    OpenToOthers { mode: u32 },
}

impl std::fmt::Display for FolderProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FolderProblem::Symlink => f.write_str("is a symbolic link"),
            FolderProblem::NotAFolder => f.write_str("is not a folder"),
            FolderProblem::OwnedByAnother { owner, user } => {
                write!(f, "belongs to uid {owner}, not to this user (uid {user})")
            }
            FolderProblem::OpenToOthers { mode } => write!(
                f,
                "has mode {mode:04o}: its group or others may enter it (it must be 0700)"
            ),
        }
    }
}

/// The folder `--self-signed` writes to, made ready: `given` (`--self-signed-dir`) is used as it
/// is, created 0700 if missing. Otherwise a folder of this user's alone, since it will hold a
/// private key: `winguard-self-signed` under `$XDG_RUNTIME_DIR` (itself private to the user), or
/// `winguard-self-signed-UID` in the temp folder, which others can write to. It is created 0700,
/// and an existing one is refused unless it is a real folder (not a symlink), owned by this
/// user, and closed to group and others: someone else could have made it first to read the key
/// or swap the certificate.
pub(crate) fn self_signed_folder(given: Option<&Path>) -> Result<PathBuf, SelfSignedError> {
    if let Some(dir) = given {
        private_dir_builder(true)
            .create(dir)
            .map_err(SelfSignedError::io(dir))?;
        return Ok(dir.to_path_buf());
    }
    let dir = default_self_signed_folder();
    match private_dir_builder(false).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(SelfSignedError::io(&dir)(e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(SelfSignedError::io(&dir))?;
    match folder_problem(&meta) {
        None => Ok(dir),
        Some(problem) => Err(SelfSignedError::UnsafeFolder { path: dir, problem }),
    }
}

#[cfg(unix)]
fn default_self_signed_folder() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(runtime) if runtime.is_absolute() => runtime.join("winguard-self-signed"),
        _ => std::env::temp_dir().join(format!(
            "winguard-self-signed-{}",
            rustix::process::geteuid().as_raw()
        )),
    }
}

/// The temp folder is per user on Windows.
#[cfg(not(unix))]
fn default_self_signed_folder() -> PathBuf {
    std::env::temp_dir().join("winguard-self-signed")
}

fn private_dir_builder(recursive: bool) -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(recursive);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
}

fn folder_problem(meta: &std::fs::Metadata) -> Option<FolderProblem> {
    if meta.file_type().is_symlink() {
        return Some(FolderProblem::Symlink);
    }
    if !meta.is_dir() {
        return Some(FolderProblem::NotAFolder);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let user = rustix::process::geteuid().as_raw();
        if meta.uid() != user {
            return Some(FolderProblem::OwnedByAnother {
                owner: meta.uid(),
                user,
            });
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Some(FolderProblem::OpenToOthers { mode });
        }
    }
    None
}

/// A CA and a serving certificate it signed, for `--self-signed`: written to `dir` (see
/// [`self_signed_folder`]) as `ca.crt`, `tls.crt` and `tls.key` (the names cert-manager gives a
/// Secret's keys); the key is readable by this user alone.
pub(crate) fn self_signed(dir: &Path, hosts: &[String]) -> Result<CertFiles, SelfSignedError> {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "winguard self-signed CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(hosts.to_vec())?;
    params.distinguished_name.push(
        DnType::CommonName,
        hosts.first().map_or("localhost", String::as_str),
    );
    let cert = params.signed_by(&key, &ca)?;
    let files = CertFiles {
        cert: dir.join("tls.crt"),
        key: dir.join("tls.key"),
    };
    crate::write::write_file(&dir.join("ca.crt"), ca.pem().as_bytes())?;
    crate::write::write_file(&files.cert, cert.pem().as_bytes())?;
    crate::write::write_private_file(&files.key, key.serialize_pem().as_bytes())?;
    Ok(files)
}

/// Accepts a TCP connection only while fewer than the limit are open; past it the connection is
/// closed at once, so a flood of idle clients cannot exhaust file descriptors or memory. The
/// permit lives as long as the connection's stream.
#[derive(Clone)]
pub(crate) struct LimitAcceptor {
    permits: Arc<Semaphore>,
}

impl LimitAcceptor {
    pub(crate) fn new(max_connections: usize) -> Self {
        LimitAcceptor {
            permits: Arc::new(Semaphore::new(max_connections)),
        }
    }
}

impl<I, S> axum_server::accept::Accept<I, S> for LimitAcceptor {
    type Stream = Limited<I>;
    type Service = S;
    type Future = std::future::Ready<io::Result<(Self::Stream, Self::Service)>>;

    fn accept(&self, stream: I, service: S) -> Self::Future {
        std::future::ready(match Arc::clone(&self.permits).try_acquire_owned() {
            Ok(permit) => Ok((
                Limited {
                    inner: stream,
                    _permit: permit,
                },
                service,
            )),
            Err(_) => Err(io::Error::other("too many open connections")),
        })
    }
}

/// A connection holding one of the limited permits.
pub(crate) struct Limited<I> {
    inner: I,
    _permit: OwnedSemaphorePermit,
}

impl<I: AsyncRead + Unpin> AsyncRead for Limited<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Limited<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
