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
pub(crate) fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<ServerConfig, String> {
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

    pub(crate) fn load(&self) -> Result<ServerConfig, String> {
        let (cert, key) = self.read()?;
        server_config(&cert, &key)
            .map_err(|e| format!("{} / {}: {e}", self.cert.display(), self.key.display()))
    }
}

/// A CA and a serving certificate it signed, for `--self-signed`: written to `dir` as `ca.crt`,
/// `tls.crt` and `tls.key` (the names cert-manager gives a Secret's keys).
pub(crate) fn self_signed(dir: &Path, hosts: &[String]) -> Result<CertFiles, String> {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let err = |e: rcgen::Error| format!("generating a self-signed certificate: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "winguard self-signed CA");
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?).map_err(err)?;
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(hosts.to_vec()).map_err(err)?;
    params.distinguished_name.push(
        DnType::CommonName,
        hosts.first().map_or("localhost", String::as_str),
    );
    let cert = params.signed_by(&key, &ca).map_err(err)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let files = CertFiles {
        cert: dir.join("tls.crt"),
        key: dir.join("tls.key"),
    };
    let write = |p: &Path, text: String| {
        crate::write::write_file(p, text.as_bytes()).map_err(|e| e.to_string())
    };
    write(&dir.join("ca.crt"), ca.pem())?;
    write(&files.cert, cert.pem())?;
    write(&files.key, key.serialize_pem())?;
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
