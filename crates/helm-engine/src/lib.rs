//! Helm 4's chart engine, in Rust: loading a chart (directory or `.tgz`), Helm's values,
//! rendering its templates as `helm template` does, and a trace of where each byte of the output
//! came from. It knows nothing of what reads the output (winguard's linter is one user).
//!
//! - [`load`]: `Chart.yaml`, `values.yaml`, `values.schema.json`, `templates/`, `crds/`, other
//!   files (for `.Files`), subcharts in `charts/` (directories and archives), `.helmignore`,
//!   within Helm's loader's size limits.
//! - [`values`]: the merge order (subchart defaults, parent values, `-f` files, `--set*`),
//!   `--set` syntax, dependency conditions, tags, aliases, `import-values`, globals; [`schema`]
//!   checks them against `values.schema.json`.
//! - [`render`]: the template set, each template's data (`.Values`, `.Chart`, `.Release`,
//!   `.Capabilities`, `.Files`, `.Template`, built in [`objects`]), and `helm template`'s
//!   document order.
//! - [`template`]: Go's `text/template` with Helm's and Sprig's functions.
//! - [`trace`] and [`origin`]: which template place wrote each stretch of the output, and which
//!   value an action printed and where that value was set.
//!
//! YAML is read and written as Helm's go-yaml v2 does, by [`yaml_value`].

pub mod error;
pub mod glob;
pub mod load;
pub mod loaded;
pub mod objects;
pub mod origin;
pub mod render;
pub mod schema;
pub mod template;
pub mod trace;
pub mod values;
pub mod values_path;

pub use error::Error;
pub use load::load_chart;
pub use loaded::Chart;
pub use render::{RenderOptions, Rendered, render_chart, render_chart_logged};

/// Whether `path` is a chart: a directory with `Chart.yaml`, or a `.tgz` archive.
pub fn is_chart(path: &std::path::Path) -> bool {
    if path.is_dir() {
        return path.join("Chart.yaml").is_file();
    }
    path.is_file()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".tgz") || n.ends_with(".tar.gz"))
}

/// The chart a file belongs to, when it is one of the chart's own files (under `templates/` or
/// `charts/`, or its `Chart.yaml`, `values.yaml`, `values.schema.json`): the nearest directory
/// above it with a `Chart.yaml`.
pub fn chart_of_file(file: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut dir = file.parent()?;
    let mut first = file.file_name()?.to_str()?.to_string();
    loop {
        if dir.join("Chart.yaml").is_file() {
            let own = matches!(
                first.as_str(),
                "templates" | "charts" | "Chart.yaml" | "values.yaml" | "values.schema.json"
            );
            if !own {
                return None;
            }
            // A subchart's file belongs to the chart that holds it (its values come from there).
            let mut root = dir.to_path_buf();
            while let Some(holder) = root
                .parent()
                .filter(|p| p.file_name().is_some_and(|n| n == "charts"))
                .and_then(|p| p.parent())
                .filter(|g| g.join("Chart.yaml").is_file())
            {
                root = holder.to_path_buf();
            }
            return Some(root);
        }
        first = dir.file_name()?.to_str()?.to_string();
        dir = dir.parent()?;
        if dir.as_os_str().is_empty() {
            dir = std::path::Path::new(".");
            if !dir.join("Chart.yaml").is_file() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn files_map_to_the_outermost_chart_that_holds_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/charts");
        let of = |p: &str| super::chart_of_file(&root.join(p));
        assert_eq!(
            of("windows-iis/templates/deployment.yaml"),
            Some(root.join("windows-iis"))
        );
        assert_eq!(
            of("windows-iis/values.yaml"),
            Some(root.join("windows-iis"))
        );
        assert_eq!(of("windows-iis/files/web.config"), None);
        assert_eq!(
            of("subchart-values/charts/backend/templates/cm.yaml"),
            Some(root.join("subchart-values"))
        );
        assert_eq!(of("cases.yaml"), None);
    }
}
