//! The manifest loader: files, directories and stdin → Kubernetes objects with a source map.
//!
//! Every object keeps the position tree of its document, so a finding's JSON pointer resolves to a
//! file:line:col only when it is reported. Helm output (`# Source: chart/templates/x.yaml`) is
//! attributed to the template, with lines counted from the template's first rendered line.
//!
//! Each document is read by [`crate::value::block`] (a fast reader for the block YAML that rendered manifests
//! are) when it can, else by [`crate::value::yaml`] (saphyr-parser): both give the same values and positions.

mod exclude;
pub mod typed;

pub use exclude::Exclusions;

use crate::error::{Error, ErrorKind};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::value::Value;

use crate::value::document::read_documents;
use crate::value::text::lines;
use crate::value::yaml::{ParsedDoc, PosNode, resolve};

/// Files larger than this are refused: the whole file is held in memory while it is linted, so
/// the bound is what keeps memory bounded. Rendered manifests are rarely above a few MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 32 * 1024 * 1024;

/// One input's text, kept for rendering source snippets.
#[derive(Debug)]
pub struct SourceText {
    /// The name the user gave (a path, or `<stdin>`).
    pub name: String,
    pub text: String,
    /// For a chart winguard rendered: where each template named in a `# Source:` comment is
    /// (`mychart/templates/x.yaml` → `deploy/mychart/templates/x.yaml`), so findings name a
    /// file that opens from the working directory. Other inputs keep Helm's names.
    pub template_locations: Option<Arc<std::collections::BTreeMap<String, String>>>,
    /// For a chart winguard rendered: which template wrote each stretch of `text`.
    pub origins: Option<Arc<helm_engine::trace::Origins>>,
    /// Whether the input began with a UTF-8 byte order mark (not in `text`; `fix` writes it
    /// back).
    pub bom: bool,
    /// Byte offset of each line's start in `text`, found when first needed.
    line_starts: std::sync::OnceLock<Vec<u32>>,
}

impl SourceText {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceText {
            name: name.into(),
            text: text.into(),
            template_locations: None,
            origins: None,
            bom: false,
            line_starts: std::sync::OnceLock::new(),
        }
    }

    /// The template place that wrote 1-based `line` and `column` (in characters) of `text`,
    /// for a chart winguard rendered.
    pub fn origin_at(&self, line: u32, column: u32) -> Option<helm_engine::trace::Origin> {
        self.origins.as_ref()?.locate(self.offset_of(line, column)?)
    }

    /// The byte offset of a 1-based line and column (in characters) of the text.
    fn offset_of(&self, line: u32, column: u32) -> Option<usize> {
        let starts = self
            .line_starts
            .get_or_init(|| crate::value::text::line_starts(&self.text));
        let start = *starts.get(line.checked_sub(1)? as usize)? as usize;
        let rest = self.text.get(start..)?;
        let within = rest
            .char_indices()
            .nth(column.saturating_sub(1) as usize)
            .map_or(rest.len(), |(i, _)| i);
        Some(start + within)
    }

    /// The value an empty `with`/`if` left out the key `key` for, in the document from the 1-based
    /// `line` and `column` on (see [`helm_engine::trace::Origins::hole_after`]).
    pub fn hole_at(
        &self,
        line: u32,
        column: u32,
        key: &str,
    ) -> Option<helm_engine::trace::ValueSite> {
        self.origins
            .as_ref()?
            .hole_after(self.offset_of(line, column)?, key)
    }

    /// The file a template named in a `# Source:` comment is reported in.
    pub fn template_file<'a>(&'a self, template: &'a str) -> &'a str {
        self.template_locations
            .as_ref()
            .and_then(|m| m.get(template))
            .map_or(template, String::as_str)
    }
}

/// A Kubernetes object found in an input.
#[derive(Debug, Clone)]
pub struct Object {
    pub value: Value,
    pub pos: Arc<PosNode>,
    pub source: Arc<SourceText>,
    /// The file name findings are reported against: the Helm template for rendered output,
    /// otherwise the input's name.
    pub file: Arc<str>,
    /// Subtracted from stream line numbers to give the line within `file`.
    pub line_offset: u32,
    /// The Helm template a `# Source:` comment names, when `file` is the input that held the
    /// rendered output rather than the template (`helm template … > out.yaml`, stdin).
    pub template: Option<Arc<str>>,
}

/// Where a document's objects are reported: the file, the lines before it there, the template.
#[derive(Debug, Clone)]
struct Placement {
    file: Arc<str>,
    line_offset: u32,
    template: Option<Arc<str>>,
}

impl Placement {
    /// A document at stream line `line`. A chart winguard rendered names the template file on
    /// disk, with lines counted in its rendered output; any other input (a file of `helm
    /// template` output, stdin) is named itself, at its own lines, which always exist, with the
    /// template it came from beside it.
    fn of(source: &SourceText, templates: &Templates, line: u32) -> Placement {
        match templates.for_line(line) {
            Some((template, comment_line)) if source.template_locations.is_some() => Placement {
                file: Arc::from(source.template_file(template)),
                line_offset: comment_line,
                template: None,
            },
            found => Placement {
                file: Arc::from(source.name.as_str()),
                line_offset: 0,
                template: found.map(|(t, _)| Arc::from(t)),
            },
        }
    }
}

/// The inputs of one run, read into memory but not parsed yet.
#[derive(Debug, Default)]
pub struct Sources {
    pub texts: Vec<Arc<SourceText>>,
    pub errors: Vec<Error>,
    /// Things skipped on purpose (binary files in a directory), said on stderr.
    pub notes: Vec<String>,
    pub files: usize,
    /// Helm charts found while walking directories (a directory with `Chart.yaml`): their
    /// files are templates, not manifests, so the walk leaves them to the chart renderer.
    pub charts: Vec<PathBuf>,
    /// Kustomize roots found while walking directories (a directory with a kustomization
    /// file): their files are inputs to `kustomize build`, left to it like charts.
    pub kustomizations: Vec<PathBuf>,
}

/// The names kustomize reads a directory's kustomization from.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The repository `dir` lies in: the nearest of it and its parents holding `.git` (git's top
/// level, without running git).
pub fn repository_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

/// Whether `dir` is a kustomize root.
pub fn is_kustomization(dir: &Path) -> bool {
    dir.is_dir() && KUSTOMIZATION_FILES.iter().any(|f| dir.join(f).is_file())
}

/// What walking one directory found.
#[derive(Default)]
struct Walked {
    files: Vec<PathBuf>,
    charts: Vec<PathBuf>,
    kustomizations: Vec<PathBuf>,
    errors: Vec<Error>,
    notes: Vec<String>,
}

/// Walks `root` for manifests (`*.yaml`, `*.yml`, `*.json`), charts and kustomize roots.
///
/// Symlinks are followed, as a user who links a manifest into a directory means it to be
/// linted, and Kubernetes mounts ConfigMaps as links (`app.yaml -> ..data/app.yaml`,
/// `..data -> ..2026_01_01_00_00_00.1/`). Each real file is read once, under its plainest
/// name (fewest hidden parts, then shortest). A link that leaves `root` or loops is skipped
/// with a note.
fn walk_directory(root: &Path, overlays: Overlays, exclude: &Exclusions) -> Walked {
    let mut walked = Walked::default();
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .map_or_else(|| root.display().to_string(), |p| p.display().to_string());
                if let Some(ancestor) = e.loop_ancestor() {
                    walked.notes.push(format!(
                        "{path}: skipped: a symlink loop (back to {})",
                        ancestor.display()
                    ));
                } else if e
                    .io_error()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
                {
                    walked
                        .notes
                        .push(format!("{path}: skipped: a symlink to nothing"));
                } else {
                    walked.errors.push(file_error(
                        &path,
                        format!("cannot read directory entry: {e}"),
                    ));
                }
                continue;
            }
        };
        let path = entry.path();
        if entry.depth() > 0 && exclude.excludes(path) {
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if entry.file_type().is_dir() {
            let leaves = entry.path_is_symlink()
                && std::fs::canonicalize(path).is_ok_and(|real| !real.starts_with(&real_root));
            if leaves {
                walked.notes.push(format!(
                    "{}: skipped: a symlink to a directory outside {}",
                    path.display(),
                    root.display()
                ));
                walker.skip_current_dir();
            } else if path.join("Chart.yaml").is_file() {
                walked.charts.push(path.to_path_buf());
                walker.skip_current_dir();
            } else if overlays == Overlays::Build && is_kustomization(path) {
                walked.kustomizations.push(path.to_path_buf());
                walker.skip_current_dir();
            }
            continue;
        }
        if !entry.file_type().is_file() || !is_manifest_name(path) {
            continue;
        }
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !real.starts_with(&real_root) {
            walked.notes.push(format!(
                "{}: skipped: a symlink to {}, outside {}",
                path.display(),
                real.display(),
                root.display()
            ));
            continue;
        }
        found.push((real, path.to_path_buf()));
    }
    // One name per real file: the plainest.
    let plainness = |p: &Path| {
        let hidden = p
            .components()
            .filter(|c| c.as_os_str().to_string_lossy().starts_with('.'))
            .filter(|c| {
                !matches!(
                    c,
                    std::path::Component::CurDir | std::path::Component::ParentDir
                )
            })
            .count();
        (hidden, p.as_os_str().len())
    };
    let mut by_real: std::collections::BTreeMap<PathBuf, PathBuf> = Default::default();
    for (real, path) in found {
        match by_real.entry(real) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(path);
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                if plainness(&path) < plainness(o.get()) {
                    o.insert(path);
                }
            }
        }
    }
    walked.files = by_real.into_values().collect();
    walked.files.sort();
    walked
}

impl Sources {
    /// One in-memory text (tests, docs examples, benches).
    pub fn from_text(name: &str, text: &str) -> Sources {
        let mut s = Sources::default();
        read_bytes(name, text.as_bytes().to_vec(), false, &mut s);
        s
    }
}

/// One input to read: stdin's bytes, or a file (and whether a directory walk found it).
enum Job<'n> {
    Bytes(&'n str, Vec<u8>),
    File(PathBuf, bool),
}

/// How a directory walk treats kustomize roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlays {
    /// Left to `kustomize build` (linting: the overlay's output is what reaches the cluster).
    Build,
    /// Read as plain directories (fixing: the resource files are what can be edited).
    Read,
}

/// Reads every input: files, directories (recursively: `*.yaml`, `*.yml`, `*.json`) and `-`.
/// Files are read in parallel; results keep the order of the inputs.
pub fn read_inputs(inputs: &[PathBuf], max_file_size: u64, overlays: Overlays) -> Sources {
    read_inputs_with(
        inputs,
        max_file_size,
        overlays,
        "<stdin>",
        &Exclusions::default(),
    )
}

/// [`read_inputs`], naming what `-` reads `stdin_name` (`--stdin-filename`: the file an editor
/// or pre-commit hook piped in), so findings point at that file, and leaving out of directory
/// walks what `exclude` excludes.
pub fn read_inputs_with(
    inputs: &[PathBuf],
    max_file_size: u64,
    overlays: Overlays,
    stdin_name: &str,
    exclude: &Exclusions,
) -> Sources {
    use rayon::prelude::*;
    let mut walk_errors = Vec::new();
    let mut notes = Vec::new();
    let mut jobs = Vec::new();
    let mut charts = Vec::new();
    let mut kustomizations = Vec::new();
    for input in inputs {
        if input.as_os_str() == "-" {
            let mut bytes = Vec::new();
            let res = std::io::stdin()
                .lock()
                .take(max_file_size + 1)
                .read_to_end(&mut bytes);
            match res {
                Err(e) => walk_errors.push(file_error(stdin_name, format!("cannot read: {e}"))),
                Ok(_) if bytes.len() as u64 > max_file_size => walk_errors.push(file_error(
                    stdin_name,
                    format!(
                        "input is larger than the {} limit",
                        human_size(max_file_size)
                    ),
                )),
                Ok(_) => jobs.push(Job::Bytes(stdin_name, bytes)),
            }
        } else if input.is_dir() {
            let walked = walk_directory(input, overlays, exclude);
            walk_errors.extend(walked.errors);
            notes.extend(walked.notes);
            charts.extend(walked.charts);
            kustomizations.extend(walked.kustomizations);
            jobs.extend(walked.files.into_iter().map(|f| Job::File(f, true)));
        } else {
            jobs.push(Job::File(input.clone(), false));
        }
    }
    let parts: Vec<Sources> = jobs
        .into_par_iter()
        .map(|job| {
            let mut part = Sources::default();
            match job {
                Job::Bytes(name, bytes) => read_bytes(name, bytes, false, &mut part),
                Job::File(path, in_dir) => read_file(&path, max_file_size, in_dir, &mut part),
            }
            part
        })
        .collect();
    let mut all = Sources {
        errors: walk_errors,
        notes,
        charts,
        kustomizations,
        ..Sources::default()
    };
    for part in parts {
        all.texts.extend(part.texts);
        all.errors.extend(part.errors);
        all.notes.extend(part.notes);
        all.files += part.files;
    }
    all
}

fn is_manifest_name(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn read_file(path: &Path, max_file_size: u64, in_directory: bool, loaded: &mut Sources) {
    let name = path.display().to_string();
    match std::fs::metadata(path) {
        Err(e) => {
            loaded
                .errors
                .push(file_error(&name, format!("cannot read: {}", io_reason(&e))));
            return;
        }
        Ok(meta) if meta.len() > max_file_size => {
            loaded.errors.push(file_error(
                &name,
                format!(
                    "file is {}, larger than the {} limit (raise it with --max-file-size)",
                    human_size(meta.len()),
                    human_size(max_file_size)
                ),
            ));
            return;
        }
        Ok(_) => {}
    }
    match std::fs::read(path) {
        Err(e) => loaded
            .errors
            .push(file_error(&name, format!("cannot read: {}", io_reason(&e)))),
        Ok(bytes) => read_bytes(&name, bytes, in_directory, loaded),
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

fn human_size(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{bytes} bytes")
    }
}

fn file_error(file: &str, message: String) -> Error {
    Error {
        kind: ErrorKind::Input,
        file: file.to_string(),
        line: None,
        column: None,
        message,
    }
}

/// Checks one input's bytes (binary, UTF-8) and keeps its text.
pub fn read_bytes(name: &str, bytes: Vec<u8>, in_directory: bool, loaded: &mut Sources) {
    loaded.files += 1;
    let probe = &bytes[..bytes.len().min(8192)];
    if probe.contains(&0) {
        if in_directory {
            loaded.notes.push(format!("{name}: skipped: binary file"));
        } else {
            loaded.errors.push(file_error(
                name,
                "binary file, not YAML or JSON".to_string(),
            ));
        }
        return;
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let fault = crate::value::text::Utf8Fault::new(e.as_bytes(), &e.utf8_error());
            loaded.errors.push(Error {
                kind: ErrorKind::Input,
                file: name.to_string(),
                line: Some(fault.line),
                column: Some(fault.column),
                message: format!("invalid UTF-8: {fault}"),
            });
            return;
        }
    };
    let (text, bom) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest.to_string(), true),
        None => (text, false),
    };
    let mut source = SourceText::new(name, text);
    source.bom = bom;
    loaded.texts.push(Arc::new(source));
}

/// Reads a chart's rendered output (`helm template` text) as one input named `name`, its
/// `# Source:` templates reported at `locations` (see [`SourceText::template_locations`]).
pub fn read_rendered(
    name: &str,
    text: String,
    locations: std::collections::BTreeMap<String, String>,
    origins: Option<helm_engine::trace::Origins>,
    loaded: &mut Sources,
) {
    let before = loaded.texts.len();
    read_bytes(name, text.into_bytes(), false, loaded);
    if let Some(source) = loaded.texts.get_mut(before)
        && let Some(source) = Arc::get_mut(source)
    {
        source.template_locations = Some(Arc::new(locations));
        source.origins = origins.map(Arc::new);
    }
}

/// Where one YAML document sits in its source text.
#[derive(Debug, Clone)]
pub struct DocSpan {
    pub start: usize,
    pub end: usize,
    /// Lines before the document's first line.
    pub line_offset: u32,
    /// Where the value of a top-level `kind:` line is in the text (byte range), read without
    /// parsing, to schedule work (see [`DocSpan::kind_hint`]). A range, not a string: a run has a
    /// span per document, and a string would allocate each one's kind.
    pub kind_at: Option<(usize, usize)>,
}

impl DocSpan {
    /// The document's `kind:` value as written, if it has a top-level one; `text` is the text
    /// the span was found in.
    pub fn kind_hint<'t>(&self, text: &'t str) -> Option<&'t str> {
        self.kind_at.and_then(|(start, end)| text.get(start..end))
    }
}

fn is_document_marker(line: &str) -> bool {
    line == "---"
        || line.starts_with("--- ")
        || line.starts_with("---\t")
        || line.starts_with("---#")
}

/// Splits a text into its YAML documents at `---` and `...` lines. A `---` at column 0 always
/// starts a document (YAML forbids it inside a block scalar), so each piece parses on its own:
/// a syntax error then costs one document, not the rest of the file.
pub fn split_documents(text: &str) -> Vec<DocSpan> {
    split_source(text).1
}

/// A text's Helm templates and its documents, from one pass over its lines (both look at every
/// line, so one scan serves both). A large text is split into pieces at document markers and its
/// pieces are scanned on several threads (else one large file, a cluster dump, is scanned on one
/// thread while the others wait), then joined as one scan would have found them.
pub fn split_source(text: &str) -> (Templates, Vec<DocSpan>) {
    use rayon::prelude::*;
    let cuts = piece_starts(text);
    if cuts.len() == 1 {
        let piece = split_piece(text, 0, text.len());
        return (piece.templates, piece.spans);
    }
    let ends = cuts.iter().skip(1).copied().chain([text.len()]);
    let ranges: Vec<(usize, usize)> = cuts.iter().copied().zip(ends).collect();
    let pieces: Vec<Piece> = ranges
        .par_iter()
        .map(|&(from, to)| split_piece(text, from, to))
        .collect();
    let mut templates = Templates::default();
    let mut spans = Vec::with_capacity(pieces.iter().map(|p| p.spans.len()).sum());
    let mut lines_before = 0;
    // What a piece left open (a document with nothing but comments yet): the next piece's first
    // document starts there, as in one scan, unless a `...` line in between closed it.
    let mut carried: Option<(usize, u32)> = None;
    for (mut piece, &(from, _)) in pieces.into_iter().zip(&ranges) {
        for span in &mut piece.spans {
            span.line_offset += lines_before;
        }
        if let Some((_, line)) = piece.open.as_mut() {
            *line += lines_before;
        }
        if let Some((start, line)) = carried {
            match piece.spans.first_mut() {
                Some(first) if first.start == from => {
                    first.start = start;
                    first.line_offset = line;
                }
                None if piece.open.is_some_and(|(open, _)| open == from) => {
                    piece.open = Some((start, line));
                }
                _ => {}
            }
        }
        carried = piece.open;
        templates.comments.extend(
            piece
                .templates
                .comments
                .into_iter()
                .map(|(n, p)| (n + lines_before, p)),
        );
        templates.separators.extend(
            piece
                .templates
                .separators
                .into_iter()
                .map(|n| n + lines_before),
        );
        spans.extend(piece.spans);
        lines_before += piece.lines;
    }
    (templates, spans)
}

/// From how many bytes a text is split into pieces, and about how large each is.
const SPLIT_PIECE: usize = 1 << 20;

/// Where each piece of `text` starts: 0, then the start of the first document marker line
/// (`---`) at or after each further [`SPLIT_PIECE`] bytes. Every piece but the first starts with
/// a marker, so a piece scanned alone finds what one scan of the whole text finds there.
fn piece_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts = vec![0];
    let mut at = SPLIT_PIECE;
    while at < text.len() {
        let Some(found) = memchr::memmem::find(&bytes[at..], b"\n---") else {
            break;
        };
        let line = at + found + 1;
        let line_end = memchr::memchr(b'\n', &bytes[line..]).map_or(text.len(), |e| line + e);
        let marker = text[line..line_end].trim_end_matches('\r');
        if is_document_marker(marker) {
            cuts.push(line);
            at = line + SPLIT_PIECE;
        } else {
            at = line;
        }
    }
    cuts
}

/// What one scan of the lines from byte `from` to `to` finds, lines counted from the piece's
/// first.
struct Piece {
    templates: Templates,
    spans: Vec<DocSpan>,
    /// Lines in the piece.
    lines: u32,
    /// Where the document left open at the piece's end starts (and its line), when it has no
    /// content yet; `None` when the piece ends with a document of its own.
    open: Option<(usize, u32)>,
}

fn split_piece(text: &str, from: usize, to: usize) -> Piece {
    let mut templates = Templates::default();
    let mut spans = Vec::new();
    let mut start = from;
    let mut start_line = 0u32;
    let mut has_content = false;
    let mut kind_at = None;
    let mut offset = from;
    let mut count = 0u32;
    for (i, bare) in lines(&text[from..to]).enumerate() {
        count = i as u32 + 1;
        // `lines` drops the newline; the offset arithmetic below needs the whole line's length.
        let line_len = (bare.len() + 1).min(to - offset);
        // Most lines of a document are indented, and once it has content such a line can be
        // nothing this looks for (a marker, a `# Source:` comment, a top-level `kind:`): passed
        // over, so the checks below run on the few lines that can matter.
        if has_content && bare.as_bytes().first() == Some(&b' ') {
            offset += line_len;
            continue;
        }
        templates.note_line(i as u32 + 1, bare);
        let bare = bare.trim_end_matches('\r');
        let marker = is_document_marker(bare);
        let end_marker = bare == "...";
        if (marker || end_marker) && has_content {
            spans.push(DocSpan {
                start,
                end: offset,
                line_offset: start_line,
                kind_at: kind_at.take(),
            });
            start = offset;
            start_line = i as u32;
            has_content = false;
        }
        if end_marker {
            start = offset + line_len;
            start_line = i as u32 + 1;
        } else if !marker || bare.len() > 3 {
            let t = bare.trim_start();
            if !(t.is_empty() || t.starts_with('#') || (t.starts_with('%') && !has_content)) {
                has_content = true;
            }
            if let Some(k) = bare.strip_prefix("kind:") {
                let k = k
                    .split(" #")
                    .next()
                    .unwrap_or("")
                    .trim()
                    .trim_matches(['"', '\'']);
                // `k` is a slice of `text`: its place is its offset from the text's start.
                let start = k.as_ptr() as usize - text.as_ptr() as usize;
                kind_at.get_or_insert((start, start + k.len()));
            }
        }
        offset += line_len;
    }
    let open = if has_content {
        spans.push(DocSpan {
            start,
            end: to,
            line_offset: start_line,
            kind_at,
        });
        None
    } else {
        Some((start, start_line))
    };
    Piece {
        templates,
        spans,
        lines: count,
        open,
    }
}

/// Parses a whole source: every document, each on its own.
pub fn parse_source(source: &Arc<SourceText>) -> (Vec<Object>, Vec<Error>) {
    let (templates, spans) = split_source(&source.text);
    let mut objects = Vec::new();
    let mut errors = Vec::new();
    for span in spans {
        let (o, e) = parse_document(source, &templates, &span);
        objects.extend(o);
        errors.extend(e);
    }
    (objects, errors)
}

/// Parses one document of a source into objects: attributes Helm templates, expands
/// `kind: List`, and skips what isn't a Kubernetes object.
pub fn parse_document(
    source: &Arc<SourceText>,
    templates: &Templates,
    span: &DocSpan,
) -> (Vec<Object>, Vec<Error>) {
    let text = &source.text[span.start..span.end];
    let (docs, error) = read_documents(text, span.line_offset);
    let mut objects = Vec::new();
    let mut errors = Vec::new();
    for doc in docs {
        let placement = Placement::of(source, templates, doc.start_line);
        let ParsedDoc { value, pos, .. } = doc;
        push_objects(value, pos, source, &placement, &mut objects, &mut errors);
    }
    if let Some(e) = error {
        let placement = Placement::of(source, templates, e.line);
        errors.push(Error {
            kind: ErrorKind::Input,
            file: placement.file.to_string(),
            line: Some(e.line - placement.line_offset),
            column: Some(e.col),
            message: format!("invalid YAML: {}", e.message),
        });
    }
    (objects, errors)
}

fn push_objects(
    value: Value,
    mut pos: PosNode,
    source: &Arc<SourceText>,
    placement: &Placement,
    objects: &mut Vec<Object>,
    errors: &mut Vec<Error>,
) {
    let Value::Object(mut map) = value else {
        // Empty documents, scalars and top-level sequences are not Kubernetes objects.
        return;
    };
    let is_list = map
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && map.contains_key("items");
    if is_list {
        let items_index = map.keys().position(|k| k == "items").unwrap_or(0);
        let items_pos = std::mem::take(&mut pos.children[items_index]);
        match map.remove("items") {
            Some(Value::Array(items)) => {
                for (item, item_pos) in items.into_iter().zip(items_pos.children) {
                    push_objects(item, item_pos, source, placement, objects, errors);
                }
            }
            Some(Value::Null) => {}
            Some(_) => errors.push(Error {
                kind: ErrorKind::Input,
                file: placement.file.to_string(),
                line: Some(items_pos.line - placement.line_offset),
                column: Some(items_pos.col),
                message: "`items` of a List must be a sequence".to_string(),
            }),
            None => {}
        }
        return;
    }
    let has_kind = map.get("kind").is_some_and(Value::is_string);
    let has_api = map.get("apiVersion").is_some_and(Value::is_string);
    if !(has_kind && has_api) {
        // Not a Kubernetes object (values files, kustomization, arbitrary YAML): pass quietly.
        return;
    }
    objects.push(Object {
        value: Value::Object(map),
        pos: Arc::new(pos),
        source: Arc::clone(source),
        file: Arc::clone(&placement.file),
        line_offset: placement.line_offset,
        template: placement.template.clone(),
    });
}

/// Helm's `# Source: <template>` comments of a source, with the document separators around them.
#[derive(Debug, Default)]
pub struct Templates {
    /// (line of the comment, template path)
    comments: Vec<(u32, String)>,
    separators: Vec<u32>,
}

impl Templates {
    /// Records line `n` (1-based) if it is a `# Source:` comment or a document separator.
    fn note_line(&mut self, n: u32, line: &str) {
        if let Some(path) = line.strip_prefix("# Source: ") {
            self.comments.push((n, path.trim().to_string()));
        } else if line.starts_with("---") {
            self.separators.push(n);
        }
    }

    /// The template a document starting at `line` came from, and the comment's line.
    fn for_line(&self, line: u32) -> Option<(&str, u32)> {
        let idx = self.comments.partition_point(|(l, _)| *l < line);
        let (comment_line, path) = self.comments.get(idx.checked_sub(1)?)?;
        // A separator between the comment and the document means the comment belongs to an
        // earlier (empty) document.
        let first_after = self.separators.partition_point(|&s| s <= *comment_line);
        let sep_between = self.separators.get(first_after).is_some_and(|&s| s <= line);
        (!sep_between).then_some((path.as_str(), *comment_line))
    }
}

/// A position resolved from a JSON pointer: 1-based line and column in the object's `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
    /// True when the pointer itself exists; false when this is the nearest existing parent.
    pub exact: bool,
    /// The position is a key's (a missing field's parent, or a map or list value).
    pub at_key: bool,
}

impl Object {
    pub fn str_at(&self, pointer: &str) -> Option<&str> {
        self.value.pointer(pointer).and_then(Value::as_str)
    }
    pub fn kind(&self) -> &str {
        self.str_at("/kind").unwrap_or("")
    }
    pub fn api_version(&self) -> &str {
        self.str_at("/apiVersion").unwrap_or("")
    }
    pub fn name(&self) -> &str {
        self.str_at("/metadata/name")
            .or_else(|| self.str_at("/metadata/generateName"))
            .unwrap_or("")
    }
    pub fn namespace(&self) -> Option<&str> {
        self.str_at("/metadata/namespace").filter(|s| !s.is_empty())
    }

    /// The stream line (for snippets) of a 1-based line in `file`.
    pub fn stream_line(&self, line: u32) -> u32 {
        line + self.line_offset
    }

    /// Resolves a JSON pointer to the value's position, or to the nearest existing parent's key
    /// when the pointer does not exist (a missing field is reported where it should be added).
    pub fn position(&self, pointer: &str) -> Position {
        self.position_with(pointer, true)
    }

    /// Like [`Object::position`], but a map or list is located at its own first character (for
    /// errors about the value itself, such as a wrong type).
    pub fn value_position(&self, pointer: &str) -> Position {
        self.position_with(pointer, false)
    }

    fn position_with(&self, pointer: &str, collections_at_key: bool) -> Position {
        let (pos, exact) = resolve(&self.value, &self.pos, pointer);
        // A map or list is shown at its key (`capabilities:`), not at its first entry.
        let collection = collections_at_key
            && exact
            && self
                .value
                .pointer(pointer)
                .is_some_and(|v| v.is_object() || v.is_array());
        let (line, column) = if (!exact || collection) && pos.key_line > 0 {
            (pos.key_line, pos.key_col)
        } else if pos.line > 0 {
            (pos.line, pos.col)
        } else {
            (1, 1)
        };
        Position {
            line: line.saturating_sub(self.line_offset).max(1),
            column,
            exact,
            at_key: (!exact || collection) && pos.key_line > 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> (Vec<Object>, Vec<Error>) {
        parse_source(&Arc::new(SourceText::new(name, text)))
    }

    /// What a scan found, as text, to compare two scans.
    fn scanned(found: &(Templates, Vec<DocSpan>)) -> String {
        let (templates, spans) = found;
        format!(
            "{:?} {:?} {spans:?}",
            templates.comments, templates.separators
        )
    }

    /// `split_source` (in pieces, for a large text) finds what one scan of the whole finds.
    fn assert_scans_as_one(text: &str) {
        let whole = split_piece(text, 0, text.len());
        assert_eq!(
            scanned(&split_source(text)),
            scanned(&(whole.templates, whole.spans))
        );
    }

    #[test]
    fn a_large_text_scanned_in_pieces_reads_as_one_scan() {
        // Documents of every kind the scan tells apart, some of them where pieces are cut: a
        // comment-only document before a marker (its start carries into the next piece), a
        // `...` end, `# Source:` comments, a marker with content, CRLF lines, empty documents.
        let blocks = [
            "---\n# Source: chart/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
            "---\n# only a comment\n",
            "---\n# Source: chart/templates/b.yaml\n---\nkind: Service\nspec:\n  ports: []\n",
            "---\r\nkind: Pod\r\nmetadata: {name: crlf}\r\n",
            "--- !!map\nkind: Secret\n...\n# after the end\n",
            "---\n---\n%YAML 1.2\n---\nkind: Job\n",
            "---\n  kind: Indented\ndata: {}\n",
        ];
        let mut text = String::new();
        let mut i = 0;
        while text.len() < 3 * SPLIT_PIECE + 12_345 {
            text.push_str(blocks[i % blocks.len()]);
            // Vary the lengths so that pieces are cut at every kind of block.
            text.push_str(&"#\n".repeat(i % 5));
            i += 1;
        }
        let cuts = piece_starts(&text);
        assert!(cuts.len() > 3, "the text is cut into pieces");
        // At least one piece ends in a document with nothing but comments yet, whose start the
        // next piece's first document must take (the case the joining is for).
        assert!(
            cuts.windows(2)
                .any(|c| split_piece(&text, c[0], c[1]).open.is_some()),
            "a cut falls after a comment-only document"
        );
        assert_scans_as_one(&text);
        // Without a final newline, and ending inside a comment-only document.
        assert_scans_as_one(&(text.trim_end_matches('\n').to_string() + "\n---\n# trailing"));
    }

    #[test]
    fn a_piece_of_nothing_but_comments_carries_the_open_start_on() {
        // A comment-only document left open by the first piece, then a whole piece that is one
        // more comment-only document (no content at all): the start carries through it to the
        // first document with content, as in one scan.
        let comments = "# comment\n".repeat(SPLIT_PIECE / 10 + 1);
        let text =
            format!("kind: A\n---\n{comments}---\n{comments}---\n# last\nkind: B\n---\nkind: C\n");
        let cuts = piece_starts(&text);
        assert_eq!(cuts.len(), 3, "three pieces: {cuts:?}");
        let middle = split_piece(&text, cuts[1], cuts[2]);
        assert!(
            middle.spans.is_empty() && middle.open.is_some_and(|(open, _)| open == cuts[1]),
            "the middle piece holds no content, only a document left open from its start"
        );
        assert_scans_as_one(&text);
    }

    #[test]
    fn kind_hints_come_from_top_level_kind_lines() {
        let text = "kind: Service\nmetadata: {name: a}\n---\nkind: \"Deployment\" # app\nspec:\n  kind: Nested\n---\nspec: {}\n---\n  kind: Indented\n";
        let hints: Vec<_> = split_documents(text)
            .iter()
            .map(|s| s.kind_hint(text))
            .collect();
        assert_eq!(hints, vec![Some("Service"), Some("Deployment"), None, None]);
    }

    #[test]
    fn helm_source_comments_attribute_documents() {
        let text = "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n";
        // A file of rendered output: findings name it, at its own lines, with the template.
        let (objs, errs) = parse("out.yaml", text);
        assert!(errs.is_empty());
        assert_eq!(&*objs[0].file, "out.yaml");
        assert_eq!(objs[0].template.as_deref(), Some("c/templates/a.yaml"));
        assert_eq!(objs[1].template.as_deref(), Some("c/templates/b.yaml"));
        assert_eq!(objs[1].position("/metadata/name").line, 12);
        // A chart winguard rendered: the templates as they are on disk, at rendered lines.
        let mut source = SourceText::new("deploy/c", text);
        source.template_locations = Some(Arc::new(
            [
                (
                    "c/templates/a.yaml".to_string(),
                    "deploy/c/templates/a.yaml".to_string(),
                ),
                (
                    "c/templates/b.yaml".to_string(),
                    "deploy/c/templates/b.yaml".to_string(),
                ),
            ]
            .into(),
        ));
        let (objs, errs) = parse_source(&Arc::new(source));
        assert!(errs.is_empty());
        assert_eq!(&*objs[0].file, "deploy/c/templates/a.yaml");
        assert_eq!(&*objs[1].file, "deploy/c/templates/b.yaml");
        assert_eq!(objs[1].template, None);
        // `name: b` is the third line of b.yaml's rendered output.
        assert_eq!(objs[1].position("/metadata/name").line, 4);
    }

    #[test]
    fn list_items_become_objects_and_junk_passes() {
        let text = "kind: List\napiVersion: v1\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n---\nfoo: bar\n---\n- 1\n";
        let (objs, errs) = parse("l.yaml", text);
        assert!(errs.is_empty());
        assert_eq!(objs.len(), 1);
        assert_eq!(objs[0].name(), "a");
        assert_eq!(objs[0].position("/metadata/name").line, 4);
    }

    #[test]
    fn missing_pointer_resolves_to_nearest_parent_key() {
        let (objs, _) = parse(
            "p.yaml",
            "apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n",
        );
        let p = objs[0].position("/spec/nodeSelector/kubernetes.io~1os");
        assert_eq!((p.line, p.column, p.exact), (3, 1, false));
    }
}
