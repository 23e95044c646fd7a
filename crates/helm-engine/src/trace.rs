//! Where the bytes of a rendered text came from: each stretch of the `helm template` output is
//! traced to the template file and place that wrote it, so that a reader of the output (a
//! linter's finding) can name the template's line rather than a line of output no file has.
//!
//! The renderer fills this in ([`crate::render::template_output_traced`]); a reader of the output
//! only looks offsets up in it.

use std::sync::Arc;

use crate::values_path::values_path_tokens;

/// The index of `item` in `table`, added at the end if it is not there (tables of a few
/// entries, each named by many stretches or marks).
pub fn index_in<T: PartialEq>(table: &mut Vec<T>, item: T) -> u32 {
    match table.iter().position(|t| *t == item) {
        Some(i) => i as u32,
        None => {
            table.push(item);
            (table.len() - 1) as u32
        }
    }
}

/// One template file stretches point into.
#[derive(Debug)]
struct File {
    /// As Helm names it (`mychart/templates/deployment.yaml`).
    name: Arc<str>,
    source: Arc<str>,
    /// Byte offset of each line's start in `source`.
    line_starts: Vec<u32>,
}

/// From byte `out` of the rendered text on (until the next stretch): copied from byte `src` of
/// `file` on (`verbatim`), or written by the action at byte `src`. `file: None` covers what no
/// template wrote (the `---` and `# Source:` lines between documents).
#[derive(Debug, Clone, Copy)]
struct Stretch {
    out: u32,
    src: u32,
    verbatim: bool,
    file: Option<u32>,
    /// The value the action printed (an index into [`Origins::values`]).
    value: Option<u32>,
}

/// A chart value an action printed, and where it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSite {
    /// Its path in the values (`image.tag`).
    pub path: String,
    /// The values file that sets it and the line of its key (`-f` file or the chart's
    /// `values.yaml`), when a file does.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The flag that sets it (`--set image.tag=1.2`), when one does.
    pub flag: Option<String>,
}

/// Where each stretch of one rendered text came from.
#[derive(Debug, Default)]
pub struct Origins {
    stretches: Vec<Stretch>,
    files: Vec<File>,
    values: Vec<ValueSite>,
    /// Where a `with` or `if` on an empty value rendered nothing: the output byte and the value
    /// (an index into `values`), in output order.
    holes: Vec<(u32, u32)>,
}

/// A place in a template file.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The template, as Helm names it.
    pub file: Arc<str>,
    /// The template's text.
    pub source: Arc<str>,
    /// 1-based line and column (in characters) in `source`.
    pub line: u32,
    pub column: u32,
    /// The byte was copied from the template's text (false: an action printed it).
    pub verbatim: bool,
    /// The value the action printed, when it printed one.
    pub value: Option<ValueSite>,
}

impl Origins {
    /// A template file stretches can point into; its index for [`Origins::push`].
    pub fn add_file(&mut self, name: Arc<str>, source: Arc<str>) -> u32 {
        if let Some(i) = self
            .files
            .iter()
            .position(|f| Arc::ptr_eq(&f.source, &source) && f.name == name)
        {
            return i as u32;
        }
        self.files.push(File {
            name,
            line_starts: yaml_value::text::line_starts(&source),
            source,
        });
        (self.files.len() - 1) as u32
    }

    /// Notes that from byte `out` on, the text comes from `file` (an index from
    /// [`Origins::add_file`]) at byte `src`, copied or by an action; `None`: from no template.
    /// Stretches are pushed in order of `out`.
    pub fn push(&mut self, out: usize, src: usize, verbatim: bool, file: Option<u32>) {
        let stretch = Stretch {
            out: out as u32,
            src: src as u32,
            verbatim,
            file,
            value: None,
        };
        match self.stretches.last_mut() {
            Some(last) if last.out == stretch.out => *last = stretch,
            _ => self.stretches.push(stretch),
        }
    }

    /// Notes that at output byte `out` a `with` or `if` on the (empty) value `site` rendered
    /// nothing. Holes are added in order of `out`.
    pub fn add_hole(&mut self, out: usize, site: ValueSite) {
        let i = index_in(&mut self.values, site);
        self.holes.push((out as u32, i));
    }

    /// The value whose `with` or `if` left out the key `key` in the document holding output
    /// byte `offset`, from there on: `nodeSelector` when `{{- with .Values.nodeSelector }}`
    /// (which would have written `nodeSelector:`) rendered nothing because the value is empty.
    pub fn hole_after(&self, offset: usize, key: &str) -> Option<ValueSite> {
        // The document ends where the next stretch of no template starts.
        let end = self
            .stretches
            .iter()
            .skip(self.stretches.partition_point(|s| s.out as usize <= offset))
            .find(|s| s.file.is_none())
            .map_or(u32::MAX, |s| s.out);
        let first = self
            .holes
            .partition_point(|&(out, _)| (out as usize) < offset);
        self.holes[first..]
            .iter()
            .take_while(|&&(out, _)| out <= end)
            .map(|&(_, v)| &self.values[v as usize])
            .find(|site| {
                // The key the value stands for: a list item's is its list's.
                let tokens = values_path_tokens(&site.path).unwrap_or_default();
                tokens
                    .iter()
                    .rev()
                    .find(|t| t.parse::<usize>().is_err())
                    .is_some_and(|t| t == key)
            })
            .cloned()
    }

    /// Notes that the stretch pushed last printed the value `site`.
    pub fn set_value(&mut self, site: ValueSite) {
        let i = index_in(&mut self.values, site);
        if let Some(last) = self.stretches.last_mut() {
            last.value = Some(i);
        }
    }

    /// Where byte `offset` of the rendered text came from. A quote the template wrote right
    /// before an action (`image: "{{ .Values.image.repository }}:{{ … }}"`) opens a scalar
    /// that action wrote: the action is its origin, and names the value.
    pub fn locate(&self, offset: usize) -> Option<Origin> {
        let mut i = self
            .stretches
            .partition_point(|s| s.out as usize <= offset)
            .checked_sub(1)?;
        let mut offset = offset;
        if let Some(next) = self
            .stretches
            .get(i + 1)
            .filter(|n| !n.verbatim && n.file.is_some() && n.out as usize == offset + 1)
            && self.quote_at(self.stretches[i], offset)
        {
            i += 1;
            offset = next.out as usize;
        }
        let s = self.stretches[i];
        let file = &self.files[s.file? as usize];
        let src = if s.verbatim {
            s.src as usize + (offset - s.out as usize)
        } else {
            s.src as usize
        };
        let src = src.min(file.source.len());
        let line = file.line_starts.partition_point(|&l| l as usize <= src);
        let start = file.line_starts[line - 1] as usize;
        let column = file
            .source
            .get(start..src)
            .map_or(1, |t| t.chars().count() + 1);
        Some(Origin {
            file: file.name.clone(),
            source: file.source.clone(),
            line: line as u32,
            column: column as u32,
            verbatim: s.verbatim,
            value: s.value.map(|v| self.values[v as usize].clone()),
        })
    }

    /// Whether byte `offset` of the output, in copied stretch `s`, is a quote of the template.
    fn quote_at(&self, s: Stretch, offset: usize) -> bool {
        let Some(file) = s.file.filter(|_| s.verbatim) else {
            return false;
        };
        let src = s.src as usize + (offset - s.out as usize);
        matches!(
            self.files[file as usize].source.as_bytes().get(src),
            Some(b'"' | b'\'')
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_into_copied_text_and_onto_actions() {
        let template: Arc<str> = "a: 1\nimage: {{ .Values.image }}\nb: x\n".into();
        let mut origins = Origins::default();
        let f = origins.add_file("c/templates/t.yaml".into(), template.clone());
        // Rendered: "---\n" (no template) then "a: 1\nimage: " (copied), "nginx" (the
        // action), "\nb: x\n" (copied).
        origins.push(0, 0, false, None);
        origins.push(4, 0, true, Some(f));
        origins.push(16, 12, false, Some(f));
        origins.push(21, 31, true, Some(f));
        assert!(origins.locate(2).is_none());
        let a = origins.locate(4).unwrap();
        assert_eq!((a.line, a.column, a.verbatim), (1, 1, true));
        let key = origins.locate(9).unwrap();
        assert_eq!((key.line, key.column), (2, 1));
        let value = origins.locate(18).unwrap();
        assert_eq!((value.line, value.column, value.verbatim), (2, 8, false));
        let b = origins.locate(22).unwrap();
        assert_eq!((b.line, b.column), (3, 1));
        assert_eq!(&*b.file, "c/templates/t.yaml");
    }

    /// A quoted scalar an action writes is the action's, from its opening quote on.
    #[test]
    fn a_quote_before_an_action_is_the_actions() {
        let template: Arc<str> = "image: \"{{ .Values.repo }}:{{ .Values.tag }}\"\n".into();
        let mut origins = Origins::default();
        let f = origins.add_file("c/templates/t.yaml".into(), template.clone());
        // Rendered: `image: "` (copied), `nginx` (action 1), `:` (copied), `1.27` (action 2).
        origins.push(0, 0, true, Some(f));
        origins.push(8, 8, false, Some(f));
        origins.push(13, 26, true, Some(f));
        origins.push(14, 27, false, Some(f));
        let quote = origins.locate(7).unwrap();
        assert_eq!((quote.line, quote.column, quote.verbatim), (1, 9, false));
        let key = origins.locate(0).unwrap();
        assert_eq!((key.column, key.verbatim), (1, true));
    }
}
