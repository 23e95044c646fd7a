//! CEL's standard definitions: sizes, conversions between types, and the comparisons
//! and arithmetic the spec gives every type.

use super::*;

pub(super) fn register(r: &mut Registry) {
    for sig in [
        "size(string) -> int",
        "size(list(A)) -> int",
        "size(map(A, B)) -> int",
        "string.size() -> int",
        "list(A).size() -> int",
        "map(A, B).size() -> int",
    ] {
        r.add(
            sig,
            "the length of a string (in code points), list or map",
            |_, a| {
                a[0].size()
                    .map(Val::Int)
                    .ok_or_else(|| err("size of a value without one"))
            },
        );
    }
    r.add(
        "string(dyn) -> string",
        "the value as a string (numbers in decimal, booleans as `true`/`false`)",
        |_, a| {
            Ok(match a[0].kind() {
                Kind::Str(_) => a[0].clone(),
                Kind::Int(_)
                | Kind::Uint(_)
                | Kind::Double(_)
                | Kind::Bool(_)
                | Kind::Quantity(_)
                | Kind::Semver(_)
                | Kind::Net(Net::Ip(_) | Net::Cidr(..)) => Val::str(a[0].display()),
                _ => {
                    return Err(EvalError::new(format!(
                        "cannot convert {} to string",
                        a[0].type_name()
                    )));
                }
            })
        },
    );
    r.add(
        "int(dyn) -> int",
        "an integer from an int, uint, double (truncated) or decimal string",
        |_, a| match a[0].kind() {
            Kind::Int(i) => Ok(Val::Int(i)),
            Kind::Uint(u) => i64::try_from(u)
                .map(Val::Int)
                .map_err(|_| err("int out of range")),
            // cel-go's range check: both ends exclusive, as `float64(math.MinInt64)` and
            // `float64(math.MaxInt64)` are -2^63 and 2^63 (the conformance tests
            // `double_int_max_range`/`double_int_min_range` expect errors there).
            Kind::Double(d) if d > i64::MIN as f64 && d < -(i64::MIN as f64) => {
                Ok(Val::Int(d as i64))
            }
            Kind::Str(t) => t
                .parse()
                .map(Val::Int)
                .map_err(|_| err(format!("cannot convert '{t}' to int"))),
            _ => Err(EvalError::new(format!(
                "cannot convert {} to int",
                a[0].type_name()
            ))),
        },
    );
    r.add(
        "uint(dyn) -> uint",
        "an unsigned integer from a number or decimal string",
        to_uint,
    );
    r.add(
        "double(dyn) -> double",
        "a double from a number or numeric string",
        |_, a| match a[0].kind() {
            Kind::Int(i) => Ok(Val::Double(i as f64)),
            Kind::Uint(u) => Ok(Val::Double(u as f64)),
            Kind::Double(d) => Ok(Val::Double(d)),
            Kind::Str(t) => t
                .parse()
                .map(Val::Double)
                .map_err(|_| err(format!("cannot convert '{t}' to double"))),
            _ => Err(EvalError::new(format!(
                "cannot convert {} to double",
                a[0].type_name()
            ))),
        },
    );
    r.add(
        "bool(dyn) -> bool",
        "a bool from a bool or `true`/`false` string",
        |_, a| match a[0].kind() {
            Kind::Bool(b) => Ok(Val::Bool(b)),
            Kind::Str("true" | "True" | "TRUE" | "t" | "1") => Ok(Val::Bool(true)),
            Kind::Str("false" | "False" | "FALSE" | "f" | "0") => Ok(Val::Bool(false)),
            _ => Err(EvalError::new(format!(
                "cannot convert {} to bool",
                a[0].type_name()
            ))),
        },
    );
    r.add(
        "dyn(dyn) -> dyn",
        "the value, with its static type forgotten",
        |_, a| Ok(a[0].clone()),
    );
    r.add("type(dyn) -> type", "the value's type", |_, a| {
        Ok(Val::Type(a[0].cel_type()))
    });
}
