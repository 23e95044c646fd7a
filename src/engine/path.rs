//! JSONPath queries of rules (`each: $.spec…`, `query(…)`), compiled once when a rule loads.
//!
//! Parsing, and any query with filters, slices, negative indices or descendants, is
//! jsonpath-rust's. The queries rules actually write are plain child paths (`$.volumes[*]`,
//! `$['containers','initContainers'][*].volumeMounts[*]`); those are walked here by reference,
//! in the order RFC 9535 gives, with each match's JSON pointer built as it goes. (Why by hand:
//! jsonpath-rust clones intermediate nodes and formats every match's path as a string to be
//! parsed back into a pointer, and these queries run for every pod.)

use crate::value::Value;
use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};

use crate::manifest::escape_pointer_token;

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

impl Path {
    /// Parses a JSONPath (jsonpath-rust's parser and error messages).
    pub fn parse(text: &str) -> Result<Path, String> {
        let query = jsonpath_rust::parser::parse_json_path(text).map_err(|e| e.to_string())?;
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
    pub fn matches<'v>(&self, root: &'v Value, prefix: &str) -> Vec<(String, &'v Value)> {
        match self {
            Path::Children(segments) => {
                let mut nodes = vec![(prefix.to_string(), root)];
                for selectors in segments {
                    let mut next = Vec::new();
                    for (pointer, value) in &nodes {
                        for selector in selectors {
                            select(selector, pointer, value, &mut next);
                        }
                    }
                    nodes = next;
                }
                nodes
            }
            Path::General(query) => jsonpath_rust::query::js_path_process(query, root)
                .map(|found| {
                    found
                        .into_iter()
                        .map(|m| {
                            let value = m.clone().val();
                            let pointer =
                                format!("{prefix}{}", super::jsonpath_to_pointer(&m.path()));
                            (pointer, value)
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

fn select<'v>(child: &Child, pointer: &str, value: &'v Value, out: &mut Vec<(String, &'v Value)>) {
    // Built by hand: `format!` cost more than the walk itself.
    let at = |token: &str| {
        let mut p = String::with_capacity(pointer.len() + 1 + token.len());
        p.push_str(pointer);
        p.push('/');
        p.push_str(token);
        p
    };
    match (child, value) {
        (Child::Name(name), Value::Object(map)) => {
            if let Some(v) = map.get(name) {
                out.push((at(&escape_pointer_token(name)), v));
            }
        }
        (Child::Index(i), Value::Array(items)) => {
            if let Some(v) = items.get(*i) {
                out.push((at(itoa::Buffer::new().format(*i)), v));
            }
        }
        (Child::Wildcard, Value::Array(items)) => {
            out.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (at(itoa::Buffer::new().format(i)), v)),
            );
        }
        (Child::Wildcard, Value::Object(map)) => {
            out.extend(map.iter().map(|(k, v)| (at(&escape_pointer_token(k)), v)));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

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
