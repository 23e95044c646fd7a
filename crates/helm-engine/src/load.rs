//! Reading a chart from a directory or a `.tgz`, as Helm's loader does: the same files go to
//! the same places, `.helmignore` applies, and subcharts in `charts/` are charts of their own.

use crate::error::Error;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

/// Helm's bounds on what a chart may unpack to, its numbers and its words (Helm v4.2.3,
/// `pkg/chart/loader/archive/archive.go`, `MaxDecompressedChartSize`): the files of one archive
/// together, counted as they are read.
pub const MAX_DECOMPRESSED_CHART_SIZE: u64 = 100 * 1024 * 1024;
/// The largest one file may be, in an archive or a directory (`MaxDecompressedFileSize`, same
/// file; `pkg/chart/v2/loader/directory.go` applies it to a chart directory's files).
pub const MAX_DECOMPRESSED_FILE_SIZE: u64 = 5 * 1024 * 1024;
/// Most bytes the tar stream inside one archive may inflate to, headers and skipped entries
/// included. Helm's own bound counts file contents only; the tar crate reads a long name or a
/// PAX header whole, and skips an unwanted entry by inflating it, so this bounds what Helm's
/// limit can't see: twice Helm's, room for any chart's headers.
const MAX_TAR_STREAM_SIZE: u64 = 2 * MAX_DECOMPRESSED_CHART_SIZE;

use super::loaded::{Chart, Dependency, File, Template};

/// Loads a chart from a directory or a `.tgz` archive.
pub fn load_chart(path: &Path) -> Result<Chart, Error> {
    let shown = path.display().to_string();
    if path.is_dir() {
        let files = read_dir_files(path)?;
        load_files(files, &shown, &display_dir(path))
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| Error::new(&shown, format!("cannot read chart {shown}: {e}")))?;
        load_archive(std::io::BufReader::new(file), &shown, &display_dir(path))
    }
}

/// A path as findings name it: as given, without a leading `./`.
fn display_dir(path: &Path) -> String {
    let shown = path.display().to_string();
    match shown.strip_prefix("./") {
        Some(rest) if !rest.is_empty() => rest.trim_end_matches('/').to_string(),
        _ if shown == "." || shown == "./" => ".".to_string(),
        _ => shown.trim_end_matches('/').to_string(),
    }
}

/// Every file under `dir`, by path relative to it, `.helmignore` applied.
fn read_dir_files(dir: &Path) -> Result<Vec<File>, Error> {
    let shown = dir.display().to_string();
    let ignore = match std::fs::read_to_string(dir.join(".helmignore")) {
        Ok(text) => HelmIgnore::parse(&text),
        Err(_) => HelmIgnore::default(),
    };
    let mut files = Vec::new();
    let mut walker = walkdir::WalkDir::new(dir).sort_by_file_name().into_iter();
    while let Some(entry) = walker.next() {
        let entry =
            entry.map_err(|e| Error::new(&shown, format!("cannot read chart {shown}: {e}")))?;
        let Ok(rel) = entry.path().strip_prefix(dir) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let name = rel.to_string_lossy().replace('\\', "/");
        let is_dir = entry.file_type().is_dir();
        if ignore.ignores(&name, is_dir) {
            if is_dir {
                walker.skip_current_dir();
            }
            continue;
        }
        if is_dir {
            continue;
        }
        files.push(File {
            data: read_dir_file(entry.path(), &format!("{shown}/{name}"))?.into(),
            name,
        });
    }
    Ok(files)
}

/// One file of a chart directory, refused as Helm's `LoadDir` refuses it: not a regular file
/// (a FIFO would block the read forever), or larger than [`MAX_DECOMPRESSED_FILE_SIZE`].
fn read_dir_file(path: &Path, shown: &str) -> Result<Vec<u8>, Error> {
    let refuse = |message: String| Error::new(shown, message);
    let cannot_read = |e: std::io::Error| refuse(format!("cannot read {shown}: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot_read)?;
    let too_large = || {
        refuse(format!(
            "chart file {shown:?} is larger than the maximum file size {MAX_DECOMPRESSED_FILE_SIZE}"
        ))
    };
    if !meta.is_file() && !meta.is_dir() {
        return Err(refuse(format!(
            "cannot load irregular file {shown} as it has file mode type bits set"
        )));
    }
    if meta.len() > MAX_DECOMPRESSED_FILE_SIZE {
        return Err(too_large());
    }
    // Read through the bound too: the file may have grown since it was measured.
    let mut data = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| {
            f.take(MAX_DECOMPRESSED_FILE_SIZE + 1)
                .read_to_end(&mut data)
        })
        .map_err(cannot_read)?;
    if data.len() as u64 > MAX_DECOMPRESSED_FILE_SIZE {
        return Err(too_large());
    }
    Ok(data)
}

/// Loads a packaged chart: a gzipped tar whose entries sit under one top directory. `located`
/// names the archive for findings (see [`Chart::location`]).
pub fn load_archive(data: impl Read, shown: &str, located: &str) -> Result<Chart, Error> {
    load_archive_at(data, shown, located, 0)
}

/// [`load_archive`] of a chart `depth` subcharts down.
fn load_archive_at(
    data: impl Read,
    shown: &str,
    located: &str,
    depth: usize,
) -> Result<Chart, Error> {
    let (top, files) = read_archive_files(data, shown)?;
    // No .helmignore here: Helm applies it when packaging, not when loading an archive.
    load_files_at(files, shown, &format!("{located}!/{top}"), depth)
}

/// How deeply subcharts may nest (`charts/a/charts/b/…`, or archives inside archives). Helm has
/// no bound (each archive has its own size bound, and Go's stack grows); loading recurses once
/// per level here, and real charts nest two or three deep.
const MAX_SUBCHART_DEPTH: usize = 64;

/// The files of a packaged chart and the top directory they sit under, read within Helm's
/// bounds ([`MAX_DECOMPRESSED_CHART_SIZE`], [`MAX_DECOMPRESSED_FILE_SIZE`]): an entry's size
/// is checked against them from its header before a byte of it is inflated, and the whole
/// stream is counted as it inflates ([`MAX_TAR_STREAM_SIZE`]).
fn read_archive_files(data: impl Read, shown: &str) -> Result<(String, Vec<File>), Error> {
    let bad = |e: String| Error::new(shown, format!("{shown} is not a valid chart archive: {e}"));
    let chart_too_large = || {
        bad(format!(
            "decompressed chart is larger than the maximum size {MAX_DECOMPRESSED_CHART_SIZE}"
        ))
    };
    let stream_over = Cell::new(false);
    let stream = Bounded {
        inner: flate2::read::GzDecoder::new(data),
        left: MAX_TAR_STREAM_SIZE,
        over: &stream_over,
    };
    // A read error caused by the stream bound is reported as that bound.
    let failed = |e: std::io::Error| {
        if stream_over.get() {
            bad(format!(
                "the tar stream inflates to more than {MAX_TAR_STREAM_SIZE} bytes (twice the maximum chart size {MAX_DECOMPRESSED_CHART_SIZE}, for its headers)"
            ))
        } else {
            bad(e.to_string())
        }
    };
    let mut archive = tar::Archive::new(stream);
    let mut files = Vec::new();
    let mut top = String::new();
    let mut remaining = MAX_DECOMPRESSED_CHART_SIZE;
    let entries = archive.entries().map_err(failed)?;
    for entry in entries {
        let mut entry = entry.map_err(failed)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(|e| bad(e.to_string()))?
            .to_string_lossy()
            .replace('\\', "/");
        // Drop the top directory (`mychart/templates/x.yaml` → `templates/x.yaml`).
        let Some((dir, name)) = path.split_once('/') else {
            continue;
        };
        if top.is_empty() {
            top = dir.to_string();
        }
        if name.split('/').any(|part| part == "..") {
            return Err(bad(format!("the entry {path} leaves the chart")));
        }
        // Helm's checks and order (`LoadArchiveFiles`): the size the header gives first, then
        // the bytes as read, the archive's total refused when it reaches the bound.
        let size = entry.size();
        if size > remaining {
            return Err(chart_too_large());
        }
        if size > MAX_DECOMPRESSED_FILE_SIZE {
            return Err(bad(format!(
                "decompressed chart file {path:?} is larger than the maximum file size {MAX_DECOMPRESSED_FILE_SIZE}"
            )));
        }
        let mut data = Vec::with_capacity(size as usize);
        (&mut entry)
            .take(remaining)
            .read_to_end(&mut data)
            .map_err(failed)?;
        remaining -= data.len() as u64;
        if (data.len() as u64) < size || remaining == 0 {
            return Err(chart_too_large());
        }
        files.push(File {
            name: name.to_string(),
            data: data.into(),
        });
    }
    if files.is_empty() {
        return Err(bad("no files in archive".into()));
    }
    Ok((top, files))
}

/// A reader that fails once more than `left` bytes have come through it, and says so in
/// `over`: the tar crate only passes the error on.
struct Bounded<'a, R> {
    inner: R,
    left: u64,
    over: &'a Cell<bool>,
}

impl<R: Read> Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the bound is read, to tell a stream that ends at it from a longer one.
        let want = buf
            .len()
            .min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > self.left {
            self.over.set(true);
            return Err(std::io::Error::other("stream size limit reached"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// A chart file's text: UTF-8, or an error naming the file, the place and go-yaml's reason (Helm
/// reads these files as YAML, whose reader refuses them so). `shown` names the file.
pub fn chart_text<'a>(data: &'a [u8], shown: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(data).map_err(|e| {
        let fault = yaml_value::text::Utf8Fault::new(data, &e);
        Error::at(
            shown,
            Some(fault.line),
            Some(fault.column),
            format!("{shown}:{}:{}: yaml: {fault}", fault.line, fault.column),
        )
    })
}

/// `Chart.yaml` or `requirements.yaml`, in Helm's words when it doesn't read.
fn yaml_map(file: &File, shown: &str) -> Result<Map<String, Json>, Error> {
    let path = format!("{shown}/{}", file.name);
    let helm = format!("cannot load {}: ", file.name);
    super::values::parse_yaml_map(
        chart_text(&file.data, &path)?,
        &path,
        &helm,
        "loader.chartBase",
    )
}

/// Sorts a chart's files into their places; `shown` names the chart in errors, `location` is
/// what its file names join to ([`Chart::location`]).
pub fn load_files(files: Vec<File>, shown: &str, location: &str) -> Result<Chart, Error> {
    load_files_at(files, shown, location, 0)
}

/// [`load_files`] of a chart `depth` subcharts down.
fn load_files_at(
    files: Vec<File>,
    shown: &str,
    location: &str,
    depth: usize,
) -> Result<Chart, Error> {
    if depth > MAX_SUBCHART_DEPTH {
        return Err(Error::new(
            shown.to_string(),
            format!("{shown}: subcharts nest more than {MAX_SUBCHART_DEPTH} levels deep"),
        ));
    }
    let mut metadata = None;
    let mut values = Map::new();
    let mut values_text = None;
    let mut schema = None;
    let mut requirements = None;
    let mut templates = Vec::new();
    let mut other = Vec::new();
    let mut sub_dirs: BTreeMap<String, Vec<File>> = BTreeMap::new();
    let mut sub_archives: Vec<File> = Vec::new();
    for file in files {
        match file.name.as_str() {
            "Chart.yaml" => metadata = Some(yaml_map(&file, shown)?),
            "values.yaml" => {
                let path = format!("{shown}/values.yaml");
                let text: Arc<str> = chart_text(&file.data, &path)?.into();
                values = super::values::parse_yaml_map(
                    &text,
                    &path,
                    "cannot load values.yaml: cannot unmarshal yaml document: ",
                    "map[string]interface {}",
                )?;
                values_text = Some(text);
            }
            "values.schema.json" => {
                schema = Some(serde_json::from_slice(&file.data).map_err(|e| {
                    Error::new(
                        format!("{shown}/values.schema.json"),
                        format!("{shown}/values.schema.json: {e}"),
                    )
                })?)
            }
            "requirements.yaml" => requirements = Some(yaml_map(&file, shown)?),
            "requirements.lock" | "Chart.lock" => {}
            name if name.starts_with("templates/") => templates.push(Template {
                text: chart_text(&file.data, &format!("{shown}/{name}"))?.into(),
                name: file.name,
            }),
            name if name.starts_with("charts/") => {
                let rest = &name["charts/".len()..];
                match rest.split_once('/') {
                    Some((dir, inner)) => sub_dirs.entry(dir.to_string()).or_default().push(File {
                        name: inner.to_string(),
                        data: file.data,
                    }),
                    None if rest.ends_with(".tgz") || rest.ends_with(".tar.gz") => {
                        sub_archives.push(file)
                    }
                    None => other.push(file),
                }
            }
            name if name.starts_with("crds/") => {
                // Rendered as they are (`--include-crds`): text, as Helm requires of YAML.
                chart_text(&file.data, &format!("{shown}/{name}"))?;
                other.push(file)
            }
            _ => other.push(file),
        }
    }
    let metadata = metadata.ok_or_else(|| {
        Error::new(
            format!("{shown}/Chart.yaml"),
            format!("{shown}: Chart.yaml file is missing"),
        )
    })?;
    validate_metadata(&metadata)
        .map_err(|e| Error::new(format!("{shown}/Chart.yaml"), format!("validation: {e}")))?;
    let api_version = metadata
        .get("apiVersion")
        .and_then(Json::as_str)
        .unwrap_or("");
    let declared = if api_version == "v1" {
        requirements
            .as_ref()
            .and_then(|r| r.get("dependencies"))
            .or_else(|| metadata.get("dependencies"))
    } else {
        metadata.get("dependencies")
    };
    let dependencies = declared
        .and_then(Json::as_array)
        .map(|list| list.iter().filter_map(dependency).collect())
        .unwrap_or_default();
    let mut subcharts = Vec::new();
    for (dir, files) in sub_dirs {
        // A directory without Chart.yaml is not a chart (Helm skips it too).
        if !files.iter().any(|f| f.name == "Chart.yaml") {
            continue;
        }
        subcharts.push(load_files_at(
            files,
            &format!("{shown}/charts/{dir}"),
            &format!("{location}/charts/{dir}"),
            depth + 1,
        )?);
    }
    for archive in sub_archives {
        subcharts.push(load_archive_at(
            &archive.data[..],
            &format!("{shown}/{}", archive.name),
            &format!("{location}/{}", archive.name),
            depth + 1,
        )?);
    }
    Ok(Chart {
        metadata: Arc::new(metadata),
        templates,
        files: other,
        values: Arc::new(values),
        values_text,
        schema: schema.map(Arc::new),
        dependencies,
        subcharts,
        source: shown.to_string(),
        location: location.to_string(),
    })
}

/// Helm's `Metadata.Validate` (`pkg/chart/v2/metadata.go`), which its loader runs on every
/// chart: a name that is one path element, a version that reads as a semantic version, a known
/// type, no null maintainer or dependency, aliases of letters, digits, `_` and `-`, and no
/// two dependencies under one name.
fn validate_metadata(metadata: &Map<String, Json>) -> Result<(), String> {
    // Go reads what YAML typed otherwise as text (`version: 1.0` is "1.0").
    let text = |key: &str| match metadata.get(key) {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let name = text("name");
    if name.is_empty() {
        return Err("chart.metadata.name is required".into());
    }
    if name == "." || name == ".." {
        return Err(format!("chart.metadata.name {name:?} is not allowed"));
    }
    if name.contains('/') {
        return Err(format!("chart.metadata.name {name:?} is invalid"));
    }
    let version = text("version");
    if version.is_empty() {
        return Err("chart.metadata.version is required".into());
    }
    if crate::template::semver::parse(&version).is_err() {
        return Err(format!("chart.metadata.version {version:?} is invalid"));
    }
    if !matches!(text("type").as_str(), "" | "application" | "library") {
        return Err("chart.metadata.type must be application or library".into());
    }
    let list = |key: &str| {
        metadata
            .get(key)
            .and_then(Json::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    if list("maintainers").iter().any(Json::is_null) {
        return Err("maintainers must not contain empty or null nodes".into());
    }
    let mut seen = std::collections::HashSet::new();
    for dependency in list("dependencies") {
        let Json::Object(d) = dependency else {
            return Err("dependencies must not contain empty or null nodes".into());
        };
        let field = |key: &str| d.get(key).and_then(Json::as_str).unwrap_or("");
        let alias = field("alias");
        let alias_ok = alias
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !alias_ok {
            return Err(format!(
                "dependency {:?} has disallowed characters in the alias",
                field("name")
            ));
        }
        let key = if alias.is_empty() {
            field("name")
        } else {
            alias
        };
        if !seen.insert(key.to_string()) {
            return Err(format!(
                "more than one dependency with name or alias {key:?}"
            ));
        }
    }
    Ok(())
}

/// Every chart of `chart`'s tree under each name Helm may render it with: the chain of names
/// from the top chart's subcharts down (empty for the top chart). A subchart is named by its
/// chart name and by any alias its parent gives it, as Helm renders it under the alias (and
/// names its templates and values by it).
pub fn chart_tree(chart: &Chart) -> Vec<(Vec<&str>, &Chart)> {
    fn walk<'c>(
        chart: &'c Chart,
        chain: &mut Vec<&'c str>,
        out: &mut Vec<(Vec<&'c str>, &'c Chart)>,
    ) {
        out.push((chain.clone(), chart));
        for sub in &chart.subcharts {
            let aliases = chart
                .dependencies
                .iter()
                .filter(|d| d.name == sub.name())
                .filter_map(|d| d.alias.as_deref());
            let mut names: Vec<&str> = std::iter::once(sub.name()).chain(aliases).collect();
            names.dedup();
            for name in names {
                chain.push(name);
                walk(sub, chain, out);
                chain.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(chart, &mut Vec::new(), &mut out);
    out
}

/// Where each template of a chart and its subcharts is, by the path Helm names it with in its
/// `# Source:` comments (`mychart/charts/sub/templates/x.yaml`): the file as the user can open
/// it (`deploy/mychart/charts/sub/templates/x.yaml`, or an archive and its member).
pub fn template_locations(chart: &Chart) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (chain, sub) in chart_tree(chart) {
        let mut prefix = chart.name().to_string();
        for name in chain {
            prefix.push_str("/charts/");
            prefix.push_str(name);
        }
        for t in &sub.templates {
            out.insert(
                format!("{prefix}/{}", t.name),
                format!("{}/{}", sub.location, t.name),
            );
        }
    }
    out
}

/// Each chart's `values.yaml` in `chart`'s tree, by its chain of names ([`chart_tree`]): the file
/// as the user can open it (`deploy/mychart/charts/db/values.yaml`, or an archive and its
/// member) and its text.
pub fn values_files(chart: &Chart) -> Vec<(Vec<String>, String, Arc<str>)> {
    chart_tree(chart)
        .into_iter()
        .filter_map(|(chain, c)| {
            let text = c.values_text.clone()?;
            Some((
                chain.into_iter().map(String::from).collect(),
                format!("{}/values.yaml", c.location),
                text,
            ))
        })
        .collect()
}

fn dependency(v: &Json) -> Option<Dependency> {
    let m = v.as_object()?;
    let text = |k: &str| m.get(k).and_then(Json::as_str).map(String::from);
    Some(Dependency {
        name: text("name")?,
        version: text("version").unwrap_or_default(),
        alias: text("alias").filter(|a| !a.is_empty()),
        condition: text("condition").filter(|c| !c.is_empty()),
        tags: m
            .get("tags")
            .and_then(Json::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(Json::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        import_values: m
            .get("import-values")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default(),
        enabled: true,
        raw: m.clone(),
    })
}

/// `.helmignore`, with Helm's rules (its `ignore` package): a pattern without `/` matches the
/// base name, with `/` the whole path; `dir/` only directories; and a negated pattern `!p`
/// ignores everything that does *not* match `p` (Helm's reading, odd as it is).
///
/// The patterns are one `RegexSet`, compiled once: building a regex has a fixed cost that a
/// chart's dozen `.helmignore` lines would pay a dozen times, on every render (BENCHMARKS.md,
/// chart rendering).
#[derive(Default)]
pub struct HelmIgnore {
    rules: Vec<IgnoreRule>,
    /// Rule `i`'s pattern is pattern `i` of the set.
    patterns: Option<regex::RegexSet>,
}

struct IgnoreRule {
    negate: bool,
    dir_only: bool,
    whole_path: bool,
}

impl HelmIgnore {
    pub fn parse(text: &str) -> HelmIgnore {
        // Helm adds one rule of its own: hidden files under templates/.
        let mut rules = vec![IgnoreRule {
            negate: false,
            dir_only: false,
            whole_path: true,
        }];
        let mut patterns = vec![crate::glob::glob_regex(
            "templates/.?*",
            crate::glob::Glob::FilepathMatch,
        )];
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.contains("**") {
                continue;
            }
            let (negate, pattern) = match line.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, line),
            };
            let (dir_only, pattern) = match pattern.strip_suffix('/') {
                Some(p) => (true, p),
                None => (false, pattern),
            };
            let whole_path = pattern.contains('/');
            let pattern = pattern.trim_start_matches('/');
            rules.push(IgnoreRule {
                negate,
                dir_only,
                whole_path,
            });
            patterns.push(crate::glob::glob_regex(
                pattern,
                crate::glob::Glob::FilepathMatch,
            ));
        }
        let patterns = match regex::RegexSet::new(&patterns) {
            Ok(set) => Some(set),
            Err(_) => {
                // A pattern that makes no regex (`[z-a]`) is left out, rule and all: looked for
                // one pattern at a time only when the set as a whole fails.
                let valid: Vec<bool> = patterns
                    .iter()
                    .map(|p| regex::Regex::new(p).is_ok())
                    .collect();
                let mut rule_valid = valid.iter();
                rules.retain(|_| rule_valid.next() == Some(&true));
                let kept = patterns.iter().zip(&valid).filter(|(_, v)| **v);
                regex::RegexSet::new(kept.map(|(p, _)| p)).ok()
            }
        };
        HelmIgnore { rules, patterns }
    }

    /// Whether `path` (relative, `/`-separated) is ignored.
    pub fn ignores(&self, path: &str, is_dir: bool) -> bool {
        let Some(patterns) = &self.patterns else {
            return false;
        };
        let base = path.rsplit('/').next().unwrap_or(path);
        let (on_path, on_base) = (patterns.matches(path), patterns.matches(base));
        for (i, rule) in self.rules.iter().enumerate() {
            let matched = if rule.whole_path {
                on_path.matched(i)
            } else {
                on_base.matched(i)
            };
            if rule.negate {
                if (rule.dir_only && !is_dir) || !matched {
                    return true;
                }
                continue;
            }
            if rule.dir_only && !is_dir {
                continue;
            }
            if matched {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::HelmIgnore;

    #[test]
    fn helmignore_patterns() {
        let ig = HelmIgnore::parse("# comment\n*.tmp\n.git/\nsecret-*\nconf/*.bak\n");
        assert!(ig.ignores("a.tmp", false));
        assert!(ig.ignores("templates/x.tmp", false));
        assert!(ig.ignores(".git", true));
        assert!(!ig.ignores(".git", false));
        assert!(ig.ignores("secret-one", false));
        assert!(ig.ignores("conf/a.bak", false));
        assert!(!ig.ignores("other/a.bak", false));
        assert!(ig.ignores("templates/.hidden", false));
        assert!(!ig.ignores("Chart.yaml", false));
        // Helm's negation ignores whatever does not match it.
        let negated = HelmIgnore::parse("!keep.txt\n");
        assert!(negated.ignores("Chart.yaml", false));
        assert!(!negated.ignores("keep.txt", false));
        // A pattern that makes no regex is left out; the others still apply.
        let bad = HelmIgnore::parse("[z-a]\n*.tmp\n!keep.txt\n");
        assert!(bad.ignores("a.tmp", false));
        assert!(bad.ignores("Chart.yaml", false));
        assert!(!bad.ignores("keep.txt", false));
        assert!(bad.ignores("templates/.hidden", false));
    }
}
