//! Kubernetes' semver library (`semver.rs`).

use super::*;

pub(super) fn register(r: &mut Registry) {
    r.add_prepared(
        "semver(string) -> semver",
        "a semantic version (`1.25.3`); an error when the text is not one (a literal is read at load)",
        |c, a| match c.prepared::<Semver>() {
            Some(v) => Ok(Val::Semver(Rc::new(v.clone()))),
            None => semver(s(&a[0]), false),
        },
        Some((0, |text| {
            Semver::parse(text, false)
                .map(|v| Box::new(v) as Box<dyn std::any::Any + Send + Sync>)
                .map_err(|e| format!("invalid semver: {text}: {e}"))
        })),
    );
    r.add(
        "semver(string, bool) -> semver",
        "a semantic version; with `true`, `v1.25` and `1.25` read as `1.25.0`",
        |_, a| {
            let normalize = a[1].as_bool().unwrap_or(false);
            semver(s(&a[0]), normalize)
        },
    );
    r.add(
        "isSemver(string) -> bool",
        "whether the text is a semantic version",
        |_, a| Ok(Val::Bool(semver(s(&a[0]), false).is_ok())),
    );
    r.add(
        "isSemver(string, bool) -> bool",
        "whether the text is a semantic version, normalised as `semver(s, true)` does",
        |_, a| {
            Ok(Val::Bool(
                semver(s(&a[0]), a[1].as_bool().unwrap_or(false)).is_ok(),
            ))
        },
    );
    for sig in [
        "semver.major() -> int",
        "semver.minor() -> int",
        "semver.patch() -> int",
    ] {
        r.add(sig, "a part of the version", |c, a| {
            let Val::Semver(v) = &a[0] else {
                return Err(err("not a semver"));
            };
            Ok(Val::Int(match c.name {
                "major" => v.major,
                "minor" => v.minor,
                _ => v.patch,
            } as i64))
        });
    }
    r.add("semver.compareTo(semver) -> int", "-1, 0 or 1", |_, a| {
        Ok(Val::Int(match compare("compareTo", &a[0], &a[1])? {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }))
    });
    r.add("semver.isLessThan(semver) -> bool", "ordering", |_, a| {
        Ok(Val::Bool(
            compare("isLessThan", &a[0], &a[1])? == Ordering::Less,
        ))
    });
    r.add(
        "semver.isGreaterThan(semver) -> bool",
        "ordering",
        |_, a| {
            Ok(Val::Bool(
                compare("isGreaterThan", &a[0], &a[1])? == Ordering::Greater,
            ))
        },
    );
}
