//! Images' platforms read from their registries (`--resolve-images`): each image's manifest or
//! index through the OCI distribution API (`oci-client`), only manifest and image-config reads,
//! with the credentials of the Docker config (`auths`, `credHelpers`, `credsStore`) or the
//! registry's anonymous bearer token.
//!
//! What was read is kept in the cache directory (`crate::cache`): a digest's platforms forever
//! (a digest names its content), a tag's digest for `images.tagTtl`. `--offline` reads only
//! the cache, stale tags included. A registry that can't be reached, or an image it doesn't
//! have, is a warning naming the image ([`Registry::take_warnings`]): the model then judges the
//! image by its name, as without `--resolve-images`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use oci_client::Reference;
use oci_client::secrets::RegistryAuth;

use crate::windows::platforms::{ImagePlatformSource, ImagePlatforms, Platform};

/// How a run reads registries.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Read registries (or, offline, the cache): `--resolve-images`, `images.resolve`. Else
    /// only the stated platforms are known.
    pub read_registries: bool,
    /// Read only the cache (`--offline`).
    pub offline: bool,
    /// Registries (`host[:port]`) spoken to over plain HTTP, as containerd's insecure registries.
    pub insecure_registries: Vec<String>,
    /// How long a tag's digest is trusted before the registry is asked again.
    pub tag_ttl: Duration,
    /// Images' platforms the config states (`images.platforms`), by reference, in the
    /// config's order (the first of two keys naming one image holds).
    pub stated: Vec<(String, Arc<ImagePlatforms>)>,
}

/// An image as asked for: its text, and the one form the cache and the config's keys are
/// compared in (the repository as Docker normalises it, `:latest` when no tag is given). Read
/// with the model's image parser: the distribution reference grammar (`oci_client::Reference`)
/// is a regex that takes longer to build than a whole lint of a small file, so it is built only
/// when a registry is read.
struct Wanted {
    text: String,
    canonical: String,
    digest: Option<String>,
}

impl Wanted {
    fn new(text: &str) -> Self {
        let image = crate::windows::parse_image(text);
        let canonical = match &image.digest {
            Some(d) => format!("{}@{d}", image.repository),
            None => format!(
                "{}:{}",
                image.repository,
                image.tag.as_deref().unwrap_or("latest")
            ),
        };
        Wanted {
            text: text.trim().to_string(),
            canonical,
            digest: image.digest,
        }
    }
}

/// Reads images' platforms for a run (or a server's life), each image once per `tag_ttl`.
pub struct Registry {
    settings: Settings,
    client: OnceLock<oci_client::Client>,
    /// What was found for each image text, until when: platforms read or cached until the tag's
    /// time to live runs out; a failure (or a stale digest used for one) for
    /// [`FAILURE_MEMORY`], so a run, or a server's reviews for a while, ask a failing registry once.
    found: Mutex<HashMap<String, Found>>,
    warnings: Mutex<Vec<String>>,
    /// Auth per registry host, read from the Docker config once.
    auths: Mutex<HashMap<String, RegistryAuth>>,
    /// The stated platforms by canonical reference (`busybox` is
    /// `docker.io/library/busybox:latest`), each key read once.
    stated: Vec<(String, Arc<ImagePlatforms>)>,
}

/// What is known of one image, and until when.
type Found = (Instant, Option<Arc<ImagePlatforms>>);

/// How long a registry that could not be read is not asked again.
const FAILURE_MEMORY: Duration = Duration::from_secs(60);

/// The longest one image's reads may take, all requests together: a registry that trickles
/// bytes never trips the per-read timeout, and a review must not wait on it without end.
const READ_DEADLINE: Duration = Duration::from_secs(10);

/// The media types asked for: an index or manifest list, else one image's manifest.
const MANIFEST_TYPES: [&str; 4] = [
    oci_client::manifest::OCI_IMAGE_INDEX_MEDIA_TYPE,
    oci_client::manifest::IMAGE_MANIFEST_LIST_MEDIA_TYPE,
    oci_client::manifest::OCI_IMAGE_MEDIA_TYPE,
    oci_client::manifest::IMAGE_MANIFEST_MEDIA_TYPE,
];

/// Manifests and image configs are small; a larger one is refused (a config by the size its
/// manifest gives, before it is fetched; a manifest once read: oci-client reads whole bodies).
const MAX_DOCUMENT: usize = 4 << 20;

impl Registry {
    pub fn new(settings: Settings) -> Self {
        let stated = settings
            .stated
            .iter()
            .map(|(image, platforms)| (Wanted::new(image).canonical, platforms.clone()))
            .collect();
        Registry {
            stated,
            settings,
            client: OnceLock::new(),
            found: Mutex::default(),
            warnings: Mutex::default(),
            auths: Mutex::default(),
        }
    }

    /// The warnings so far (images whose platforms could not be read), each once; the list is
    /// emptied.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.warnings))
    }

    fn warn(&self, message: String) {
        let mut warnings = lock(&self.warnings);
        if !warnings.contains(&message) {
            tracing::warn!(message = message.as_str(), "image not resolved");
            warnings.push(message);
        }
    }

    fn client(&self) -> &oci_client::Client {
        self.client.get_or_init(|| {
            // reqwest is built without a crypto provider of its own: the process's (ring, as
            // the webhook's TLS uses) is installed if none is yet.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let config = oci_client::client::ClientConfig {
                protocol: if self.settings.insecure_registries.is_empty() {
                    oci_client::client::ClientProtocol::Https
                } else {
                    oci_client::client::ClientProtocol::HttpsExcept(
                        self.settings.insecure_registries.clone(),
                    )
                },
                connect_timeout: Some(Duration::from_secs(5)),
                read_timeout: Some(Duration::from_secs(15)),
                user_agent: concat!("winguard/", env!("CARGO_PKG_VERSION")),
                ..Default::default()
            };
            oci_client::Client::new(config)
        })
    }

    /// The platforms of `image`: from this run's memory, the cache, or its registry.
    fn resolve(&self, image: &str) -> Option<Arc<ImagePlatforms>> {
        let text = image.trim();
        if text.is_empty() {
            return None;
        }
        let wanted = Wanted::new(text);
        if let Some((_, stated)) = self.stated.iter().find(|(k, _)| *k == wanted.canonical) {
            return Some(stated.clone());
        }
        if !self.settings.read_registries {
            return None;
        }
        if let Some((until, found)) = lock(&self.found).get(text)
            && Instant::now() < *until
        {
            return found.clone();
        }
        let (found, for_how_long) = self.resolve_wanted(&wanted);
        let found = found.map(Arc::new);
        lock(&self.found).insert(
            text.to_string(),
            (Instant::now() + for_how_long, found.clone()),
        );
        found
    }

    /// The platforms of `wanted`, and how long they hold: a fresh tag's digest for what is left
    /// of its time to live, a failure for [`FAILURE_MEMORY`].
    fn resolve_wanted(&self, wanted: &Wanted) -> (Option<ImagePlatforms>, Duration) {
        let ttl = self.settings.tag_ttl;
        let text = wanted.text.as_str();
        let cached_tag = match &wanted.digest {
            Some(_) => None,
            None => cache::read_tag(&wanted.canonical),
        };
        let digest = match (wanted.digest.as_deref(), &cached_tag) {
            (Some(d), _) => Some((d.to_string(), ttl)),
            (None, Some(entry)) if self.settings.offline => {
                Some((entry.digest.clone(), FAILURE_MEMORY))
            }
            (None, Some(entry)) => entry
                .time_left(ttl)
                .map(|left| (entry.digest.clone(), left)),
            _ => None,
        };
        if let Some((digest, left)) = &digest
            && let Some(platforms) = cache::read_digest(digest)
        {
            return (Some(platforms), *left);
        }
        if self.settings.offline {
            self.warn(format!(
                "image `{text}`: its platforms are not in the cache and --offline reads no \
                 registry; judged by its name"
            ));
            return (None, FAILURE_MEMORY);
        }
        let reference: Reference = match text.parse() {
            Ok(r) => r,
            Err(e) => {
                self.warn(format!(
                    "image `{text}`: not an image reference ({e}); judged by its name"
                ));
                return (None, ttl);
            }
        };
        let e = match self.read_registry(&reference) {
            Ok(platforms) => {
                cache::write_digest(&platforms);
                if wanted.digest.is_none() {
                    cache::write_tag(&wanted.canonical, &platforms.digest);
                }
                return (Some(platforms), ttl);
            }
            Err(e) => e,
        };
        // A registry that is down leaves a tag read before as it was: used, and said, and
        // asked again soon.
        let stale = cached_tag
            .and_then(|entry| cache::read_digest(&entry.digest).map(|p| (p, entry.read_at)));
        match stale {
            Some((platforms, read_at)) => {
                self.warn(format!(
                    "image `{text}`: cannot read its registry ({e}); using its digest as read \
                     at {read_at}"
                ));
                (Some(platforms), FAILURE_MEMORY)
            }
            None => {
                self.warn(format!(
                    "image `{text}`: cannot read its platforms from its registry ({e}); judged \
                     by its name"
                ));
                (None, FAILURE_MEMORY)
            }
        }
    }

    /// Reads the manifest `reference` names and, for a single image, its config.
    fn read_registry(&self, reference: &Reference) -> Result<ImagePlatforms, String> {
        let client = self.client().clone();
        let auth = self.auth_for(reference);
        let reference = reference.clone();
        let read = async move {
            let (bytes, digest) = client
                .pull_manifest_raw(&reference, &auth, &MANIFEST_TYPES)
                .await
                .map_err(|e| error_chain(&e))?;
            if bytes.len() > MAX_DOCUMENT {
                return Err(format!("its manifest is over {MAX_DOCUMENT} bytes"));
            }
            let manifest: ManifestDoc = serde_json::from_slice(&bytes)
                .map_err(|e| format!("its manifest is not JSON a registry serves: {e}"))?;
            let platforms = match (manifest.manifests, manifest.config) {
                (Some(entries), _) => {
                    // An entry that names no platform (a nested index, say) could hold any OS:
                    // the image's platforms are then not known, rather than known without it.
                    if let Some(i) = entries.iter().position(|e| e.platform.is_none()) {
                        return Err(format!("entry {i} of its index names no platform"));
                    }
                    entries
                        .into_iter()
                        .filter_map(|e| e.platform)
                        // Build attestations are listed as `unknown/unknown`.
                        .filter(|p| p.os != "unknown")
                        .collect::<Vec<_>>()
                }
                (None, Some(config)) => {
                    if config.size.is_some_and(|size| size > MAX_DOCUMENT as u64) {
                        return Err(format!("its image config is over {MAX_DOCUMENT} bytes"));
                    }
                    let mut blob = Vec::new();
                    client
                        .pull_blob(&reference, config.digest.as_str(), &mut blob)
                        .await
                        .map_err(|e| error_chain(&e))?;
                    let config: Platform = serde_json::from_slice(&blob)
                        .map_err(|e| format!("its image config has no platform: {e}"))?;
                    vec![Platform {
                        os: config.os,
                        os_version: config.os_version,
                        architecture: config.architecture,
                        variant: config.variant,
                    }]
                }
                (None, None) => {
                    return Err("its manifest is neither an index nor an image".to_string());
                }
            };
            if platforms.is_empty() {
                return Err("it lists no platform".to_string());
            }
            Ok(ImagePlatforms {
                digest,
                platforms,
                stated_in: None,
            })
        };
        let (tx, rx) = std::sync::mpsc::channel();
        runtime().spawn(async move {
            let read = tokio::time::timeout(READ_DEADLINE, read)
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {} s", READ_DEADLINE.as_secs())));
            let _ = tx.send(read);
        });
        rx.recv()
            .unwrap_or_else(|_| Err("the registry read was cut short".to_string()))
    }

    /// The Docker config's credentials for the image's registry, else anonymous (the client
    /// then asks the registry for an anonymous bearer token if it wants one).
    fn auth_for(&self, reference: &Reference) -> RegistryAuth {
        let host = reference.registry().to_string();
        if let Some(auth) = lock(&self.auths).get(&host) {
            return auth.clone();
        }
        let mut names = vec![host.clone(), format!("https://{host}")];
        if host == "docker.io" || host == "index.docker.io" {
            // `docker login` keeps Docker Hub's under its old address.
            names.insert(0, "https://index.docker.io/v1/".to_string());
        }
        let mut auth = RegistryAuth::Anonymous;
        for name in &names {
            use docker_credential::{CredentialRetrievalError as E, DockerCredential};
            match docker_credential::get_credential(name) {
                Ok(DockerCredential::UsernamePassword(user, password)) => {
                    auth = RegistryAuth::Basic(user, password);
                    break;
                }
                Ok(DockerCredential::IdentityToken(_)) => {
                    self.warn(format!(
                        "registry `{host}`: the Docker config holds an identity token, which \
                         winguard does not exchange; reading it anonymously"
                    ));
                    break;
                }
                // A credential store without an entry for this registry fails as its helper
                // does: as docker does, the registry is then read anonymously, unannounced.
                Err(
                    E::NoCredentialConfigured
                    | E::ConfigNotFound
                    | E::ConfigReadError
                    | E::HelperFailure { .. },
                ) => {}
                Err(e) => {
                    self.warn(format!(
                        "registry `{host}`: cannot read its credentials from the Docker config \
                         ({e}); reading it anonymously"
                    ));
                    break;
                }
            }
        }
        lock(&self.auths).insert(host, auth.clone());
        auth
    }
}

impl ImagePlatformSource for Registry {
    fn platforms(&self, image: &str) -> Option<Arc<ImagePlatforms>> {
        self.resolve(image)
    }
}

/// The fields of a manifest or index that say its platforms.
#[derive(serde::Deserialize)]
struct ManifestDoc {
    #[serde(default)]
    manifests: Option<Vec<IndexEntry>>,
    #[serde(default)]
    config: Option<ConfigRef>,
}

#[derive(serde::Deserialize)]
struct IndexEntry {
    #[serde(default)]
    platform: Option<Platform>,
}

#[derive(serde::Deserialize)]
struct ConfigRef {
    digest: String,
    #[serde(default)]
    size: Option<u64>,
}

/// The runtime registry reads run on, apart from any the caller runs in (the webhook's): a
/// reader blocks on a channel, never on a runtime, so it may be called from anywhere.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("winguard-registry")
            .enable_all()
            .build()
            .expect("a runtime with two threads can be built")
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked mid-insert: the map is still whole.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An error and its causes in one line (reqwest's own message names only the URL).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// The image entries of the cache directory: `images/digests/<algorithm>-<hex>.json` holds a
/// digest's platforms (kept: a digest names its content), `images/tags/<reference>.json` a
/// tag's digest and when it was read (the reference percent-encoded).
mod cache {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize)]
    pub(super) struct TagEntry {
        pub reference: String,
        pub digest: String,
        #[serde(rename = "readAt")]
        pub read_at: jiff::Timestamp,
    }

    impl TagEntry {
        /// What is left of its time to live, if anything (none for a `readAt` in the future:
        /// a clock that went back).
        pub(super) fn time_left(&self, ttl: Duration) -> Option<Duration> {
            let age = jiff::Timestamp::now().duration_since(self.read_at);
            if age.is_negative() {
                return None;
            }
            ttl.checked_sub(age.unsigned_abs())
                .filter(|left| !left.is_zero())
        }
    }

    fn digest_entry(digest: &str) -> Option<String> {
        let (algorithm, hex) = digest.split_once(':')?;
        let plain = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'+' || b == b'.')
        };
        (plain(algorithm) && plain(hex)).then(|| format!("images/digests/{algorithm}-{hex}.json"))
    }

    fn tag_entry(canonical: &str) -> String {
        const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
            .remove(b'-')
            .remove(b'.')
            .remove(b'_');
        format!(
            "images/tags/{}.json",
            percent_encoding::utf8_percent_encode(canonical, KEEP)
        )
    }

    pub(super) fn read_digest(digest: &str) -> Option<ImagePlatforms> {
        let bytes = crate::cache::read(&digest_entry(digest)?)?;
        serde_json::from_slice::<ImagePlatforms>(&bytes)
            .ok()
            .filter(|p| p.digest == digest)
    }

    pub(super) fn write_digest(platforms: &ImagePlatforms) {
        if let Some(entry) = digest_entry(&platforms.digest) {
            crate::cache::write_kept(&entry, || {
                serde_json::to_vec_pretty(platforms).unwrap_or_default()
            });
        }
    }

    pub(super) fn read_tag(canonical: &str) -> Option<TagEntry> {
        let bytes = crate::cache::read(&tag_entry(canonical))?;
        serde_json::from_slice::<TagEntry>(&bytes)
            .ok()
            .filter(|t| t.reference == canonical)
    }

    pub(super) fn write_tag(canonical: &str, digest: &str) {
        let entry = TagEntry {
            reference: canonical.to_string(),
            digest: digest.to_string(),
            read_at: jiff::Timestamp::now(),
        };
        crate::cache::write_kept(&tag_entry(canonical), || {
            serde_json::to_vec_pretty(&entry).unwrap_or_default()
        });
    }
}
