//! Kustomize overlays: a directory with a kustomization file is built with `kubectl kustomize`
//! or `kustomize build` from PATH, and its output is what gets linted.
//!
//! winguard does not build kustomizations itself: kustomize's semantics (patches, generators,
//! components, replacements, Helm inflation) are large and only the real tool gets them right.
//! Without either binary, an overlay is an error, never an empty "no problems" run.
//!
//! Nor does winguard let kustomize reach the network unless asked: before it runs, the overlay's
//! tree is read for remote resources, bases, components and charts ([`remote`]).

mod origins;
mod remote;
mod tree;

pub(crate) use tree::Trees;

use crate::error::{Error, ErrorKind, Errors};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::manifest::KUSTOMIZATION_FILES;

/// Which binary builds overlays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KustomizeRenderer {
    /// `kubectl kustomize` if kubectl is on PATH, else `kustomize build`.
    #[default]
    Auto,
    /// `kubectl kustomize DIR`.
    Kubectl,
    /// `kustomize build DIR`.
    Kustomize,
}

/// The kustomization file of `dir`, as findings name the overlay.
pub(crate) fn kustomization_file(dir: &Path) -> PathBuf {
    KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .unwrap_or_else(|| dir.join(KUSTOMIZATION_FILES[0]))
}

/// The command that builds `dir`, by `renderer`'s choice and what is on PATH.
fn command(renderer: KustomizeRenderer, dir: &Path) -> Result<Command, String> {
    let kubectl = || {
        let mut c = Command::new("kubectl");
        c.arg("kustomize").arg(dir);
        c
    };
    let kustomize = || {
        let mut c = Command::new("kustomize");
        c.arg("build").arg(dir);
        c
    };
    Ok(match renderer {
        KustomizeRenderer::Kubectl => kubectl(),
        KustomizeRenderer::Kustomize => kustomize(),
        KustomizeRenderer::Auto if on_path("kubectl") => kubectl(),
        KustomizeRenderer::Auto if on_path("kustomize") => kustomize(),
        KustomizeRenderer::Auto => {
            return Err(
                "a kustomize overlay, and neither `kubectl` nor `kustomize` is on PATH \
                 to build it (install one, or lint `kubectl kustomize DIR | winguard lint -`)"
                    .to_string(),
            );
        }
    })
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|dir| dir.join(name).is_file())
}

/// An overlay's output, and where each part of it was written (when kustomize could say).
pub(crate) struct Built {
    pub text: String,
    pub origins: Option<helm_engine::trace::Origins>,
}

/// Builds the overlay in `dir`; errors name its kustomization file. Unless `allow_remote`, an
/// overlay whose tree names anything kustomize would fetch is not built: each such entry is an
/// error at its file, line and column. The output is traced to the resources and patches that
/// wrote it ([`origins`]); where kustomize can't build the tracing kustomization, the overlay is
/// built as it is, untraced, and its own errors are what is reported.
pub(crate) fn build(
    dir: &Path,
    renderer: KustomizeRenderer,
    allow_remote: bool,
) -> Result<Built, Errors> {
    if !allow_remote {
        let remote = remote::remote_references(dir);
        if !remote.is_empty() {
            return Err(Errors(remote));
        }
    }
    // The scratch directory by its real path: kustomize's annotations name files relative to
    // it, and the relative path to the overlay is taken from it (a temp folder may be a link).
    if let Ok(scratch) = tempfile::tempdir()
        && let Ok(real) = std::fs::canonicalize(scratch.path())
        && origins::wrapper(&real, dir).is_ok()
        && let Ok(text) = run(&real, renderer)
    {
        let (text, origins) = origins::trace(&text, &real);
        return Ok(Built {
            text,
            origins: Some(origins),
        });
    }
    let text = run(dir, renderer)?;
    Ok(Built {
        text,
        origins: None,
    })
}

/// Runs the renderer on `dir`.
fn run(dir: &Path, renderer: KustomizeRenderer) -> Result<String, Error> {
    let file = kustomization_file(dir).display().to_string();
    let error = |message: String| Error {
        kind: ErrorKind::Input,
        file: file.clone(),
        line: None,
        column: None,
        message,
    };
    let mut cmd = command(renderer, dir).map_err(error)?;
    let program = cmd.get_program().to_string_lossy().into_owned();
    let output = cmd.output().map_err(|e| {
        error(if e.kind() == std::io::ErrorKind::NotFound {
            format!("--kustomize-renderer: `{program}` is not on PATH")
        } else {
            format!("cannot run {program}: {e}")
        })
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(error(format!(
            "{program} could not build the overlay: {}",
            stderr.trim().trim_start_matches("Error: ")
        )));
    }
    String::from_utf8(output.stdout)
        .map_err(|_| error(format!("{program} wrote output that is not UTF-8")))
}
