//! Masterminds/semver, as Sprig's `semver` and `semverCompare` use it: versions with an optional
//! `v`, missing minor/patch read as 0, and constraints (`>=1.19-0`, `^1.2`, `~1.2.3`, `1.2.x`,
//! `>1, <3`, `a || b`). Written here because the `semver` crate follows Cargo's rules, which
//! differ (Masterminds lets a prerelease satisfy a range only when the range itself names one).

use std::cmp::Ordering;

use super::value::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
}

/// A version or constraint that does not read, in Masterminds/semver's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SemverError {
    #[error("invalid semantic version")]
    InvalidVersion,
    #[error("improper constraint: {0}")]
    ImproperConstraint(String),
}

pub(crate) fn parse(text: &str) -> Result<Version, SemverError> {
    let t = text.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let (t, metadata) = t.split_once('+').unwrap_or((t, ""));
    let (core, pre) = t.split_once('-').unwrap_or((t, ""));
    let mut parts = core.split('.');
    let mut num = |required: bool| -> Result<u64, SemverError> {
        match parts.next() {
            Some(p) => p.parse::<u64>().map_err(|_| SemverError::InvalidVersion),
            None if required => Err(SemverError::InvalidVersion),
            None => Ok(0),
        }
    };
    let major = num(true)?;
    let minor = num(false)?;
    let patch = num(false)?;
    if parts.next().is_some() {
        return Err(SemverError::InvalidVersion);
    }
    Ok(Version {
        major,
        minor,
        patch,
        pre: pre.to_string(),
        metadata: metadata.to_string(),
    })
}

fn compare(a: &Version, b: &Version) -> Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| compare_prerelease(&a.pre, &b.pre))
}

/// Masterminds/semver's `comparePrerelease`, which Sprig's `semverCompare` uses: no pre-release
/// is above any; otherwise part by part, a missing part below any, numbers numerically and below
/// words, words byte-wise. (Kubernetes' CEL semver library is blang/semver, another Go library,
/// so a CEL implementation keeps its own comparison.)
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..a.len().max(b.len()) {
        let (s, o) = (
            a.get(i).copied().unwrap_or(""),
            b.get(i).copied().unwrap_or(""),
        );
        let order = match (s.is_empty(), o.is_empty()) {
            _ if s == o => Ordering::Equal,
            (true, _) => Ordering::Less,
            (_, true) => Ordering::Greater,
            _ => match (s.parse::<u64>(), o.parse::<u64>()) {
                (Ok(m), Ok(n)) => m.cmp(&n),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => s.cmp(o),
            },
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// Whether `version` satisfies `constraint`.
pub fn matches(constraint: &str, version: &str) -> Result<bool, SemverError> {
    let v = parse(version)?;
    for alternative in constraint.split("||") {
        let mut all = true;
        let mut any_pre = false;
        let terms: Vec<&str> = alternative
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        let terms = join_operators(&terms);
        for term in &terms {
            let (op, rest) = split_op(term);
            if rest.contains('-') {
                any_pre = true;
            }
            if !check(op, rest, &v)? {
                all = false;
            }
        }
        // A prerelease version satisfies only ranges that mention a prerelease.
        if all && (v.pre.is_empty() || any_pre) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `>= 1.2` written with a space: the operator and the version are one term.
fn join_operators(terms: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for t in terms {
        if t.chars().all(|c| "<>=!~^".contains(c)) {
            pending.push_str(t);
        } else {
            out.push(format!("{pending}{t}"));
            pending.clear();
        }
    }
    out
}

fn split_op(term: &str) -> (&str, &str) {
    let end = term
        .find(|c: char| !"<>=!~^".contains(c))
        .unwrap_or(term.len());
    (&term[..end], term[end..].trim())
}

fn check(op: &str, text: &str, v: &Version) -> Result<bool, SemverError> {
    let wildcard = |p: &str| p == "x" || p == "X" || p == "*";
    let text = text.strip_prefix('v').unwrap_or(text);
    let core = text.split(['-', '+']).next().unwrap_or(text);
    let parts: Vec<&str> = core.split('.').collect();
    let given = parts.iter().take_while(|p| !wildcard(p)).count();
    let c = parse(
        &parts[..given.max(1)]
            .join(".")
            .replace('*', "0")
            .replace(['x', 'X'], "0"),
    )
    .map(|mut c| {
        c.pre = text
            .split_once('-')
            .map(|(_, p)| p.split('+').next().unwrap_or("").to_string())
            .unwrap_or_default();
        c
    })
    .map_err(|_| SemverError::ImproperConstraint(format!("{op}{text}")))?;
    let ord = compare(v, &c);
    let bump = |level: usize| -> Version {
        let mut up = c.clone();
        up.pre.clear();
        match level {
            0 => {
                up.major += 1;
                up.minor = 0;
                up.patch = 0;
            }
            1 => {
                up.minor += 1;
                up.patch = 0;
            }
            _ => up.patch += 1,
        }
        up
    };
    Ok(match op {
        "" | "=" => {
            if given < 3 && given > 0 {
                ord != Ordering::Less && compare(v, &bump(given - 1)) == Ordering::Less
            } else {
                ord == Ordering::Equal
            }
        }
        "!=" => ord != Ordering::Equal,
        ">" => ord == Ordering::Greater,
        ">=" | "=>" => ord != Ordering::Less,
        "<" => ord == Ordering::Less,
        "<=" | "=<" => ord != Ordering::Greater,
        "~" | "~>" => {
            let level = if given >= 2 { 1 } else { 0 };
            ord != Ordering::Less && compare(v, &bump(level)) == Ordering::Less
        }
        "^" => {
            let level = if c.major > 0 || given == 1 {
                0
            } else if c.minor > 0 || given == 2 {
                1
            } else {
                2
            };
            ord != Ordering::Less && compare(v, &bump(level)) == Ordering::Less
        }
        other => return Err(SemverError::ImproperConstraint(format!("{other}{text}"))),
    })
}

/// `semver "1.2.3"`: Masterminds' `*semver.Version`, with its methods (`Major`, `String`,
/// `IncMinor`, `LessThan`, …). `IncMajor`, `IncMinor` and `IncPatch` return a `Version`
/// value, on which the pointer methods (`Original`, `SetPrerelease`, …) are not there, as in
/// Go.
pub(super) fn parse_object(text: &str) -> Result<Value, String> {
    let version = parse(text).map_err(|e| e.to_string())?;
    Ok(Value::Object(std::rc::Rc::new(SemverVersion {
        version,
        original: text.to_string(),
        pointer: true,
    })))
}

/// A Masterminds `semver.Version` (`pointer`: `*semver.Version`, as `semver` returns it).
pub struct SemverVersion {
    version: Version,
    original: String,
    pointer: bool,
}

impl SemverVersion {
    /// Masterminds' `String()`: `MAJOR.MINOR.PATCH[-PRE][+META]`.
    fn text(&self) -> String {
        let v = &self.version;
        let mut out = format!("{}.{}.{}", v.major, v.minor, v.patch);
        if !v.pre.is_empty() {
            out.push('-');
            out.push_str(&v.pre);
        }
        if !v.metadata.is_empty() {
            out.push('+');
            out.push_str(&v.metadata);
        }
        out
    }

    fn value(version: Version) -> Value {
        let original = String::new();
        Value::Object(std::rc::Rc::new(SemverVersion {
            version,
            original,
            pointer: false,
        }))
    }

    fn other(args: &[Value]) -> Result<Version, String> {
        match args.first() {
            Some(Value::Object(o)) => {
                let any: &dyn std::any::Any = o.as_ref();
                any.downcast_ref::<SemverVersion>()
                    .map(|s| s.version.clone())
                    .ok_or_else(|| "wrong type for value; expected *semver.Version".to_string())
            }
            _ => Err("wrong type for value; expected *semver.Version".into()),
        }
    }
}

impl crate::template::value::Object for SemverVersion {
    fn type_name(&self) -> &str {
        if self.pointer {
            "*semver.Version"
        } else {
            "semver.Version"
        }
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let v = &self.version;
        let bumped = |major, minor, patch| Version {
            major,
            minor,
            patch,
            pre: String::new(),
            metadata: String::new(),
        };
        Some(Ok(match name {
            "Major" => Value::Int64(v.major as i64),
            "Minor" => Value::Int64(v.minor as i64),
            "Patch" => Value::Int64(v.patch as i64),
            "Prerelease" => Value::from(v.pre.as_str()),
            "Metadata" => Value::from(v.metadata.as_str()),
            "String" => Value::from(self.text()),
            "Original" if self.pointer => Value::from(self.original.as_str()),
            // Masterminds: a pre-release version's patch release is the version itself.
            "IncPatch" if !v.pre.is_empty() => Self::value(bumped(v.major, v.minor, v.patch)),
            "IncPatch" => Self::value(bumped(v.major, v.minor, v.patch.saturating_add(1))),
            "IncMinor" => Self::value(bumped(v.major, v.minor.saturating_add(1), 0)),
            "IncMajor" => Self::value(bumped(v.major.saturating_add(1), 0, 0)),
            "LessThan" | "GreaterThan" | "Equal" | "Compare" => {
                let other = match Self::other(args) {
                    Ok(o) => o,
                    Err(e) => return Some(Err(e)),
                };
                let ord = compare(v, &other);
                match name {
                    "LessThan" => Value::Bool(ord == Ordering::Less),
                    "GreaterThan" => Value::Bool(ord == Ordering::Greater),
                    "Equal" => Value::Bool(ord == Ordering::Equal),
                    _ => Value::Int(ord as i64),
                }
            }
            _ => return None,
        }))
    }
    fn display(&self) -> String {
        self.text()
    }
    fn to_data(&self) -> Value {
        // Masterminds' `MarshalJSON`: the version's text.
        Value::from(self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn constraints_as_masterminds_reads_them() {
        for (c, v, want) in [
            (">=1.19-0", "v1.34.0", true),
            (">=1.19-0", "1.18.3", false),
            (">=1.19-0", "v1.19.0-eks-1234", true),
            (">=1.19", "v1.19.0-eks-1234", false),
            ("^1.2", "1.9.0", true),
            ("^1.2", "2.0.0", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            ("1.2.x", "1.2.7", true),
            (">= 1.20, < 1.30", "1.25.1", true),
            ("<1.20 || >=1.30", "1.25.1", false),
        ] {
            assert_eq!(matches(c, v).unwrap(), want, "{c} {v}");
        }
    }
}
