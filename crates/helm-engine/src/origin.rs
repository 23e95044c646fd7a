//! Which value an action printed, and where the user (or the chart) set it: what a finding in a
//! rendered chart names beside the template line, so the fix goes where the value is.

use super::values::flag_keys;
use crate::trace::ValueSite;
use crate::values_path::{path_pointer, values_path_tokens};

/// The values path (`image.tag`) of the first `.Values.…` field chain in the action whose
/// pipeline starts at byte `at` of a template's `source`: what the action prints comes from it
/// (`{{ .Values.image }}`, `{{ toYaml .Values.nodeSelector | nindent 8 }}`, `{{ $.Values.x }}`).
pub fn action_values_path(source: &str, at: usize) -> Option<String> {
    // `(?:^|[^\w.])` in front, as one regex, compiles Unicode's word class into the automaton on
    // every render that marks its output, a large share of a small chart's render. The chain
    // alone is ASCII and compiles cheaply; what precedes it is checked with the same Unicode word
    // class, one character per candidate.
    static CHAIN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)").expect("valid")
    });
    let text = source.get(at..)?;
    let action = &text[..text.find("}}").unwrap_or(text.len())];
    let mut from = 0;
    while let Some(found) = CHAIN.captures_at(action, from) {
        let start = found.get(0)?.start();
        let before = action[..start].chars().next_back();
        if before.is_none_or(|c| c != '.' && !regex_syntax::is_word_character(c)) {
            return Some(found.get(1)?.as_str()[1..].to_string());
        }
        // A `$` or `.` (ASCII) starts every candidate: the next one may start one byte on.
        from = start + 1;
    }
    None
}

/// Whether the action whose pipeline starts at byte `at` of `source` prints dot: `Some(None)`
/// for dot itself (`toYaml .`), `Some(Some(field))` for a field of it (`.tag`).
pub fn action_dot_field(source: &str, at: usize) -> Option<Option<String>> {
    static DOT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[\s(|])\.(?:([A-Za-z_][A-Za-z0-9_]*)|(?:$|[\s)|]))")
            .expect("valid")
    });
    let text = source.get(at..)?;
    let action = &text[..text.find("}}").unwrap_or(text.len())];
    let found = DOT.captures(action)?;
    Some(found.get(1).map(|f| f.as_str().to_string()))
}

/// A values file: its name and its parsed document.
type ValuesFile = (String, yaml_value::yaml::ParsedDoc);

/// A chart's own `values.yaml` in a chart's tree: the chain of subchart names that leads to it
/// (empty for the top chart, [`crate::load::chart_tree`]), its name and its text.
pub type ChartValues = (Vec<String>, String, std::sync::Arc<str>);

/// Where the values a render used came from, latest first in precedence: `--set*` flags, then
/// `-f` files (the last one wins), then the chart's own `values.yaml`.
#[derive(Debug, Default)]
pub struct ValuesSources {
    /// The flags as given (`--set`, `image.tag=1.2`), in order.
    pub flags: Vec<(String, String)>,
    /// `-f` files in order: the name they are reported under, and their text.
    pub files: Vec<(String, String)>,
    /// The `values.yaml` of each chart in the tree, the top chart's first when it has one.
    charts: Vec<ChartValues>,
    /// Subcharts' `values.yaml` files parsed so far (by the chain of names).
    subcharts: std::cell::RefCell<std::collections::HashMap<Vec<String>, Option<ValuesFile>>>,
    /// The files parsed (each once, when first needed), and the sites found (each once).
    parsed: std::cell::OnceCell<Vec<Option<yaml_value::yaml::ParsedDoc>>>,
    found: std::cell::RefCell<std::collections::HashMap<String, ValueSite>>,
}

impl ValuesSources {
    /// The sources of a render: its flags, `-f` files (each as its name and text) and the
    /// `values.yaml` of each chart in its tree ([`crate::load::values_files`]).
    pub fn new(
        flags: Vec<(String, String)>,
        files: Vec<(String, String)>,
        charts: Vec<ChartValues>,
    ) -> Self {
        ValuesSources {
            flags,
            files,
            charts,
            ..Default::default()
        }
    }

    /// The top chart's `values.yaml`: its name and text.
    fn top_chart(&self) -> Option<(&str, &str)> {
        self.charts
            .iter()
            .find(|(chain, _, _)| chain.is_empty())
            .map(|(_, name, text)| (name.as_str(), &**text))
    }

    /// Where the value at `path` was set: the last flag that sets it (or a value it is in), else
    /// the last `-f` file that has it, else the chart's `values.yaml` at its line.
    pub fn site(&self, path: &str) -> ValueSite {
        if let Some(site) = self.found.borrow().get(path) {
            return site.clone();
        }
        let site = self.find(path);
        self.found
            .borrow_mut()
            .insert(path.to_string(), site.clone());
        site
    }

    /// Where the value at `path` of a subchart's values was set: the subchart is `chain` (its
    /// names from the top chart down, as its templates' paths give them, aliases included). The
    /// user and the parent chart set it under the subchart's name (`exporter.image.tag`: a
    /// flag, a `-f` file or the parent's `values.yaml`); else it is the subchart's own
    /// `values.yaml` default, wherever the subchart is (a directory of another name, an
    /// archive).
    pub fn subchart_site(&self, chain: &[&str], path: &str) -> ValueSite {
        // `global` values are the top chart's, shared with every subchart.
        let top_level = path == "global" || path.starts_with("global.");
        // `path` as the values of the chart above the subcharts `names` set it.
        let under = |names: &[&str]| -> String {
            let names = if top_level { &[][..] } else { names };
            names
                .iter()
                .map(|c| crate::values_path::escape_values_key(c))
                .chain(std::iter::once(path.into()))
                .collect::<Vec<_>>()
                .join(".")
        };
        let site = self.site(&under(chain));
        if site.file.is_some() || site.flag.is_some() {
            return site;
        }
        // Then each chart on the way down, the nearest the top first, as Helm coalesces them:
        // `a`'s values.yaml sets `b.x` for its subchart `b`, and `b`'s own sets `x` (and each
        // may set `global` values, shared as they are).
        for depth in 1..=chain.len() {
            if let Some(found) = self.chart_default(&chain[..depth], &under(&chain[depth..])) {
                return found;
            }
        }
        site
    }

    /// Where the `values.yaml` of the chart `chain` names sets `path`, if it does.
    fn chart_default(&self, chain: &[&str], path: &str) -> Option<ValueSite> {
        let key: Vec<String> = chain.iter().map(|c| c.to_string()).collect();
        let mut subcharts = self.subcharts.borrow_mut();
        let (file, doc) = subcharts
            .entry(key)
            .or_insert_with_key(|key| {
                let (_, file, text) = self.charts.iter().find(|(c, _, _)| c == key)?;
                let doc = yaml_value::document::read_documents(text, 0)
                    .0
                    .into_iter()
                    .next()?;
                Some((file.clone(), doc))
            })
            .as_ref()?;
        let line = line_of(doc, path)?;
        Some(ValueSite {
            path: path.to_string(),
            file: Some(file.clone()),
            line: Some(line),
            flag: None,
        })
    }

    fn find(&self, path: &str) -> ValueSite {
        let mut site = ValueSite {
            path: path.to_string(),
            file: None,
            line: None,
            flag: None,
        };
        // A key sets the value when one's path tokens start the other's: `tolerations` and
        // `tolerations[0].key`, `image` and `image.tag` (token by token, not text by text).
        let Some(wanted) = values_path_tokens(path) else {
            return site;
        };
        let covers = |key: &str| {
            values_path_tokens(key)
                .is_some_and(|key| key.starts_with(&wanted) || wanted.starts_with(&key))
        };
        for (flag, arg) in self.flags.iter().rev() {
            // `a.b=1,c=2`: any of its keys may set the value, read as the flag is applied (a
            // `--set-json` value's commas are its own).
            if flag_keys(flag, arg).into_iter().any(covers) {
                site.flag = Some(format!("{flag} {arg}"));
                return site;
            }
        }
        // Latest first: the `-f` files from the last, then the chart's.
        let files: Vec<(&str, &str)> = self
            .files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .chain(self.top_chart())
            .collect();
        let parsed = self.parsed.get_or_init(|| {
            files
                .iter()
                .map(|(_, text)| {
                    yaml_value::document::read_documents(text, 0)
                        .0
                        .into_iter()
                        .next()
                })
                .collect()
        });
        let order = (0..self.files.len())
            .rev()
            .chain(self.files.len()..files.len());
        for i in order {
            if let Some(line) = parsed[i].as_ref().and_then(|doc| line_of(doc, path)) {
                site.file = Some(files[i].0.to_string());
                site.line = Some(line);
                return site;
            }
        }
        site
    }
}

/// The line of the key that holds `path` (`a.b`, `list[0]`) in a values file, if the file sets
/// it: a list item's is the line of its first key or its dash.
fn line_of(doc: &yaml_value::yaml::ParsedDoc, path: &str) -> Option<u32> {
    let (pos, exact) = yaml_value::yaml::resolve(&doc.value, &doc.pos, &path_pointer(path)?);
    let line = if pos.key_line > 0 {
        pos.key_line
    } else {
        pos.line
    };
    (exact && line > 0).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_name_the_value_they_print() {
        let src = "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n\
                   sel: {{- toYaml $.Values.nodeSelector | nindent 8 }}\nname: {{ .Release.Name }}";
        assert_eq!(
            action_values_path(src, 10).as_deref(),
            Some("image.repository")
        );
        assert_eq!(action_values_path(src, 41).as_deref(), Some("image.tag"));
        let sel = src.find("toYaml").unwrap();
        assert_eq!(
            action_values_path(src, sel).as_deref(),
            Some("nodeSelector")
        );
        let name = src.find(".Release").unwrap();
        assert_eq!(action_values_path(src, name), None);
    }

    /// The chain and the check of what precedes it find what the one regex they replace found.
    #[test]
    fn values_chains_are_found_as_the_whole_regex_finds_them() {
        let whole =
            regex::Regex::new(r"(?:^|[^\w.])\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)").unwrap();
        let actions = [
            ".Values.a",
            "$.Values.a.b",
            "x$.Values.a",
            "x.Values.a",
            "é.Values.a | .Values.b",
            "$é.Values.a",
            "_.Values.a (.Values.b)",
            "..Values.a",
            "toYaml .Values.x-y.z | nindent 2",
            "$$.Values.a",
            "include \"x\" .Values.1 .Values.ok",
            "ü$.Values.q",
            "·.Values.a",
            " .Values",
            "",
        ];
        for action in actions {
            let expected = whole
                .captures(action)
                .map(|c| c.get(1).unwrap().as_str()[1..].to_string());
            assert_eq!(action_values_path(action, 0), expected, "{action:?}");
        }
    }

    #[test]
    fn actions_that_print_dot_are_found() {
        let src = "a: {{ toYaml . | nindent 8 }}\nb: {{ .tag }}\nc: {{ $x }}\nd: {{.}}";
        assert_eq!(action_dot_field(src, 6), Some(None));
        assert_eq!(
            action_dot_field(src, src.find(".tag").unwrap()),
            Some(Some("tag".into()))
        );
        assert_eq!(action_dot_field(src, src.find("$x").unwrap()), None);
        assert_eq!(
            action_dot_field(src, src.find("{{.}}").unwrap() + 2),
            Some(None)
        );
    }

    #[test]
    fn values_paths_read_as_pointers() {
        for (path, pointer) in [
            ("image.tag", "/image/tag"),
            ("tolerations[1].key", "/tolerations/1/key"),
            ("list[0]", "/list/0"),
            (
                "nodeSelector.kubernetes\\.io/os",
                "/nodeSelector/kubernetes.io~1os",
            ),
        ] {
            assert_eq!(path_pointer(path).as_deref(), Some(pointer), "{path}");
        }
    }

    /// A sub-subchart's value: the top chart's values, then its parent's, then its own default
    /// (Helm coalesces each chart's values over its subcharts').
    #[test]
    fn nested_subchart_values_are_found_in_each_chart_on_the_way_down() {
        let charts = |top: &str, a: &str| -> Vec<ChartValues> {
            vec![
                (Vec::new(), "top/values.yaml".into(), top.into()),
                (
                    vec!["a".into()],
                    "top/charts/a/values.yaml".into(),
                    a.into(),
                ),
                (
                    vec!["a".into(), "b".into()],
                    "top/charts/a/charts/b/values.yaml".into(),
                    "image: y\nglobal:\n  registry: r\n".into(),
                ),
            ]
        };
        let place = |s: ValueSite| (s.path, s.file, s.line);
        let sources =
            ValuesSources::new(Vec::new(), Vec::new(), charts("x: 1\n", "b:\n  image: z\n"));
        assert_eq!(
            place(sources.subchart_site(&["a", "b"], "image")),
            (
                "b.image".into(),
                Some("top/charts/a/values.yaml".into()),
                Some(2)
            )
        );
        assert_eq!(
            place(sources.subchart_site(&["a", "b"], "global.registry")),
            (
                "global.registry".into(),
                Some("top/charts/a/charts/b/values.yaml".into()),
                Some(3)
            )
        );
        let sources = ValuesSources::new(Vec::new(), Vec::new(), charts("x: 1\n", "c: 2\n"));
        assert_eq!(
            place(sources.subchart_site(&["a", "b"], "image")),
            (
                "image".into(),
                Some("top/charts/a/charts/b/values.yaml".into()),
                Some(1)
            )
        );
        let sources = ValuesSources::new(
            Vec::new(),
            Vec::new(),
            charts("a:\n  b:\n    image: w\n", "b:\n  image: z\n"),
        );
        assert_eq!(
            place(sources.subchart_site(&["a", "b"], "image")),
            ("a.b.image".into(), Some("top/values.yaml".into()), Some(3))
        );
    }

    #[test]
    fn sites_follow_helms_precedence() {
        let sources = ValuesSources::new(
            vec![("--set".into(), "image.tag=2,replicas=3".into())],
            vec![("prod.yaml".into(), "image:\n  repository: x\n".into())],
            vec![(
                Vec::new(),
                "c/values.yaml".into(),
                "image:\n  repository: a\n  tag: '1'\nnodeSelector: {}\n".into(),
            )],
        );
        let tag = sources.site("image.tag");
        assert_eq!(tag.flag.as_deref(), Some("--set image.tag=2,replicas=3"));
        let repo = sources.site("image.repository");
        assert_eq!(
            (repo.file.as_deref(), repo.line),
            (Some("prod.yaml"), Some(2))
        );
        let sel = sources.site("nodeSelector");
        assert_eq!(
            (sel.file.as_deref(), sel.line),
            (Some("c/values.yaml"), Some(4))
        );
        let none = sources.site("missing");
        assert!(none.file.is_none() && none.flag.is_none());
        // A flag setting a list sets its items' fields (values paths index lists); one setting
        // a key that only begins with the same letters does not.
        let sources = ValuesSources::new(
            vec![
                ("--set-json".into(), r#"tolerations=[{"key":"os"}]"#.into()),
                ("--set".into(), "imagePullPolicy=Always".into()),
            ],
            Vec::new(),
            vec![(
                Vec::new(),
                "c/values.yaml".into(),
                "image:\n  tag: '1'\n".into(),
            )],
        );
        let key = sources.site("tolerations[0].key");
        assert_eq!(
            key.flag.as_deref(),
            Some(r#"--set-json tolerations=[{"key":"os"}]"#)
        );
        let tag = sources.site("image.tag");
        assert!(tag.flag.is_none(), "{:?}", tag.flag);
        assert_eq!(
            (tag.file.as_deref(), tag.line),
            (Some("c/values.yaml"), Some(2))
        );
    }
}
