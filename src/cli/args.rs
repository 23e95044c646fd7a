//! The command line's argument types that stand for types of the layers below: clap's derive
//! and value names live here, and each converts to the plain type its layer takes.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::config::Profile;
use crate::kustomize::KustomizeRenderer;
use crate::policy::PolicySource;
use crate::report::Format;
use crate::serve::{LogFormat, ServeOptions};

/// Where the rules and the cluster profile come from (`lint`, `serve`, `fix`, `mutate`).
#[derive(Debug, clap::Args, Clone, Default)]
pub struct SetupArgs {
    /// Config file (default: the nearest `winguard.yaml`/`.winguard.yaml`, up to the
    /// repository's top level: `lint` looks from each input, the other commands from the
    /// working directory).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Kubernetes version of the target cluster (overrides `kubernetesVersion`).
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Cluster profile (overrides `profile`).
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    #[command(flatten)]
    pub rules: RuleSource,
    /// Run only these rules (comma-separated; replaces the config's `select`).
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    pub select: Option<Vec<String>>,
    /// Also run these rules, opt-in ones included (adds to `extendSelect`).
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    pub extend_select: Vec<String>,
    /// Never run these rules (replaces the config's `ignore`).
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    pub ignore: Option<Vec<String>>,
    /// The cluster's nodes, as `kubectl get nodes -o json` prints them: the Windows nodes' builds
    /// and taints replace the config's (`windows.nodeBuilds`, `windows.taints`).
    #[arg(long, value_name = "FILE")]
    pub nodes: Option<PathBuf>,
    /// Read each image's platforms (OS, Windows build) from its registry: only manifests are
    /// read, with the Docker config's credentials; results are cached (`images.resolve`).
    #[arg(long)]
    pub resolve_images: bool,
    /// Read images' platforms only from the cache, never from a registry (implies
    /// `--resolve-images`).
    #[arg(long)]
    pub offline: bool,
}

impl SetupArgs {
    pub fn source(&self) -> PolicySource {
        PolicySource {
            config: self.config.clone(),
            kube_version: self.kube_version.clone(),
            profile: self.profile,
            rule_dirs: self.rules.rule_dirs.clone(),
            select: self.select.clone(),
            extend_select: self.extend_select.clone(),
            ignore: self.ignore.clone(),
            nodes: self.nodes.clone(),
            resolve_images: self.resolve_images,
            offline: self.offline,
        }
    }
}

/// Where rules come from.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct RuleSource {
    /// Also load rule files (`*.yaml`) from this directory (repeatable).
    #[arg(long = "rules", value_name = "DIR")]
    pub rule_dirs: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:8443")]
    pub listen: SocketAddr,
    /// Serving certificate chain (PEM); re-read when it changes.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Private key of the certificate (PEM); re-read when it changes.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Generate a CA and a certificate for localhost instead (local use); prints where the CA is.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub self_signed: bool,
    /// Where `--self-signed` writes `ca.crt`, `tls.crt` and `tls.key` (the key readable by its
    /// owner only); by default a folder of this user's alone, `winguard-self-signed` under
    /// $XDG_RUNTIME_DIR or `winguard-self-signed-UID` in the temp folder.
    #[arg(long, value_name = "DIR", requires = "self_signed")]
    pub self_signed_dir: Option<PathBuf>,
    /// Rules and config; the config file is re-read when it changes, and a bad new version is
    /// rejected while the last good one stays in force.
    #[command(flatten)]
    pub setup: SetupArgs,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: crate::serve::LogFormat,
    /// Most connections open at once; more are closed on arrival.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    /// How long SIGTERM waits for in-flight requests before closing connections.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub drain_timeout: u64,
    /// How long a client may take over a TLS handshake, its first request's headers, or a request
    /// body; slower clients are cut off so they cannot hold the server.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub request_timeout: f64,
    /// How often the certificate and config files are checked for changes.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub reload_interval: f64,
    /// Also serve `GET /metrics` (and `/healthz`) over plain HTTP on this address, off the
    /// webhook port: for a Prometheus that scrapes without the webhook's CA, and a NetworkPolicy
    /// that admits scrapers to this port only. `/metrics` stays on the webhook port too.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<SocketAddr>,
}

impl ServeArgs {
    pub fn options(self) -> ServeOptions {
        ServeOptions {
            listen: self.listen,
            tls_cert: self.tls_cert,
            tls_key: self.tls_key,
            self_signed: self.self_signed,
            self_signed_dir: self.self_signed_dir,
            setup: self.setup.source(),
            log_format: self.log_format,
            max_connections: self.max_connections,
            drain_timeout: self.drain_timeout,
            request_timeout: self.request_timeout,
            reload_interval: self.reload_interval,
            metrics_listen: self.metrics_listen,
        }
    }
}

/// A clap value enum for a type of a layer below, whose variants are named here: each variant,
/// its name on the command line, and its help (empty for none).
macro_rules! value_enum {
    ($type:ty { $($variant:expr => $name:literal, $help:literal;)+ }) => {
        impl ValueEnum for $type {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($variant),+]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(v if *v == $variant => {
                        let value = PossibleValue::new($name);
                        if $help.is_empty() { value } else { value.help($help) }
                    })+
                    _ => return None,
                })
            }
        }
    };
}

value_enum!(Profile {
    Profile::Generic => "generic", "";
    Profile::Eks => "eks", "";
    Profile::Aks => "aks", "";
    Profile::Gke => "gke", "";
});

value_enum!(Format {
    Format::Text => "text", "";
    Format::Json => "json", "";
    Format::Sarif => "sarif", "";
    Format::Junit => "junit", "";
    Format::Github => "github", "";
    Format::Policyreport => "policyreport",
        "`wgpolicyk8s.io/v1alpha2` PolicyReports (one per namespace) and a ClusterPolicyReport, as Kyverno writes them by default";
    Format::Openreports => "openreports",
        "The same as `openreports.io/v1alpha1` Reports and a ClusterReport, the successor API Kyverno writes with `--openreportsEnabled`";
});

value_enum!(KustomizeRenderer {
    KustomizeRenderer::Auto => "auto", "`kubectl kustomize` if kubectl is on PATH, else `kustomize build`";
    KustomizeRenderer::Kubectl => "kubectl", "`kubectl kustomize DIR`";
    KustomizeRenderer::Kustomize => "kustomize", "`kustomize build DIR`";
});

value_enum!(LogFormat {
    LogFormat::Text => "text", "";
    LogFormat::Json => "json", "";
});

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant of every enum has its name, and names read back as the variant.
    #[test]
    fn value_enums_name_every_variant() {
        fn check<T: ValueEnum + PartialEq + std::fmt::Debug>() {
            for v in T::value_variants() {
                let name = v
                    .to_possible_value()
                    .expect("a name")
                    .get_name()
                    .to_string();
                assert_eq!(T::from_str(&name, false).as_ref(), Ok(v), "{name}");
            }
        }
        check::<Profile>();
        check::<Format>();
        check::<KustomizeRenderer>();
        check::<LogFormat>();
        for p in Profile::ALL {
            assert_eq!(p.to_possible_value().unwrap().get_name(), p.as_str());
        }
    }
}
