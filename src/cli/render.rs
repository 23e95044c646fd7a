//! `winguard render` and the chart inputs of `winguard lint`: Helm's flags, the native renderer
//! or real Helm (`--renderer helm`), and the `helm template` text the manifest loader reads.

use crate::error::{Error, ErrorKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use helm_engine::load::template_locations;
use helm_engine::values::{SetKind, Values, apply_set, merge_maps, parse_values_file};
use helm_engine::{Chart, RenderOptions, load_chart, render_chart_logged};

/// The flags Helm's `template` has for values and the release, with Helm's names.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct ChartArgs {
    /// Values file for charts (repeatable; later files win).
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Set a chart value (`a.b=1,c={x,y}`; repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Set a chart value as a string.
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// Set a chart value from a file's content (`key=path`).
    #[arg(long = "set-file", value_name = "KEY=FILE")]
    pub set_file: Vec<String>,
    /// Set a chart value as JSON (`key={"a":1}`).
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// The release's namespace (`.Release.Namespace`).
    #[arg(
        short = 'n',
        long = "namespace",
        value_name = "NAMESPACE",
        default_value = "default"
    )]
    pub namespace: String,
    /// Extra API versions for `.Capabilities.APIVersions` (repeatable).
    #[arg(short = 'a', long = "api-versions", value_name = "VERSION")]
    pub api_versions: Vec<String>,
    /// Include the chart's CRDs (`crds/`) in the output.
    #[arg(long)]
    pub include_crds: bool,
    /// Leave out test hooks (`helm.sh/hook: test`).
    #[arg(long)]
    pub skip_tests: bool,
    /// Render charts natively (default) or with `helm template` from PATH.
    #[arg(long, value_enum, default_value = "native")]
    pub renderer: Renderer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Renderer {
    #[default]
    Native,
    Helm,
}

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The release name (default `release-name`) when a chart follows; else the chart.
    #[arg(value_name = "RELEASE|CHART")]
    pub first: String,
    /// The chart: a directory with `Chart.yaml`, or a packaged `.tgz`.
    #[arg(value_name = "CHART")]
    pub chart_path: Option<String>,
    #[command(flatten)]
    pub chart: ChartArgs,
    /// Kubernetes version for `.Capabilities.KubeVersion` and `kubeVersion` constraints
    /// (default: Helm's).
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
}

/// A chart rendered to `helm template` text (see [`ChartArgs::render_located`]).
pub struct RenderedChart {
    pub text: String,
    /// Where each template named in a `# Source:` comment is on disk.
    pub locations: BTreeMap<String, String>,
    /// Which template place wrote each stretch of `text` (none when Helm rendered it).
    pub origins: Option<helm_engine::trace::Origins>,
}

impl ChartArgs {
    /// The `-f` files, in order: each as it is named and its text (read once, for the values
    /// and for naming where a value was set).
    fn values_files(&self) -> Result<Vec<(String, String)>, Error> {
        self.values
            .iter()
            .map(|file| {
                let shown = file.display().to_string();
                let bytes = std::fs::read(file).map_err(|e| {
                    Error::new(
                        ErrorKind::Chart,
                        &shown,
                        format!("cannot read values file {shown}: {e}"),
                    )
                })?;
                let text = helm_engine::load::chart_text(&bytes, &shown)?.to_string();
                Ok((shown, text))
            })
            .collect()
    }

    /// The user's values: the `-f` files' (`files`, [`ChartArgs::values_files`]) in order, then
    /// `--set-json`, `--set`, `--set-string`, `--set-file` (Helm's order).
    fn user_values(&self, files: &[(String, String)]) -> Result<Values, Error> {
        let mut values = Values::new();
        for (shown, text) in files {
            merge_maps(&mut values, parse_values_file(text, shown)?);
        }
        let apply = |values: &mut Values, args: &[String], kind: SetKind, flag: &str| {
            for arg in args {
                apply_set(values, arg, kind).map_err(|e| {
                    Error::new(
                        ErrorKind::Chart,
                        flag,
                        format!("failed parsing {flag} data {arg:?}: {e}"),
                    )
                })?;
            }
            Ok::<(), Error>(())
        };
        apply(&mut values, &self.set_json, SetKind::Json, "--set-json")?;
        apply(&mut values, &self.set, SetKind::Typed, "--set")?;
        apply(
            &mut values,
            &self.set_string,
            SetKind::String,
            "--set-string",
        )?;
        for arg in &self.set_file {
            let Some((key, path)) = arg.split_once('=') else {
                return Err(Error::new(
                    ErrorKind::Chart,
                    "--set-file",
                    format!("failed parsing --set-file data {arg:?}: expected KEY=FILE"),
                ));
            };
            let content = std::fs::read_to_string(path).map_err(|e| {
                Error::new(
                    ErrorKind::Chart,
                    path,
                    format!("--set-file {key}: cannot read {path}: {e}"),
                )
            })?;
            let escaped = content.replace('\\', "\\\\").replace(',', "\\,");
            apply_set(&mut values, &format!("{key}={escaped}"), SetKind::String)
                .map_err(|e| Error::new(ErrorKind::Chart, "--set-file", e.to_string()))?;
        }
        Ok(values)
    }

    /// Renders `chart` to `helm template` text.
    pub fn render(
        &self,
        chart: &Path,
        release: &str,
        kube_version: Option<&str>,
    ) -> Result<String, Error> {
        self.render_traced(chart, release, kube_version, false)
            .map(|r| r.text)
    }

    /// Renders `chart` as it would be installed on a cluster of `kube_version` (lint and fix):
    /// `helm template` text, with where each template in its `# Source:` comments is on disk
    /// ([`helm_engine::load::template_locations`]) and, when winguard rendered it, which
    /// template place wrote each stretch of the text. Unlike `helm template`, whose
    /// `.Capabilities.APIVersions` lists group/versions only, the cluster's discovery also lists
    /// each kind, so a chart choosing an API by `Capabilities.APIVersions.Has
    /// "networking.k8s.io/v1/Ingress"` gets what it would get there, not the removed fallback.
    pub fn render_located(
        &self,
        chart: &Path,
        release: &str,
        kube_version: Option<&str>,
    ) -> Result<RenderedChart, Error> {
        let target = kube_version
            .and_then(crate::k8s::parse_version)
            .and_then(|(_, minor)| u32::try_from(minor).ok());
        let served = target.map(crate::k8s::api_lifecycle::served_replacements);
        let mut args = self.clone();
        args.api_versions.extend(served.unwrap_or_default());
        args.render_traced(chart, release, kube_version, true)
    }

    /// [`ChartArgs::render_located`], tracing the text's origins only when `traced`.
    fn render_traced(
        &self,
        chart: &Path,
        release: &str,
        kube_version: Option<&str>,
        traced: bool,
    ) -> Result<RenderedChart, Error> {
        if self.renderer == Renderer::Helm {
            let text = self.render_with_helm(chart, release, kube_version)?;
            // Helm names the templates as winguard's loader does; a chart it can't load has
            // no locations, and its findings keep Helm's names.
            let locations = load_chart(chart)
                .map(|c| template_locations(&c))
                .unwrap_or_default();
            return Ok(RenderedChart {
                text,
                locations,
                origins: None,
            });
        }
        let loaded = load_chart(chart)?;
        let files = self.values_files()?;
        let values = self.user_values(&files)?;
        let opts = RenderOptions {
            release_name: release.to_string(),
            namespace: self.namespace.clone(),
            kube_version: kube_version.map(String::from),
            api_versions: self.api_versions.clone(),
            ..RenderOptions::default()
        };
        let locations = template_locations(&loaded);
        // An error names a template as Helm does (`mychart/templates/x.yaml`): named here as
        // the file that opens, like the findings.
        let located = |mut e: helm_engine::Error| {
            if let Some(file) = locations.get(&e.file) {
                e.file = file.clone();
            }
            Error::from(e)
        };
        // Helm's own log lines (coalescing warnings), on stderr as Helm writes them, before
        // any error.
        let mut log = Vec::new();
        let rendered = render_chart_logged(&loaded, &values, &opts, &mut log);
        for line in log.drain(..) {
            eprintln!("{line}");
        }
        let rendered = rendered.map_err(located)?;
        let output = if traced {
            helm_engine::render::template_output_traced(
                &rendered,
                self.include_crds,
                self.skip_tests,
                &self.values_sources(&loaded, files),
                &mut log,
            )
            .map(|(text, origins)| (text, Some(origins)))
        } else {
            helm_engine::render::template_output(
                &rendered,
                self.include_crds,
                self.skip_tests,
                &mut log,
            )
            .map(|text| (text, None))
        };
        // What Helm logs while it sorts the documents (a hook it does not know), as it does.
        for line in &log {
            eprintln!("{line}");
        }
        let (text, origins) = output.map_err(located)?;
        Ok(RenderedChart {
            text,
            locations,
            origins,
        })
    }

    /// Where the render's values came from, for naming where a finding's value was set.
    fn values_sources(
        &self,
        chart: &Chart,
        files: Vec<(String, String)>,
    ) -> helm_engine::origin::ValuesSources {
        let flags = [
            ("--set-json", &self.set_json),
            ("--set", &self.set),
            ("--set-string", &self.set_string),
            ("--set-file", &self.set_file),
        ];
        helm_engine::origin::ValuesSources::new(
            flags
                .iter()
                .flat_map(|(flag, args)| args.iter().map(|a| (flag.to_string(), a.clone())))
                .collect(),
            files,
            helm_engine::load::values_files(chart),
        )
    }

    /// `helm template` from PATH with the same flags.
    fn render_with_helm(
        &self,
        chart: &Path,
        release: &str,
        kube_version: Option<&str>,
    ) -> Result<String, Error> {
        let mut cmd = std::process::Command::new("helm");
        cmd.arg("template").arg(release).arg(chart);
        cmd.arg("--namespace").arg(&self.namespace);
        for f in &self.values {
            cmd.arg("--values").arg(f);
        }
        for (flag, list) in [
            ("--set", &self.set),
            ("--set-string", &self.set_string),
            ("--set-file", &self.set_file),
            ("--set-json", &self.set_json),
            ("--api-versions", &self.api_versions),
        ] {
            for v in list {
                cmd.arg(flag).arg(v);
            }
        }
        if let Some(v) = kube_version {
            cmd.arg("--kube-version").arg(v);
        }
        if self.include_crds {
            cmd.arg("--include-crds");
        }
        if self.skip_tests {
            cmd.arg("--skip-tests");
        }
        let shown = chart.display().to_string();
        let output = cmd.output().map_err(|e| {
            Error::new(ErrorKind::Chart,
                &shown,
                if e.kind() == std::io::ErrorKind::NotFound {
                    "--renderer helm: `helm` is not on PATH (install Helm, or use the native renderer)"
                        .to_string()
                } else {
                    format!("--renderer helm: cannot run helm: {e}")
                },
            )
        })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(Error::new(
                ErrorKind::Chart,
                &shown,
                format!(
                    "helm template failed: {}",
                    stderr.trim().trim_start_matches("Error: ")
                ),
            ));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// `winguard render`: prints the manifests, or the error (exit 2).
pub fn run(args: &RenderArgs) -> u8 {
    let (release, chart) = match &args.chart_path {
        Some(chart) => (args.first.as_str(), chart),
        None => ("release-name", &args.first),
    };
    match args
        .chart
        .render(Path::new(chart), release, args.kube_version.as_deref())
    {
        Ok(text) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            super::EXIT_CLEAN
        }
        Err(e) => {
            eprintln!("Error: {}", e.message);
            super::EXIT_ERROR
        }
    }
}

impl From<helm_engine::Error> for Error {
    fn from(e: helm_engine::Error) -> Self {
        Error::at(ErrorKind::Chart, &e.file, e.line, e.column, e.message)
    }
}
