//! cel-go's optional values (`optional.of`, `?.`, `orValue`, …).

use super::*;

pub(super) fn register(r: &mut Registry) {
    r.add(
        "optional.of(A) -> optional(A)",
        "an optional holding the value",
        |_, a| Ok(Val::optional(Some(a[0].clone()))),
    );
    r.add(
        "optional.ofNonZeroValue(A) -> optional(A)",
        "an optional holding the value unless it is zero, empty or null",
        |_, a| {
            let zero = match a[0].kind() {
                Kind::Null => true,
                Kind::Bool(b) => !b,
                Kind::Int(i) => i == 0,
                Kind::Uint(u) => u == 0,
                Kind::Double(d) => d == 0.0,
                Kind::Str(t) => t.is_empty(),
                Kind::List | Kind::Map => a[0].size() == Some(0),
                _ => false,
            };
            Ok(Val::optional((!zero).then(|| a[0].clone())))
        },
    );
    r.add(
        "optional.none() -> optional(dyn)",
        "an empty optional",
        |_, _| Ok(Val::Opt(None)),
    );
    r.add(
        "optional(A).hasValue() -> bool",
        "whether the optional holds a value",
        |_, a| Ok(Val::Bool(matches!(a[0].optional_value(), Some(Some(_))))),
    );
    r.add(
        "optional(A).value() -> A",
        "the optional's value; an error when empty",
        |_, a| match a[0].optional_value() {
            Some(Some(v)) => Ok(v),
            _ => Err(err("optional.none() dereference")),
        },
    );
    r.add(
        "optional(A).orValue(A) -> A",
        "the optional's value, else the argument",
        |_, a| match a[0].optional_value() {
            Some(Some(v)) => Ok(v),
            _ => Ok(a[1].clone()),
        },
    );
    r.add(
        "optional(A).or(optional(A)) -> optional(A)",
        "the optional if it holds a value, else the argument",
        |_, a| match a[0].optional_value() {
            Some(Some(_)) => Ok(a[0].clone()),
            _ => Ok(a[1].clone()),
        },
    );
}
