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

pub use load::load_chart;
pub use loaded::Chart;
pub use render::{RenderOptions, Rendered, render_chart};

/// A chart that can't be loaded or rendered: Helm's message, which names its place itself
/// (`template: x.yaml:3:5: …`), and the file, line and column when they are known (1-based).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

impl Error {
    /// An error about a whole file.
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at a line and column of a file.
    pub fn at(
        file: &str,
        line: Option<u32>,
        column: Option<u32>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}

impl From<template::TemplateError> for Error {
    fn from(e: template::TemplateError) -> Self {
        let known = |n: usize| (n > 0).then_some(n as u32);
        Error::at(&e.file, known(e.line), known(e.column), e.to_string())
    }
}

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

/// The two glob dialects charts meet.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Glob {
    /// Go's `filepath.Match` (`.helmignore`): `*` and `?` stay within one path part.
    FilepathMatch,
    /// gobwas/glob with `/` as separator (`.Files.Glob`): also `**` across parts and `{a,b}`.
    Gobwas,
}

/// A glob as an anchored regex. Written here because the `glob`-style crates match paths on
/// disk or follow shell rules, not these two Go libraries.
pub(crate) fn glob_regex(pattern: &str, dialect: Glob) -> String {
    let mut re = String::from("^");
    let mut chars = pattern.chars().peekable();
    let mut braces = 0;
    while let Some(c) = chars.next() {
        match c {
            '*' if dialect == Glob::Gobwas && chars.peek() == Some(&'*') => {
                chars.next();
                re.push_str(".*");
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                re.push('[');
                if matches!(chars.peek(), Some('!' | '^')) {
                    chars.next();
                    re.push('^');
                }
                for c in chars.by_ref() {
                    match c {
                        ']' => break,
                        // Ranges (`a-z`) stay; what the regex crate reads as class syntax is
                        // escaped.
                        '\\' | '[' | '&' | '~' => {
                            re.push('\\');
                            re.push(c);
                        }
                        c => re.push(c),
                    }
                }
                re.push(']');
            }
            '{' if dialect == Glob::Gobwas => {
                braces += 1;
                re.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                re.push(')');
            }
            ',' if braces > 0 => re.push('|'),
            '\\' => {
                if let Some(n) = chars.next() {
                    re.push_str(&regex::escape(&n.to_string()));
                }
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    re
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
    use super::{Glob, glob_regex};

    #[test]
    fn globs_in_both_dialects() {
        let m =
            |p: &str, d: Glob, s: &str| regex::Regex::new(&glob_regex(p, d)).unwrap().is_match(s);
        assert!(m("config/[a-c]*.conf", Glob::Gobwas, "config/app.conf"));
        assert!(!m("config/[!a]*.conf", Glob::Gobwas, "config/app.conf"));
        assert!(m("config/**", Glob::Gobwas, "config/nested/deep.txt"));
        assert!(!m("config/*", Glob::Gobwas, "config/nested/deep.txt"));
        assert!(m("*.{yaml,json}", Glob::Gobwas, "a.json"));
        assert!(m("*.tmp", Glob::FilepathMatch, "a.tmp"));
        assert!(!m("a,b", Glob::FilepathMatch, "a"));
    }
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
