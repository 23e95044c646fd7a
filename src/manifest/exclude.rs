//! `exclude`: paths a run leaves out, as gitignore-like globs (`globset`, with `**`). A pattern
//! without `/` matches a file or directory name anywhere (`vendor`, `*.generated.yaml`); one with
//! `/` matches the path from its base (`charts/*/ci/**`; a leading `/` anchors nothing more),
//! or a directory above the path. The config's patterns are relative to the config file's
//! directory, the command line's to the working directory.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Patterns read against one base directory.
#[derive(Debug, Clone)]
struct Group {
    base: PathBuf,
    names: GlobSet,
    paths: GlobSet,
}

/// Every `exclude` of a run.
#[derive(Debug, Clone, Default)]
pub struct Exclusions {
    groups: Vec<Group>,
    /// The working directory, read once: every walked path is checked.
    cwd: Option<PathBuf>,
}

impl Exclusions {
    /// Adds `patterns`, read from `base`; a pattern that is not a glob is the error, named.
    pub fn add(&mut self, patterns: &[String], base: &Path) -> Result<(), String> {
        if patterns.is_empty() {
            return Ok(());
        }
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for pattern in patterns {
            let trimmed = pattern.trim_end_matches('/');
            // As in .gitignore, `*` stays within one path segment; `**` crosses them.
            let glob = |p: &str| {
                GlobBuilder::new(p)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("exclude: `{pattern}` is not a glob: {e}"))
            };
            if trimmed.contains('/') {
                paths.add(glob(trimmed.trim_start_matches('/'))?);
            } else {
                names.add(glob(trimmed)?);
            }
        }
        let built = |b: GlobSetBuilder| b.build().map_err(|e| format!("exclude: {e}"));
        if self.cwd.is_none() {
            self.cwd = std::env::current_dir().ok();
        }
        self.groups.push(Group {
            base: absolute(self.cwd.as_deref(), base),
            names: built(names)?,
            paths: built(paths)?,
        });
        Ok(())
    }

    /// Whether `path` (as given or walked) is left out.
    pub fn excludes(&self, path: &Path) -> bool {
        if self.groups.is_empty() {
            return false;
        }
        let full = absolute(self.cwd.as_deref(), path);
        self.groups.iter().any(|g| {
            let relative = full.strip_prefix(&g.base).unwrap_or(path);
            let names = relative.components().any(|c| match c {
                Component::Normal(name) => g.names.is_match(name),
                _ => false,
            });
            names
                || relative
                    .ancestors()
                    .any(|a| !a.as_os_str().is_empty() && g.paths.is_match(a))
        })
    }
}

/// `path` from the working directory, `.` and `..` resolved by name (no file is read).
fn absolute(cwd: Option<&Path>, path: &Path) -> PathBuf {
    let joined = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_anywhere_and_paths_from_their_base() {
        let base = Path::new("/repo");
        let mut ex = Exclusions::default();
        ex.add(
            &[
                "vendor".into(),
                "*.generated.yaml".into(),
                "charts/*/ci/**".into(),
            ],
            base,
        )
        .unwrap();
        assert!(ex.excludes(Path::new("/repo/vendor/app.yaml")));
        assert!(ex.excludes(Path::new("/repo/deploy/vendor")));
        assert!(ex.excludes(Path::new("/repo/k8s/app.generated.yaml")));
        assert!(ex.excludes(Path::new("/repo/charts/web/ci/values.yaml")));
        assert!(!ex.excludes(Path::new("/repo/charts/web/templates/ci.yaml")));
        assert!(!ex.excludes(Path::new("/repo/k8s/app.yaml")));
        assert!(!ex.excludes(Path::new("/other/charts/web/ci/values.yaml")));
        assert!(ex.add(&["a/[".into()], base).is_err());
    }
}
