//! What kustomize would fetch over the network, found before it runs: linting an untrusted
//! repository must not make requests the user never asked for.
//!
//! kustomize reaches out through two doors (`api/internal/loader/fileloader.go`): `Load` reads a
//! file, over HTTP when the path is an http(s) URL (`IsRemoteFile`); `New` opens a kustomization
//! root, cloning a git repository when the path parses as one (`git.NewRepoSpecFromURL`).
//! `resources` (and the older `bases`) try `Load`, then `New`; `components` only `New`; the
//! external `generators`, `transformers` and `validators` go the way of `resources`, and the
//! builtin plugins they configure `Load` their own files. Helm charts with a `repo` are pulled by
//! `helm pull`. [`KUSTOMIZATION`] and [`PLUGINS`] list every field that leads to a door.
//!
//! Local bases and components are walked too (a local base may name a remote resource), each
//! kustomization once, at most [`MAX_KUSTOMIZATIONS`] of them.
//!
//! The rules are kustomize's Go code, ported here (no crate knows them); where a port would be
//! long for a form no local path takes, the check leans towards "remote": a false alarm costs a
//! flag, a miss costs a request.

use std::collections::{HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, ErrorKind};
use crate::value::Value;
use crate::value::yaml::{ParsedDoc, PosNode, parse_stream};

/// Most kustomizations one overlay's tree may hold before the check gives up (and the overlay is
/// not built): real trees hold a few dozen.
pub(super) const MAX_KUSTOMIZATIONS: usize = 1000;

/// Largest kustomization or plugin configuration file read (they are a few hundred bytes).
const MAX_FILE_SIZE: u64 = crate::manifest::DEFAULT_MAX_FILE_SIZE;

/// How kustomize reads what a field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    /// `Load`: a file, fetched when it is an http(s) URL.
    File,
    /// A generator's `files` entry: `[key=]path`, the path read by `Load`.
    FileSource,
    /// `Load`, then `New`: a file, a kustomization directory, an http(s) URL or a git repository.
    Root,
    /// A `Root` whose files (or inline text) configure plugins, which `Load` files of their own.
    Plugins,
    /// A Helm chart repository, which `helm pull` fetches from.
    ChartRepo,
}

/// The fields of a kustomization through which kustomize reads, `*` standing for every item
/// of a list (sigs.k8s.io/kustomize `api/types/kustomization.go`, and where each is read).
const KUSTOMIZATION: &[(&str, Door)] = &[
    ("resources/*", Door::Root),
    ("bases/*", Door::Root),
    ("components/*", Door::Root),
    ("generators/*", Door::Plugins),
    ("transformers/*", Door::Plugins),
    ("validators/*", Door::Plugins),
    ("crds/*", Door::File),
    ("configurations/*", Door::File),
    ("openapi/path", Door::File),
    ("patches/*/path", Door::File),
    ("patchesJson6902/*/path", Door::File),
    // A path, or an inline patch (never a URL).
    ("patchesStrategicMerge/*", Door::File),
    ("replacements/*/path", Door::File),
    ("configMapGenerator/*/files/*", Door::FileSource),
    ("configMapGenerator/*/envs/*", Door::File),
    ("configMapGenerator/*/env", Door::File),
    ("secretGenerator/*/files/*", Door::FileSource),
    ("secretGenerator/*/envs/*", Door::File),
    ("secretGenerator/*/env", Door::File),
    ("helmCharts/*/repo", Door::ChartRepo),
    ("helmCharts/*/valuesFile", Door::File),
    ("helmCharts/*/additionalValuesFiles/*", Door::File),
    // The deprecated form of `helmCharts`.
    (
        "helmChartInflationGenerator/*/chartRepoUrl",
        Door::ChartRepo,
    ),
    ("helmChartInflationGenerator/*/values", Door::File),
];

/// The builtin plugins that read files, by kind, and the fields they read them from
/// (`api/internal/builtins`). Other plugins need flags winguard never passes kustomize.
const PLUGINS: &[(&str, &[(&str, Door)])] = &[
    (
        "ConfigMapGenerator",
        &[
            ("files/*", Door::FileSource),
            ("envs/*", Door::File),
            ("env", Door::File),
        ],
    ),
    (
        "SecretGenerator",
        &[
            ("files/*", Door::FileSource),
            ("envs/*", Door::File),
            ("env", Door::File),
        ],
    ),
    (
        "HelmChartInflationGenerator",
        &[
            ("repo", Door::ChartRepo),
            ("valuesFile", Door::File),
            ("additionalValuesFiles/*", Door::File),
        ],
    ),
    ("PatchTransformer", &[("path", Door::File)]),
    ("PatchJson6902Transformer", &[("path", Door::File)]),
    ("PatchStrategicMergeTransformer", &[("paths/*", Door::File)]),
    (
        "ReplacementTransformer",
        &[("replacements/*/path", Door::File)],
    ),
    ("ValueAddTransformer", &[("targetFilePath", Door::File)]),
];

/// A kustomization to check, and whether its resources configure plugins (it was named as a
/// generator, transformer or validator).
struct Pending {
    dir: PathBuf,
    plugins: bool,
}

/// Every remote reference in the kustomization tree of `dir`, each an error at its file, line
/// and column; empty when kustomize would read only local files.
pub(super) fn remote_references(dir: &Path) -> Vec<Error> {
    let root_file = super::kustomization_file(dir);
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let mut pending = VecDeque::from([Pending {
        dir: dir.to_path_buf(),
        plugins: false,
    }]);
    while let Some(next) = pending.pop_front() {
        let key = (
            std::fs::canonicalize(&next.dir).unwrap_or_else(|_| next.dir.clone()),
            next.plugins,
        );
        if !seen.insert(key) {
            continue;
        }
        if seen.len() > MAX_KUSTOMIZATIONS {
            errors.push(Error::new(
                ErrorKind::Input,
                root_file.display().to_string(),
                format!(
                    "more than {MAX_KUSTOMIZATIONS} kustomizations below this overlay: not \
                     built, as winguard could not check them all for remote references"
                ),
            ));
            break;
        }
        let file = super::kustomization_file(&next.dir);
        let Some(docs) = read_yaml(&file, &mut errors) else {
            continue;
        };
        let mut check = Check {
            file: &file,
            root_file: &root_file,
            errors: &mut errors,
        };
        for doc in &docs {
            for (pattern, door) in KUSTOMIZATION {
                for (field, value, pos) in entries(&doc.value, &doc.pos, pattern) {
                    let Some(text) = value.as_str() else { continue };
                    if check.remote(&field, text, pos, *door) {
                        continue;
                    }
                    if !matches!(*door, Door::Root | Door::Plugins)
                        || (*door == Door::Plugins && check.inline_plugins(&field, text, pos))
                    {
                        continue;
                    }
                    // What a generator, transformer or validator names configures plugins, and
                    // so does what the resources of such a kustomization name.
                    let plugins = *door == Door::Plugins || next.plugins;
                    let local = join_lexically(&next.dir, text);
                    if crate::manifest::is_kustomization(&local) {
                        pending.push_back(Pending {
                            dir: local,
                            plugins,
                        });
                    } else if plugins && local.is_file() {
                        check.plugin_file(&local);
                    }
                }
            }
        }
    }
    errors
}

/// Where remote references are reported.
struct Check<'a> {
    /// The kustomization (or plugin configuration) being read.
    file: &'a Path,
    /// The kustomization of the overlay being built.
    root_file: &'a Path,
    errors: &'a mut Vec<Error>,
}

impl Check<'_> {
    /// Reports `text` (at `pos`, in `field`) if kustomize would fetch it through `door`;
    /// whether it did.
    fn remote(&mut self, field: &str, text: &str, pos: &PosNode, door: Door) -> bool {
        let Some(what) = remote(text, door) else {
            return false;
        };
        let reached = if self.file == self.root_file {
            String::new()
        } else {
            format!(" (in the tree of {})", self.root_file.display())
        };
        self.errors.push(Error::at(
            ErrorKind::Input,
            &self.file.display().to_string(),
            Some(pos.line.max(1)),
            Some(pos.col.max(1)),
            format!(
                "`{field}` names {what} `{text}`{reached}: kustomize would fetch it over the \
                 network, and winguard does not build such overlays unless asked \
                 (--kustomize-allow-remote, or `kustomize: {{allowRemote: true}}` in winguard.yaml)"
            ),
        ));
        true
    }

    /// If `text` is inline plugin configuration, checks it (reporting at the entry) and says so.
    fn inline_plugins(&mut self, field: &str, text: &str, pos: &PosNode) -> bool {
        if !text.contains('\n') {
            return false;
        }
        let (docs, _) = parse_stream(text);
        if !docs.iter().any(|d| matches!(d.value, Value::Object(_))) {
            return false;
        }
        for doc in &docs {
            for (inner, door, value, _) in plugin_entries(doc) {
                if let Some(text) = value.as_str() {
                    self.remote(&format!("{field}: {inner}"), text, pos, door);
                }
            }
        }
        true
    }

    /// Checks the plugin configurations of a local file, reporting at their own lines.
    fn plugin_file(&mut self, path: &Path) {
        let Some(docs) = read_yaml(path, self.errors) else {
            return;
        };
        let mut check = Check {
            file: path,
            root_file: self.root_file,
            errors: self.errors,
        };
        for doc in &docs {
            for (field, door, value, pos) in plugin_entries(doc) {
                if let Some(text) = value.as_str() {
                    check.remote(&field, text, pos, door);
                }
            }
        }
    }
}

/// The fields of one plugin configuration that name files, each with how it is read.
fn plugin_entries(doc: &ParsedDoc) -> Vec<(String, Door, &Value, &PosNode)> {
    let kind = doc
        .value
        .as_object()
        .and_then(|m| m.iter().find(|(k, _)| json_field_is(k, "kind")))
        .and_then(|(_, v)| v.as_str())
        .unwrap_or("");
    let Some((_, fields)) = PLUGINS.iter().find(|(k, _)| *k == kind) else {
        return Vec::new();
    };
    fields
        .iter()
        .flat_map(|(pattern, door)| {
            entries(&doc.value, &doc.pos, pattern)
                .into_iter()
                .map(move |(field, v, p)| (format!("{kind} {field}"), *door, v, p))
        })
        .collect()
}

/// Reads a kustomization or plugin configuration, reporting what keeps it from being checked
/// (then the overlay is not built: what it names can't be known).
pub(super) fn read_yaml(path: &Path, errors: &mut Vec<Error>) -> Option<Vec<ParsedDoc>> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut text = String::new();
    let read =
        std::fs::File::open(path).and_then(|f| f.take(MAX_FILE_SIZE + 1).read_to_string(&mut text));
    match read {
        Err(e) => {
            errors.push(Error::new(
                ErrorKind::Input,
                shown,
                format!("cannot read it to check for remote references: {e}"),
            ));
            return None;
        }
        Ok(n) if n as u64 > MAX_FILE_SIZE => {
            errors.push(Error::new(
                ErrorKind::Input,
                shown,
                format!("larger than {MAX_FILE_SIZE} bytes: not read as kustomize input"),
            ));
            return None;
        }
        Ok(_) => {}
    }
    let (docs, error) = parse_stream(&text);
    if let Some(e) = error {
        errors.push(Error::at(
            ErrorKind::Input,
            &shown,
            Some(e.line),
            Some(e.col),
            format!("not YAML kustomize can read: {}", e.message),
        ));
        return None;
    }
    Some(docs)
}

/// The values `pattern` (`a/*/b`: key `a`, every item, key `b`) selects in `value`, with their
/// positions and a name for each (`a[0].b`).
pub(super) fn entries<'v>(
    value: &'v Value,
    pos: &'v PosNode,
    pattern: &str,
) -> Vec<(String, &'v Value, &'v PosNode)> {
    let mut found = vec![(String::new(), value, pos)];
    for segment in pattern.split('/') {
        found = found
            .into_iter()
            .flat_map(|(name, value, pos)| -> Vec<(String, &Value, &PosNode)> {
                match (segment, value) {
                    ("*", Value::Array(items)) => items
                        .iter()
                        .zip(&pos.children)
                        .enumerate()
                        .map(|(i, (v, p))| (format!("{name}[{i}]"), v, p))
                        .collect(),
                    (key, Value::Object(map)) => map
                        .iter()
                        .zip(&pos.children)
                        .filter(|((k, _), _)| json_field_is(k, key))
                        .map(|((_, v), p)| {
                            let dot = if name.is_empty() { "" } else { "." };
                            (format!("{name}{dot}{key}"), v, p)
                        })
                        .collect(),
                    _ => Vec::new(),
                }
            })
            .collect();
    }
    found
}

/// What kustomize would fetch `text` as, read through `door`; `None` for a local path.
fn remote(text: &str, door: Door) -> Option<&'static str> {
    let text = text.trim();
    let file = match door {
        Door::ChartRepo if !text.is_empty() => return Some("a Helm chart repository"),
        Door::ChartRepo => return None,
        // `key=path`: the path is what is read (a URL holding `=` is refused by kustomize).
        Door::FileSource => text.split_once('=').map_or(text, |(_, path)| path),
        Door::File | Door::Root | Door::Plugins => text,
    };
    if is_http_url(file) {
        Some("an http(s) URL")
    } else if matches!(door, Door::Root | Door::Plugins) && is_git_repository(text) {
        Some("a git repository")
    } else {
        None
    }
}

/// `IsRemoteFile`: a URL whose scheme is http or https (Go's `url.Parse` lowercases the
/// scheme). A URL Go would not parse is still taken as one: `New` may clone it as a repository.
fn is_http_url(text: &str) -> bool {
    let lower = text.get(..6).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("http:") || lower.starts_with("https:")
}

/// `git.NewRepoSpecFromURL` succeeds: kustomize clones `text` (`api/internal/git/repospec.go`).
fn is_git_repository(text: &str) -> bool {
    if Path::new(text).is_absolute() {
        return false;
    }
    let spec = text.split_once('?').map_or(text, |(spec, _query)| spec);
    let spec = strip_prefix_ignore_case(spec, "git::").unwrap_or(spec);
    let (scheme, rest) = ["ssh://", "https://", "http://", "file://"]
        .iter()
        .find_map(|s| Some((Some(*s), strip_prefix_ignore_case(spec, s)?)))
        .unwrap_or((None, spec));
    if scheme == Some("file://") {
        // A local clone; its submodules (cloned by default) may live anywhere.
        return !rest.is_empty();
    }
    let (has_username, rest) = strip_username(rest).map_or((false, rest), |r| (true, r));
    let lower = rest.to_ascii_lowercase();
    let github = lower.starts_with("github.com/") || lower.starts_with("github.com:");
    // SCP-style `user@host:path`: no scheme, and a username or GitHub's host.
    let scp = scheme.is_none() && (has_username || github);
    if scheme.is_none() && !scp {
        return false;
    }
    let slash = rest.find('/');
    let separator = match (scp, rest.find(':')) {
        (true, Some(colon)) if colon > 0 && slash.is_none_or(|s| colon < s) => Some(colon),
        _ => slash,
    };
    let (host, path) = match separator {
        Some(i) => (&rest[..=i], &rest[i + 1..]),
        None => (rest, ""),
    };
    !host.is_empty() && repository_path(path)
}

/// `parsePathParts` succeeds: the path holds a repository (by `_git/`, `//` or `.git`, else
/// its first two segments) and the kustomization root within it does not leave it.
fn repository_path(path: &str) -> bool {
    let root_in_repo = if let Some(i) = path.find("_git/") {
        path[i + 5..].split_once('/').map_or("", |(_, root)| root)
    } else if let Some(i) = path.find("//") {
        &path[i + 2..]
    } else if let Some(i) = path.find(".git") {
        &path[i + 4..]
    } else {
        let mut segments = path.splitn(3, '/');
        match (segments.next(), segments.next()) {
            (Some(_), Some(_)) => segments.next().unwrap_or(""),
            _ => return false,
        }
    };
    let repository = path.len() > root_in_repo.len();
    let mut depth = 0usize;
    let leaves = root_in_repo.split('/').any(|s| match s {
        "" | "." => false,
        ".." if depth == 0 => true,
        ".." => {
            depth -= 1;
            false
        }
        _ => {
            depth += 1;
            false
        }
    });
    repository && !leaves
}

/// `text` without `prefix`, compared ignoring ASCII case.
fn strip_prefix_ignore_case<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `text` after a leading `user@` (a letter, then letters, digits and `-`), if it has one.
fn strip_username(text: &str) -> Option<&str> {
    let (user, rest) = text.split_once('@')?;
    let mut chars = user.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .then_some(rest)
}

/// `dir` joined with a relative `path`, `..` taken off lexically as kustomize's `filepath.Join`
/// does (so errors name `base/kustomization.yaml`, not `overlay/../base/…`).
pub(super) fn join_lexically(dir: &Path, path: &str) -> PathBuf {
    let mut joined = dir.to_path_buf();
    for component in Path::new(path).components() {
        match component {
            Component::ParentDir
                if matches!(joined.components().next_back(), Some(Component::Normal(_))) =>
            {
                joined.pop();
            }
            Component::CurDir => {}
            other => joined.push(other),
        }
    }
    if joined.as_os_str().is_empty() {
        joined.push(".");
    }
    joined
}

/// Whether a key names the JSON field `field` as kustomize reads it: Go's `encoding/json` (under
/// `sigs.k8s.io/yaml`) matches field names ignoring case, with Unicode's simple folding, so
/// `Resources`, `RESOURCES` and `reſources` (long s) are `resources` too, and `K` (Kelvin sign) is
/// `k`. Written out because the fields are ASCII and only these two non-ASCII letters fold to one.
fn json_field_is(key: &str, field: &str) -> bool {
    key.chars().count() == field.len()
        && key.chars().zip(field.chars()).all(|(k, f)| {
            k.eq_ignore_ascii_case(&f)
                || (k == '\u{17f}' && f.eq_ignore_ascii_case(&'s'))
                || (k == '\u{212a}' && f.eq_ignore_ascii_case(&'k'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kustomize's own examples (`repospec_test.go`, `fileloader_test.go`): what it clones or
    /// downloads, and what it reads as a local path.
    #[test]
    fn remote_forms_are_kustomizes() {
        let root = |text| remote(text, Door::Root);
        for url in [
            "http://127.0.0.1:8080/app.yaml",
            "HTTPS://example.com/a.yaml",
            "https://github.com/org/repo?ref=v1",
        ] {
            assert_eq!(root(url), Some("an http(s) URL"), "{url}");
            assert_eq!(remote(url, Door::File), Some("an http(s) URL"), "{url}");
        }
        for repo in [
            "github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6",
            "GitHub.com:org/repo",
            "git@github.com:org/repo.git/path?ref=main",
            "git::ssh://git@127.0.0.1:2222/org/repo?ref=v1",
            "ssh://git@gitlab.example.com/group/repo//base",
            "git@gitlab.example.com:group/repo",
            "user@dev.azure.com/org/project/_git/repo/path",
            "file:///srv/git/repo",
            "ssh://host/org/repo",
        ] {
            assert_eq!(root(repo), Some("a git repository"), "{repo}");
            // A file field only downloads: a repository there is a missing local file.
            assert_eq!(remote(repo, Door::File), None, "{repo}");
        }
        for local in [
            "../../base",
            "app.yaml",
            "/abs/path",
            "github.com",
            "github.com/org",
            "example.com/org/repo",
            "me@host",
            "git@host/one",
            "ssh://host/org/repo//../../x",
            "",
        ] {
            assert_eq!(root(local), None, "{local}");
        }
        assert_eq!(
            remote("config=https://h/c.properties", Door::FileSource),
            Some("an http(s) URL")
        );
        assert_eq!(remote("config=app.properties", Door::FileSource), None);
        assert_eq!(
            remote("https://charts.example.com", Door::ChartRepo),
            Some("a Helm chart repository")
        );
    }

    #[test]
    fn entries_are_found_with_their_positions() {
        let (docs, _) =
            parse_stream("helmCharts:\n- name: a\n  repo: https://x\nresources: [a, b]\n");
        let doc = &docs[0];
        let found = entries(&doc.value, &doc.pos, "helmCharts/*/repo");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "helmCharts[0].repo");
        assert_eq!((found[0].2.line, found[0].2.col), (3, 9));
        let found = entries(&doc.value, &doc.pos, "resources/*");
        assert_eq!(found[1].0, "resources[1]");
        assert_eq!((found[1].2.line, found[1].2.col), (4, 16));
    }

    /// Keys are matched as kustomize's JSON decoding matches them, whatever their case.
    #[test]
    fn keys_match_in_any_case_as_go_reads_them() {
        for key in ["resources", "Resources", "RESOURCES", "re\u{17f}ources"] {
            assert!(json_field_is(key, "resources"), "{key}");
        }
        assert!(json_field_is("\u{212a}ind", "kind"));
        for key in ["resource", "resourcesx", "r\u{e9}sources", ""] {
            assert!(!json_field_is(key, "resources"), "{key}");
        }
    }

    #[test]
    fn parent_directories_are_taken_off_lexically() {
        assert_eq!(
            join_lexically(Path::new("t/overlays/prod"), "../../base"),
            Path::new("t/base")
        );
        assert_eq!(join_lexically(Path::new("a"), ".."), Path::new("."));
        assert_eq!(join_lexically(Path::new("."), "../x"), Path::new("./../x"));
    }
}
