//! Helm's values: the user's (`-f` files in order, then `--set-json`, `--set`, `--set-string`,
//! `--set-file`), merged over the chart's and its subcharts' defaults in Helm's order, with
//! dependency conditions, tags, aliases, `import-values` and globals.
//!
//! Numbers keep Helm's types: a number from YAML or JSON is a Go `float64` (kept here as a JSON
//! float), one from `--set` an `int64` (a JSON integer). [`super::template::Value::from_json`]
//! turns them into the template's `Float` and `Int64`.

use crate::error::Error;
use serde_json::{Map, Value as Json};

use super::loaded::Chart;

pub type Values = Map<String, Json>;

/// Every number of a YAML/JSON document as a float, as Go's `json.Unmarshal` reads it.
pub fn floats(v: Json) -> Json {
    match v {
        Json::Number(n) if !n.is_f64() => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Json::Number(n), Json::Number),
        Json::Array(a) => Json::Array(a.into_iter().map(floats).collect()),
        Json::Object(m) => Json::Object(m.into_iter().map(|(k, v)| (k, floats(v))).collect()),
        other => other,
    }
}

/// Reads YAML as Helm does (`sigs.k8s.io/yaml`: go-yaml v2's YAML 1.1, so `yes` and `y` are
/// true, then JSON, so every number is a float). The first document counts.
pub fn read_yaml(text: &str) -> Result<Json, yaml_value::yaml::YamlError> {
    // Most values files are plain block YAML with comments, which the fast reader takes.
    let (docs, error) = yaml_value::document::read_documents_go_yaml_v2(text);
    if let Some(e) = error {
        return Err(e);
    }
    Ok(docs
        .into_iter()
        .next()
        .map_or(Json::Null, |d| floats((&d.value).into())))
}

/// Parses a `-f` values file; `shown` names it, as Helm does.
pub fn parse_values_file(text: &str, shown: &str) -> Result<Values, Error> {
    let helm = format!("failed to parse {shown}: cannot unmarshal yaml document: ");
    parse_yaml_map(text, shown, &helm, "map[string]interface {}")
}

/// Reads a YAML file that must hold a map. Errors carry the file and place, and Helm's words:
/// `helm` (what Helm says before them: `cannot load values.yaml: …`), then go-yaml's problem,
/// or Go's JSON decoder refusing a document that is not a map (into `go_type`).
pub fn parse_yaml_map(text: &str, file: &str, helm: &str, go_type: &str) -> Result<Values, Error> {
    match read_yaml(text) {
        Ok(Json::Object(m)) => Ok(m),
        Ok(Json::Null) => Ok(Map::new()),
        Ok(other) => Err(Error::new(
            file,
            format!(
                "{helm}{}",
                json_decode_error(&format!(
                    "{} into Go value of type {go_type}",
                    go_json_type(&other)
                ))
            ),
        )),
        Err(e) => Err(Error {
            file: file.to_string(),
            line: Some(e.line),
            column: Some(e.col),
            message: format!("{helm}{}", yaml_to_json_error(&e)),
        }),
    }
}

/// sigs.k8s.io/yaml's words for YAML it can't read (go-yaml's problem inside).
pub(crate) fn yaml_to_json_error(e: &yaml_value::yaml::YamlError) -> String {
    format!("error converting YAML to JSON: {}", e.go_yaml_text())
}

/// How Go's JSON decoder names a JSON value's type in its errors.
pub(crate) fn go_json_type(v: &Json) -> &'static str {
    match v {
        Json::String(_) => "string",
        Json::Number(_) => "number",
        Json::Bool(_) => "bool",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
        Json::Null => "null",
    }
}

/// Go's JSON decoder refusing a value, as sigs.k8s.io/yaml reports it: `what` is
/// `{type} into Go value of type …` or `… into Go struct field …`.
pub(crate) fn json_decode_error(what: &str) -> String {
    format!("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {what}")
}

/// Helm's `mergeMaps`: `b` over `a`, maps merged key by key, everything else replaced.
pub fn merge_maps(a: &mut Values, b: Values) {
    for (k, v) in b {
        match (a.get_mut(&k), v) {
            (Some(Json::Object(dst)), Json::Object(src)) => merge_maps(dst, src),
            (_, v) => {
                a.insert(k, v);
            }
        }
    }
}

/// What Helm logs while it prepares the values (`printf` in
/// `pkg/chart/common/util/coalesce.go`, `slog.Warn` for a missing import), as its default
/// logger writes the lines to stderr: once for every time Helm coalesces (see
/// [`process_dependencies`]).
pub type Warnings = Vec<String>;

/// A line of Helm's logger (`slog`'s text handler, without the time): the message quoted as
/// Go's `strconv.Quote` quotes it, then `key=value` attributes.
pub(crate) fn log_line(level: &str, message: &str, attributes: &[(&str, &str)]) -> String {
    // slog's `needsQuoting`: the empty string, a space, `=`, `"`, a control character, or any
    // other space or unprintable character.
    let quoted = |text: &str| {
        let plain = !text.is_empty()
            && text.chars().all(|c| {
                !(c == ' ' || c == '=' || c == '"' || c.is_control() || c.is_whitespace())
            });
        if plain {
            text.to_string()
        } else {
            crate::template::gostring::go_quote(text)
        }
    };
    let mut line = format!("level={level} msg={}", quoted(message));
    for (key, value) in attributes {
        line += &format!(" {key}={}", quoted(value));
    }
    line
}

fn info(log: &mut Warnings, message: String) {
    log.push(log_line("INFO", &message, &[]));
}

/// Chart defaults under the user's values, subcharts included (Helm's `CoalesceValues`).
pub fn coalesce(chart: &Chart, user: &Values, log: &mut Warnings) -> Result<Values, Error> {
    coalesce_with(chart, user, false, log)
}

/// `CoalesceValues` (`merge` false: a `null` deletes) or `MergeValues` (`merge`: nulls kept).
fn coalesce_with(
    chart: &Chart,
    user: &Values,
    merge: bool,
    log: &mut Warnings,
) -> Result<Values, Error> {
    let mut dest = user.clone();
    coalesce_chart(chart, &mut dest, "", merge, log).map_err(|e| Error::new(chart.name(), e))?;
    Ok(dest)
}

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// A value as Go's `%v` prints it in Helm's warnings.
fn go_value(v: &Json) -> String {
    let mut text = String::new();
    crate::template::value::Value::from_json(v).write_go(&mut text);
    text
}

/// Helm's `coalesce`: the chart's own defaults (`coalesceValues`), then each subchart's
/// (`coalesceDeps`) under its name, with the globals passed down.
fn coalesce_chart(
    chart: &Chart,
    dest: &mut Values,
    prefix: &str,
    merge: bool,
    log: &mut Warnings,
) -> Result<(), String> {
    coalesce_defaults(chart, dest, prefix, merge, log);
    for sub in &chart.subcharts {
        let name = sub.name().to_string();
        match dest.get(&name) {
            None => {
                dest.insert(name.clone(), Json::Object(Map::new()));
            }
            Some(Json::Object(_)) => {}
            Some(other) => {
                let shown = crate::template::funcs::printf(
                    "%t",
                    &[crate::template::value::Value::from_json(other)],
                );
                return Err(format!("type mismatch on {name}: {shown}"));
            }
        }
        let sub_prefix = concat_prefix(prefix, chart.name());
        let globals = dest.get("global").cloned();
        if let Some(Json::Object(sub_values)) = dest.get_mut(&name) {
            coalesce_globals(sub_values, globals.as_ref(), &sub_prefix, log);
            coalesce_chart(sub, sub_values, &sub_prefix, merge, log)?;
        }
    }
    Ok(())
}

/// Helm's `coalesceValues`: a chart's `values.yaml` under `dest`. Missing keys are copied
/// (when coalescing, without the defaults' nulls), tables merged, and a `null` in `dest`
/// removes the default when coalescing.
fn coalesce_defaults(
    chart: &Chart,
    dest: &mut Values,
    prefix: &str,
    merge: bool,
    log: &mut Warnings,
) {
    let sub_prefix = concat_prefix(prefix, chart.name());
    for (key, default) in chart.values.iter() {
        match dest.get_mut(key) {
            Some(Json::Null) if !merge => {
                dest.remove(key);
            }
            Some(Json::Object(d)) => match default {
                Json::Object(src) => {
                    // A subchart's table is merged keeping nulls, which delete only later.
                    let merge = merge || chart.subcharts.iter().any(|s| s.name() == key);
                    let src = if merge {
                        src.clone()
                    } else {
                        without_nulls_in(src)
                    };
                    coalesce_tables(d, src, &concat_prefix(&sub_prefix, key), merge, log);
                }
                Json::Null => {}
                _ => info(
                    log,
                    format!("warning: skipped value for {sub_prefix}.{key}: Not a table."),
                ),
            },
            Some(_) => {}
            None if merge => {
                dest.insert(key.clone(), default.clone());
            }
            None => {
                if let Some(v) = without_nulls(default) {
                    dest.insert(key.clone(), v);
                }
            }
        }
    }
}

/// A default as Helm copies it: `null`s in maps are dropped (they only delete), in lists kept.
fn without_nulls(v: &Json) -> Option<Json> {
    match v {
        Json::Null => None,
        Json::Object(m) => Some(Json::Object(without_nulls_in(m))),
        other => Some(other.clone()),
    }
}

fn without_nulls_in(m: &Values) -> Values {
    m.iter()
        .filter_map(|(k, v)| without_nulls(v).map(|v| (k.clone(), v)))
        .collect()
}

/// Helm's `coalesceTablesFullKey`: `src` under `dst`, `prefix` naming where in warnings.
fn coalesce_tables(dst: &mut Values, src: Values, prefix: &str, merge: bool, log: &mut Warnings) {
    for (key, val) in src {
        let full_key = concat_prefix(prefix, &key);
        match dst.get_mut(&key) {
            // A user's `null` deletes the chart's default (not when merging).
            Some(Json::Null) if !merge && !val.is_null() => {
                dst.remove(&key);
            }
            None => {
                dst.insert(key, val);
            }
            Some(Json::Object(d)) => match val {
                Json::Object(s) => coalesce_tables(d, s, &full_key, merge, log),
                Json::Null => {}
                other => info(
                    log,
                    format!(
                        "warning: destination for {full_key} is a table. Ignoring non-table value ({})",
                        go_value(&other)
                    ),
                ),
            },
            Some(_) => {
                if val.is_object() {
                    info(
                        log,
                        format!(
                            "warning: cannot overwrite table with non table for {full_key} ({})",
                            go_value(&val)
                        ),
                    );
                }
            }
        }
    }
}

/// Helm's `coalesceGlobals`: the parent's `global` over the subchart's, tables merged
/// top-down.
fn coalesce_globals(
    dest: &mut Values,
    parent_global: Option<&Json>,
    prefix: &str,
    log: &mut Warnings,
) {
    let mut dg = match dest.get("global") {
        Some(Json::Object(m)) => m.clone(),
        Some(_) => {
            info(
                log,
                "warning: skipping globals because destination global is not a table.".into(),
            );
            return;
        }
        None => Map::new(),
    };
    let sg = match parent_global {
        Some(Json::Object(m)) => m.clone(),
        Some(_) => {
            info(
                log,
                "warning: skipping globals because source global is not a table.".into(),
            );
            return;
        }
        None => Map::new(),
    };
    for (key, val) in sg {
        match val {
            Json::Object(vv) => match dg.get(&key) {
                None => {
                    dg.insert(key, Json::Object(vv));
                }
                Some(Json::Object(destv)) => {
                    let mut vv = vv;
                    let destv = destv.clone();
                    coalesce_tables(&mut vv, destv, &concat_prefix(prefix, &key), true, log);
                    dg.insert(key, Json::Object(vv));
                }
                Some(_) => info(
                    log,
                    format!("Conflict: cannot merge map onto non-map for {key:?}. Skipping."),
                ),
            },
            other => {
                if matches!(dg.get(&key), Some(Json::Object(_))) {
                    info(log, format!("key {key} is table. Skipping"));
                } else {
                    dg.insert(key, other);
                }
            }
        }
    }
    dest.insert("global".into(), Json::Object(dg));
}

/// The value at a dotted path (`sub.enabled`).
fn lookup_path<'v>(values: &'v Values, path: &str) -> Option<&'v Json> {
    let mut parts = path.split('.');
    let mut cur = values.get(parts.next()?)?;
    for part in parts {
        cur = cur.as_object()?.get(part)?;
    }
    Some(cur)
}

/// Applies aliases, conditions and tags to a chart's dependencies, recursively, and imports
/// values from enabled subcharts (Helm's `ProcessDependenciesWithMerge`).
pub fn process_dependencies(
    chart: &mut Chart,
    user: &Values,
    log: &mut Warnings,
) -> Result<(), Error> {
    let failed = |e: Error| Error {
        message: format!("chart dependencies processing failed: {}", e.message),
        ..e
    };
    enable_dependencies(chart, user, "", log).map_err(failed)?;
    import_values(chart, log).map_err(failed)
}

/// Helm's `processDependencyEnabled`: each declared dependency takes the first subchart of its
/// name whose version satisfies its constraint, renamed to its alias; a subchart no
/// dependency takes that way is rendered as it is, under its own name. Tags, then conditions,
/// disable dependencies, and a disabled one removes every subchart of its (alias) name.
/// Then the same for each subchart kept, with its values' path.
fn enable_dependencies(
    chart: &mut Chart,
    values: &Values,
    path: &str,
    log: &mut Warnings,
) -> Result<(), Error> {
    if chart.dependencies.is_empty() {
        // Helm stops at a chart that declares no dependencies (its subcharts included).
        return Ok(());
    }
    // Each level coalesces its chart over what the level above coalesced.
    let merged = &coalesce(chart, values, log)?;
    let compatible = |dep: &crate::loaded::Dependency, sub: &Chart| {
        sub.name() == dep.name && is_compatible_range(&dep.version, sub.version())
    };
    let mut candidates: Vec<Chart> = chart
        .subcharts
        .iter()
        .filter(|sub| !chart.dependencies.iter().any(|d| compatible(d, sub)))
        .cloned()
        .collect();
    for dep in &chart.dependencies {
        if let Some(sub) = chart.subcharts.iter().find(|sub| compatible(dep, sub)) {
            let mut sub = sub.clone();
            if let Some(alias) = &dep.alias {
                std::sync::Arc::make_mut(&mut sub.metadata)
                    .insert("name".into(), Json::String(alias.clone()));
            }
            candidates.push(sub);
        }
    }
    // Tags first; a condition that resolves to a bool decides over them.
    let tags = lookup_path(merged, "tags").and_then(Json::as_object);
    let mut disabled: Vec<String> = Vec::new();
    for dep in &mut chart.dependencies {
        let (mut has_true, mut has_false) = (false, false);
        for tag in &dep.tags {
            match tags.and_then(|t| t.get(tag)) {
                Some(Json::Bool(true)) => has_true = true,
                Some(Json::Bool(false)) => has_false = true,
                _ => {}
            }
        }
        let mut enabled = !has_false || has_true;
        if let Some(condition) = &dep.condition {
            for c in condition.split(',') {
                let full = format!("{path}{}", c.trim());
                if let Some(Json::Bool(b)) = lookup_path(merged, &full) {
                    enabled = *b;
                    break;
                }
            }
        }
        dep.enabled = enabled;
        if !enabled {
            disabled.push(dep.alias.clone().unwrap_or_else(|| dep.name.clone()));
        }
    }
    let mut kept: Vec<Chart> = candidates
        .into_iter()
        .filter(|sub| !disabled.iter().any(|d| d == sub.name()))
        .collect();
    for sub in &mut kept {
        let sub_path = format!("{path}{}.", sub.name());
        enable_dependencies(sub, merged, &sub_path, log)?;
    }
    chart.subcharts = kept;
    Ok(())
}

/// Helm's `IsCompatibleRange`: whether `version` satisfies `constraint`; a version or
/// constraint that doesn't parse satisfies nothing, and an empty constraint is `*`.
fn is_compatible_range(constraint: &str, version: &str) -> bool {
    let constraint = if constraint.trim().is_empty() {
        "*"
    } else {
        constraint
    };
    crate::template::semver::matches(constraint, version).unwrap_or(false)
}

/// Helm's `processDependencyImportValues`, bottom-up: a chart that declares dependencies
/// takes its subcharts' defaults into its own (`MergeValues`), under what its dependencies'
/// `import-values` copy up from them (its own values, then earlier imports, win).
fn import_values(chart: &mut Chart, log: &mut Warnings) -> Result<(), Error> {
    for sub in &mut chart.subcharts {
        import_values(sub, log)?;
    }
    if chart.dependencies.is_empty() {
        return Ok(());
    }
    let merged = coalesce_with(chart, &Map::new(), true, log)?;
    let mut imported = Map::new();
    for dep in chart.dependencies.iter().filter(|d| d.enabled) {
        let name = dep.alias.as_deref().unwrap_or(&dep.name);
        for spec in &dep.import_values {
            let (child, parent, missing) = match spec {
                Json::String(s) => (
                    format!("exports.{s}"),
                    ".".to_string(),
                    "ImportValues missing table",
                ),
                Json::Object(m) => {
                    let text = |key: &str| m.get(key).map_or("<nil>".to_string(), go_value);
                    (
                        text("child"),
                        text("parent"),
                        "ImportValues missing table from chart",
                    )
                }
                _ => continue,
            };
            let table = match values_table(&merged, &format!("{name}.{child}")) {
                Ok(table) => table,
                Err(key) => {
                    let error = format!("{key:?} is not a table");
                    let attributes: &[(&str, &str)] = if spec.is_string() {
                        &[("error", &error)]
                    } else {
                        &[("chart", name), ("error", &error)]
                    };
                    log.push(log_line("WARN", missing, attributes));
                    continue;
                }
            };
            // Helm's `pathToMap`: `.` is the top; any other path nests, empty parts included.
            let mut wrapped = Json::Object(table);
            if parent != "." {
                for part in parent.split('.').rev() {
                    let mut m = Map::new();
                    m.insert(part.to_string(), wrapped);
                    wrapped = Json::Object(m);
                }
            }
            if let Json::Object(m) = wrapped {
                coalesce_tables(&mut imported, m, "", true, log);
            }
        }
    }
    let mut values = merged;
    coalesce_tables(&mut values, imported, "", true, log);
    chart.values = std::sync::Arc::new(values);
    Ok(())
}

/// Helm's `Values.Table`: the table at a dotted path, or the key where it is not one.
fn values_table(values: &Values, path: &str) -> Result<Values, String> {
    let mut table = values;
    for key in path.split('.') {
        match table.get(key) {
            Some(Json::Object(m)) => table = m,
            _ => return Err(key.to_string()),
        }
    }
    Ok(table.clone())
}

/// How a `--set` value is typed.
#[derive(Clone, Copy, PartialEq)]
pub enum SetKind {
    /// `--set`: `true`/`false` bools, `null`, integers as `int64`, the rest strings.
    Typed,
    /// `--set-string`: always strings.
    String,
    /// `--set-json`: the value is JSON.
    Json,
}

/// A `--set`-style argument that can't be applied, in Helm's words where it has them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetError {
    #[error("key {0:?} has no value")]
    NoValue(String),
    #[error("key {0:?} has an unterminated list")]
    UnterminatedList(String),
    #[error("invalid JSON in --set-json value {value:?}: {message}")]
    SetJson { value: String, message: String },
    #[error("invalid JSON {value:?}: {message}")]
    Json { value: String, message: String },
    #[error("empty key")]
    EmptyKey,
    #[error(
        "value name nested level is greater than maximum supported nested level of \
         {MAX_NESTED_NAME_LEVEL}"
    )]
    TooDeep,
    #[error(transparent)]
    Path(#[from] crate::values_path::PathError),
}

/// Applies one `--set`-style argument (`a.b=1,c[0]=x`) to `values`.
pub fn apply_set(values: &mut Values, arg: &str, kind: SetKind) -> Result<(), SetError> {
    for (key, raw) in assignments(arg, kind)? {
        set_path(values, key, typed(raw, kind)?)?;
    }
    Ok(())
}

/// The `key=value` assignments of one `--set`-style argument, as written (keys still escaped):
/// `a.b=1,c={x,y}` is `a.b` = `1` and `c` = `{x,y}`; a `--set-json` value ends where its JSON
/// does, commas and all.
pub fn assignments(arg: &str, kind: SetKind) -> Result<Vec<(&str, &str)>, SetError> {
    let mut out = Vec::new();
    let mut rest = arg;
    while !rest.is_empty() {
        let (key, after_key) = split_unescaped(rest, &['=', ',']);
        let Some(after_key) = after_key.strip_prefix('=') else {
            return Err(SetError::NoValue(unescape(key)));
        };
        let (raw, next) = if kind == SetKind::Json {
            json_value_end(after_key)?
        } else if after_key.starts_with('{') {
            match after_key.find('}') {
                Some(end) => (&after_key[..=end], &after_key[end + 1..]),
                None => return Err(SetError::UnterminatedList(unescape(key))),
            }
        } else {
            split_unescaped(after_key, &[','])
        };
        out.push((key, raw));
        rest = next.strip_prefix(',').unwrap_or(next);
    }
    Ok(out)
}

/// The keys one argument of a `--set`-style flag (`--set`, `--set-json`, `--set-string`,
/// `--set-file`) sets, read as the flag is applied: `--set-file` takes one `KEY=FILE`. None for
/// an argument that does not read.
pub fn flag_keys<'a>(flag: &str, arg: &'a str) -> Vec<&'a str> {
    let kind = match flag {
        "--set" => SetKind::Typed,
        "--set-json" => SetKind::Json,
        "--set-string" => SetKind::String,
        _ => {
            return arg
                .split_once('=')
                .map(|(key, _)| vec![key])
                .unwrap_or_default();
        }
    };
    assignments(arg, kind)
        .map(|pairs| pairs.into_iter().map(|(key, _)| key).collect())
        .unwrap_or_default()
}

/// The text up to the first unescaped stop character, and the rest from it.
fn split_unescaped<'a>(s: &'a str, stops: &[char]) -> (&'a str, &'a str) {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if stops.contains(&c) {
            return (&s[..i], &s[i..]);
        }
    }
    (s, "")
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// The end of a JSON value in a `--set-json` argument.
fn json_value_end(s: &str) -> Result<(&str, &str), SetError> {
    let mut stream = serde_json::Deserializer::from_str(s).into_iter::<Json>();
    match stream.next() {
        Some(Ok(_)) => {
            let end = stream.byte_offset();
            Ok((&s[..end], &s[end..]))
        }
        Some(Err(e)) => Err(SetError::SetJson {
            value: s.to_string(),
            message: e.to_string(),
        }),
        None => Ok(("", "")),
    }
}

fn typed(raw: &str, kind: SetKind) -> Result<Json, SetError> {
    match kind {
        SetKind::Json => {
            serde_json::from_str::<Json>(raw)
                .map(floats)
                .map_err(|e| SetError::Json {
                    value: raw.to_string(),
                    message: e.to_string(),
                })
        }
        SetKind::String => Ok(Json::String(unescape(raw))),
        SetKind::Typed => {
            if let Some(inner) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                let items: Vec<Json> = if inner.is_empty() {
                    Vec::new()
                } else {
                    inner.split(',').map(|i| scalar(&unescape(i))).collect()
                };
                return Ok(Json::Array(items));
            }
            Ok(scalar(&unescape(raw)))
        }
    }
}

/// Helm's `typedVal`.
fn scalar(s: &str) -> Json {
    match s {
        "true" => return Json::Bool(true),
        "false" => return Json::Bool(false),
        "null" => return Json::Null,
        "0" => return Json::from(0i64),
        _ => {}
    }
    // Integers without a leading zero become int64; anything else stays text.
    if !s.starts_with('0')
        && let Ok(i) = s.parse::<i64>()
    {
        return Json::from(i);
    }
    Json::String(s.to_string())
}

/// Sets `a.b[1].c` to `value`, creating maps and lists on the way.
/// How many `.`s a `--set` key may have (Helm's `strvals.MaxNestedNameLevel`).
const MAX_NESTED_NAME_LEVEL: usize = 30;

fn set_path(values: &mut Values, key: &str, value: Json) -> Result<(), SetError> {
    if key.is_empty() {
        return Err(SetError::EmptyKey);
    }
    let parts = crate::values_path::parse_values_path(key)?;
    // Helm's `MaxNestedNameLevel`.
    if parts.len() > MAX_NESTED_NAME_LEVEL + 1 {
        return Err(SetError::TooDeep);
    }
    let Some(((last_name, last_idx), init)) = parts.split_last() else {
        return Err(SetError::EmptyKey);
    };
    let mut cur = values;
    for (name, idx) in init {
        let slot = cur.entry(name.clone()).or_insert(Json::Null);
        let slot = descend_list(slot, idx);
        if !slot.is_object() {
            *slot = Json::Object(Map::new());
        }
        cur = slot.as_object_mut().expect("made a map above");
    }
    let slot = cur.entry(last_name.clone()).or_insert(Json::Null);
    *descend_list(slot, last_idx) = value;
    Ok(())
}

fn descend_list<'v>(mut slot: &'v mut Json, idx: &[usize]) -> &'v mut Json {
    for &i in idx {
        if !slot.is_array() {
            *slot = Json::Array(Vec::new());
        }
        let list = slot.as_array_mut().expect("made a list above");
        while list.len() <= i {
            list.push(Json::Null);
        }
        slot = &mut list[i];
    }
    slot
}

#[cfg(test)]
mod tests {
    #[test]
    fn set_keys_nest_as_deep_as_helm_allows() {
        let key = |dots: usize| vec!["a"; dots + 1].join(".");
        let mut values = Values::new();
        assert!(apply_set(&mut values, &format!("{}=1", key(30)), SetKind::Typed).is_ok());
        let err = apply_set(&mut values, &format!("{}=1", key(31)), SetKind::Typed).unwrap_err();
        assert!(
            err.to_string()
                .contains("maximum supported nested level of 30"),
            "{err}"
        );
        // 20,000 levels: an error, not a stack overflow.
        assert!(apply_set(&mut values, &format!("{}=1", key(20_000)), SetKind::Typed).is_err());
    }

    use super::*;

    #[test]
    fn an_argument_splits_into_its_assignments_as_helm_reads_it() {
        assert_eq!(
            assignments("a.b=1,c={x,y},d=e\\,f", SetKind::Typed),
            Ok(vec![("a.b", "1"), ("c", "{x,y}"), ("d", "e\\,f")])
        );
        // A JSON value's commas are its own.
        assert_eq!(
            assignments(
                r#"tolerations=[{"key":"os","value":"w"}],x=1"#,
                SetKind::Json
            ),
            Ok(vec![
                ("tolerations", r#"[{"key":"os","value":"w"}]"#),
                ("x", "1")
            ])
        );
        assert!(assignments("novalue", SetKind::Typed).is_err());
        // A flag's keys, as the flag is applied: `--set-file` has one, whatever its file's name.
        assert_eq!(flag_keys("--set", "a=1,b.c=2"), ["a", "b.c"]);
        assert_eq!(
            flag_keys("--set-json", r#"t=[{"k":"v","x":1}],y=2"#),
            ["t", "y"]
        );
        assert_eq!(flag_keys("--set-file", "a.b=conf,prod.txt"), ["a.b"]);
        assert!(flag_keys("--set", "novalue").is_empty());
        let mut values = Values::new();
        apply_set(
            &mut values,
            r"nodeSelector.kubernetes\.io/os=windows,l[1]=b",
            SetKind::Typed,
        )
        .unwrap();
        assert_eq!(
            Json::Object(values),
            serde_json::json!({"nodeSelector": {"kubernetes.io/os": "windows"}, "l": [null, "b"]})
        );
    }

    fn set(args: &[(&str, SetKind)]) -> Json {
        let mut v = Map::new();
        for (a, k) in args {
            apply_set(&mut v, a, *k).unwrap();
        }
        Json::Object(v)
    }

    #[test]
    fn set_syntax_and_types() {
        assert_eq!(
            set(&[(
                "a.b=1,c=true,d=x\\,y,e={1,two},f[1].g=0,h=007",
                SetKind::Typed
            )]),
            serde_json::json!({"a": {"b": 1}, "c": true, "d": "x,y", "e": [1, "two"],
                "f": [null, {"g": 0}], "h": "007"})
        );
        assert_eq!(
            set(&[("a=1", SetKind::String)]),
            serde_json::json!({"a": "1"})
        );
        assert_eq!(
            set(&[("a={\"b\": [1, 2]},c=null", SetKind::Json)]),
            serde_json::json!({"a": {"b": [1.0, 2.0]}, "c": null})
        );
        assert!(apply_set(&mut Map::new(), "novalue", SetKind::Typed).is_err());
    }
}
