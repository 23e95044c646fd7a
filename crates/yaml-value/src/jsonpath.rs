//! JSONPath queries of rules (`each: $.spec…`, `query(…)`), compiled once when a rule loads.
//!
//! Parsing, and any query with filters, slices, negative indices or descendants, is
//! jsonpath-rust's. The queries rules actually write are plain child paths (`$.volumes[*]`,
//! `$['containers','initContainers'][*].volumeMounts[*]`); those are walked here by reference,
//! in the order RFC 9535 gives; a match keeps the steps that reached it, and its JSON pointer
//! is built from them only when asked for ([`Matches::pointer`]). (Why by hand:
//! jsonpath-rust clones intermediate nodes and formats every match's path as a string to be
//! parsed back into a pointer, and these queries run for every pod.)

use super::Doc;
use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};

use super::escape_pointer_token;

/// A compiled JSONPath.
#[derive(Debug, Clone)]
pub enum Path {
    /// Child segments only: each segment's selectors, applied in order.
    Children(Vec<Vec<Child>>),
    /// Anything else, evaluated by jsonpath-rust.
    General(Box<JpQuery>),
}

/// One selector of a child segment.
#[derive(Debug, Clone)]
pub enum Child {
    Name(String),
    Wildcard,
    Index(usize),
}

/// A JSONPath that does not parse, in jsonpath-rust's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(transparent)]
pub struct ParseError(#[from] jsonpath_rust::parser::errors::JsonPathError);

impl Path {
    /// Parses a JSONPath (jsonpath-rust's parser and error messages).
    pub fn parse(text: &str) -> Result<Path, ParseError> {
        let query = jsonpath_rust::parser::parse_json_path(text)?;
        Ok(Path::compile(query))
    }

    fn compile(query: JpQuery) -> Path {
        let child = |s: &Selector| match s {
            Selector::Name(n) => Some(Child::Name(n.clone())),
            Selector::Wildcard => Some(Child::Wildcard),
            Selector::Index(i) => usize::try_from(*i).ok().map(Child::Index),
            _ => None,
        };
        let segments: Option<Vec<Vec<Child>>> = query
            .segments
            .iter()
            .map(|segment| match segment {
                Segment::Selector(s) => child(s).map(|c| vec![c]),
                Segment::Selectors(list) => list.iter().map(child).collect(),
                Segment::Descendant(_) => None,
            })
            .collect();
        match segments {
            Some(segments) => Path::Children(segments),
            None => Path::General(Box::new(query)),
        }
    }

    /// The matches in `root`, in order, each with its JSON pointer (prefixed with `prefix`).
    pub fn matches<'v>(&self, root: &'v Doc<'v>, prefix: &str) -> Vec<(String, &'v Doc<'v>)> {
        let found = self.find(root);
        (0..found.len())
            .map(|i| (found.pointer(i, prefix), found.value(i)))
            .collect()
    }

    /// The matches in `root`, in order; a match's JSON pointer is built only when asked for
    /// ([`Matches::pointer`]): rules read the pointers of the few matches they report, and
    /// building every match's (and every intermediate node's) would cost more than the walk.
    pub fn find<'v>(&self, root: &'v Doc<'v>) -> Matches<'v> {
        match self {
            Path::Children(segments) => {
                let mut steps: Vec<(u32, Step<'v>)> = Vec::new();
                // The nodes reached so far: their last step (`NO_STEP` for the root) and value.
                let mut nodes: Vec<(u32, &'v Doc<'v>)> = vec![(NO_STEP, root)];
                let mut next = Vec::new();
                for selectors in segments {
                    for &(at, value) in &nodes {
                        for selector in selectors {
                            select(selector, at, value, &mut steps, &mut next);
                        }
                    }
                    std::mem::swap(&mut nodes, &mut next);
                    next.clear();
                }
                Matches {
                    steps,
                    found: nodes,
                }
            }
            Path::General(query) => {
                let mut steps = Vec::new();
                let found = jsonpath_rust::query::js_path_process(query, root)
                    .map(|found| {
                        found
                            .into_iter()
                            .map(|m| {
                                let pointer = jsonpath_to_pointer(&m.clone().path());
                                steps.push((NO_STEP, Step::Pointer(pointer)));
                                ((steps.len() - 1) as u32, m.val())
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Matches { steps, found }
            }
        }
    }
}

/// The parent of a first step (the root has none).
const NO_STEP: u32 = u32::MAX;

/// One step of a match's location below the root.
#[derive(Debug)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
    /// A whole pointer below the root, already escaped (jsonpath-rust's matches).
    Pointer(String),
}

/// A query's matches: each one's value, and its location as a chain of steps shared with the
/// other matches below the same nodes.
#[derive(Debug)]
pub struct Matches<'v> {
    /// Every step taken, each with the index of the step before it.
    steps: Vec<(u32, Step<'v>)>,
    /// Each match's last step and its value.
    found: Vec<(u32, &'v Doc<'v>)>,
}

impl<'v> Matches<'v> {
    pub fn len(&self) -> usize {
        self.found.len()
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    pub fn value(&self, index: usize) -> &'v Doc<'v> {
        self.found[index].1
    }

    /// The JSON pointer of match `index`, prefixed with `prefix`.
    pub fn pointer(&self, index: usize, prefix: &str) -> String {
        let mut chain: smallvec::SmallVec<[&Step<'v>; 8]> = smallvec::SmallVec::new();
        let mut at = self.found[index].0;
        while at != NO_STEP {
            let (parent, step) = &self.steps[at as usize];
            chain.push(step);
            at = *parent;
        }
        let mut out = String::with_capacity(prefix.len() + 16 * chain.len());
        out.push_str(prefix);
        for step in chain.iter().rev() {
            match step {
                Step::Key(key) => {
                    out.push('/');
                    out.push_str(&escape_pointer_token(key));
                }
                Step::Index(i) => {
                    out.push('/');
                    out.push_str(itoa::Buffer::new().format(*i));
                }
                Step::Pointer(p) => out.push_str(p),
            }
        }
        out
    }
}

/// Applies one selector to the node whose last step is `at`, recording the steps it takes.
fn select<'v>(
    child: &Child,
    at: u32,
    value: &'v Doc<'v>,
    steps: &mut Vec<(u32, Step<'v>)>,
    out: &mut Vec<(u32, &'v Doc<'v>)>,
) {
    let mut step = |step: Step<'v>, v: &'v Doc<'v>| {
        steps.push((at, step));
        out.push(((steps.len() - 1) as u32, v));
    };
    match (child, value) {
        (Child::Name(name), Doc::Object(map)) => {
            if let Some((key, v)) = map.get_key_value(name) {
                step(Step::Key(key), v);
            }
        }
        (Child::Index(i), Doc::Array(items)) => {
            if let Some(v) = items.get(*i) {
                step(Step::Index(*i), v);
            }
        }
        (Child::Wildcard, Doc::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                step(Step::Index(i), v);
            }
        }
        (Child::Wildcard, Doc::Object(map)) => {
            for (k, v) in map.iter() {
                step(Step::Key(k), v);
            }
        }
        _ => {}
    }
}

/// Converts a normalised JSONPath (`$['a'][0]['b/c']`) to a JSON pointer (`/a/0/b~1c`).
fn jsonpath_to_pointer(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path.strip_prefix('$').unwrap_or(path);
    while let Some(r) = rest.strip_prefix('[') {
        if let Some(r) = r.strip_prefix('\'') {
            let mut key = String::new();
            let mut chars = r.char_indices();
            let mut end = r.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            key.push(n);
                        }
                    }
                    '\'' => {
                        end = i;
                        break;
                    }
                    _ => key.push(c),
                }
            }
            out.push('/');
            out.push_str(&escape_pointer_token(&key));
            rest = r.get(end + 2..).unwrap_or("");
        } else {
            let close = r.find(']').unwrap_or(r.len());
            out.push('/');
            out.push_str(&r[..close]);
            rest = r.get(close + 1..).unwrap_or("");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    #[test]
    fn jsonpath_paths_become_pointers() {
        assert_eq!(jsonpath_to_pointer("$['a'][0]['b/c']"), "/a/0/b~1c");
        assert_eq!(jsonpath_to_pointer("$['it\\'s']"), "/it's");
    }

    /// The walk agrees with jsonpath-rust, match for match, on the queries it takes.
    #[test]
    fn child_paths_agree_with_jsonpath_rust() {
        let docs = [
            json!({"containers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "C:\\x"}, {"name": "w/~"}]},
                                  {"name": "b"}],
                   "initContainers": [{"volumeMounts": [{"name": "i"}]}],
                   "volumes": [{"name": "v", "emptyDir": {"medium": "Memory"}}, 3, null],
                   "nodeSelector": {"beta.kubernetes.io/os": "windows", "a/b": "c"}}),
            json!([1, [2, 3], {"x": {"y": [4]}}]),
            json!("scalar"),
            json!({"containers": {"not": "a list"}, "volumes": "nope"}),
        ];
        let queries = [
            "$.volumes[*]",
            "$['containers','initContainers','ephemeralContainers'][*].volumeMounts[*]",
            "$['containers','initContainers','ephemeralContainers'][*].volumeDevices",
            "$.nodeSelector['beta.kubernetes.io/os']",
            "$.nodeSelector['a/b']",
            "$.nodeSelector.*",
            "$[*]",
            "$[1][0]",
            "$[2].x.y[0]",
            "$.containers[1].name",
            "$.containers[5]",
            "$",
        ];
        for query in queries {
            let path = Path::parse(query).unwrap();
            assert!(matches!(path, Path::Children(_)), "{query} takes the walk");
            let general = Path::General(Box::new(
                jsonpath_rust::parser::parse_json_path(query).unwrap(),
            ));
            for doc in &docs {
                assert_eq!(
                    path.matches(doc, "/spec"),
                    general.matches(doc, "/spec"),
                    "{query} on {doc}"
                );
            }
        }
    }

    #[test]
    fn other_queries_go_to_jsonpath_rust() {
        for query in [
            "$..name",
            "$.volumes[?@.name == 'v']",
            "$.a[-1]",
            "$.a[0:2]",
        ] {
            assert!(
                matches!(Path::parse(query).unwrap(), Path::General(_)),
                "{query}"
            );
        }
        let doc = json!({"a": [{"name": "x"}, {"name": "y"}]});
        let names: Vec<_> = Path::parse("$.a[?@.name == 'y']")
            .unwrap()
            .matches(&doc, "")
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(names, vec!["/a/1".to_string()]);
    }
}
