//! `printf`: Go's `fmt` verbs as templates use them.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[(&["printf"], printf_fn)];

fn printf_fn(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    let format = string_arg(&a, 0)?;
    Ok(Value::from(printf(&format, &a[1..])))
}

/// Go's `fmt.Sprintf` for the verbs templates use.
pub fn printf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek() {
            if "+-# 0".contains(f) {
                flags.push(f);
                chars.next();
            } else {
                break;
            }
        }
        // Go's `parsenum`: a width or precision past a million is taken as garbage, and the
        // rest of the format with it (`%!(NOVERB)` follows).
        let number = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut n: usize = 0;
            while let Some(&d) = chars.peek() {
                let Some(digit) = d.to_digit(10) else { break };
                if n > 1_000_000 {
                    chars.by_ref().for_each(drop);
                    return None;
                }
                n = n * 10 + digit as usize;
                chars.next();
            }
            Some(n)
        };
        // `*` takes the width (or precision) from the next argument: an int, else
        // `%!(BADWIDTH)` (`%!(BADPREC)`) and none (Go's `intFromArg`).
        let width = if chars.peek() == Some(&'*') {
            chars.next();
            match int_from_arg(args, &mut next) {
                Some(w) if w < 0 => {
                    flags.push('-');
                    flags.retain(|f| f != '0');
                    w.unsigned_abs() as usize
                }
                Some(w) => w as usize,
                None => {
                    out.push_str("%!(BADWIDTH)");
                    0
                }
            }
        } else {
            let Some(width) = number(&mut chars) else {
                out.push_str("%!(NOVERB)");
                break;
            };
            width
        };
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            if chars.peek() == Some(&'*') {
                chars.next();
                // A negative precision is none, and bad.
                match int_from_arg(args, &mut next) {
                    Some(p) if p >= 0 => precision = Some(p as usize),
                    _ => out.push_str("%!(BADPREC)"),
                }
            } else {
                let Some(p) = number(&mut chars) else {
                    out.push_str("%!(NOVERB)");
                    break;
                };
                precision = Some(p);
            }
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(v) = args.get(next) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        next += 1;
        let text = format_verb(verb, v, precision, &flags);
        let len = text.chars().count();
        if len < width {
            let pad = width - len;
            if flags.contains('-') {
                out.push_str(&text);
                out.push_str(&" ".repeat(pad));
            } else if flags.contains('0') && matches!(verb, 'd' | 'f' | 'x' | 'X' | 'e' | 'g') {
                let (sign, digits) = match text.strip_prefix('-') {
                    Some(d) => ("-", d.to_string()),
                    None => ("", text.clone()),
                };
                out.push_str(sign);
                out.push_str(&"0".repeat(pad));
                out.push_str(&digits);
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(&text);
            }
        } else {
            out.push_str(&text);
        }
    }
    if next < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[next..]
            .iter()
            .map(|v| match v {
                Value::Nil => "<nil>".to_string(),
                v => format!("{}={}", v.type_name(), v.to_print_inner()),
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

/// Go's `intFromArg`: the next argument as a width or precision, if it is an int within a
/// million either way; it is used up either way.
fn int_from_arg(args: &[Value], next: &mut usize) -> Option<i64> {
    let arg = args.get(*next)?;
    *next += 1;
    match arg {
        Value::Int(i) | Value::Int64(i) if i.unsigned_abs() <= 1_000_000 => Some(*i),
        _ => None,
    }
}

fn format_verb(verb: char, v: &Value, precision: Option<usize>, flags: &str) -> String {
    // Go's `printArg` on a nil: `<nil>` for `%v` and `%T`, a bad verb without a type for the rest.
    if matches!(v, Value::Nil) {
        return match verb {
            'v' | 'T' => "<nil>".to_string(),
            _ => format!("%!{verb}(<nil>)"),
        };
    }
    let bad = || format!("%!{verb}({}={})", v.type_name(), v.to_print_inner());
    match verb {
        'v' => v.to_print_inner(),
        's' => match v {
            Value::Str(s) => match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            },
            Value::Int(_) | Value::Int64(_) | Value::Float(_) | Value::Bool(_) => bad(),
            other => other.to_print_inner(),
        },
        'q' => match v {
            Value::Str(s) => go_quote(s),
            Value::Int(i) | Value::Int64(i) => {
                format!("'{}'", char::from_u32(*i as u32).unwrap_or('\u{fffd}'))
            }
            _ => bad(),
        },
        'd' => match v {
            Value::Int(i) | Value::Int64(i) => {
                if flags.contains('+') && *i >= 0 {
                    format!("+{i}")
                } else {
                    i.to_string()
                }
            }
            _ => bad(),
        },
        't' => match v {
            Value::Bool(b) => b.to_string(),
            _ => bad(),
        },
        'f' | 'F' => match v {
            Value::Float(f) => go_fixed(*f, precision.unwrap_or(6)),
            _ => bad(),
        },
        'e' => match v {
            Value::Float(f) => go_exp(*f, precision.unwrap_or(6)),
            _ => bad(),
        },
        'g' => match v {
            Value::Float(f) => format_float_g(*f),
            _ => bad(),
        },
        'x' | 'X' => {
            let s = match v {
                Value::Int(i) | Value::Int64(i) => format!("{i:x}"),
                Value::Str(s) => s.bytes().map(|b| format!("{b:02x}")).collect(),
                _ => return bad(),
            };
            if verb == 'X' { s.to_uppercase() } else { s }
        }
        'o' => match v {
            Value::Int(i) | Value::Int64(i) => format!("{i:o}"),
            _ => bad(),
        },
        'b' => match v {
            Value::Int(i) | Value::Int64(i) => format!("{i:b}"),
            _ => bad(),
        },
        'c' => match v {
            Value::Int(i) | Value::Int64(i) => char::from_u32(*i as u32)
                .map(String::from)
                .unwrap_or_default(),
            _ => bad(),
        },
        'T' => v.type_name(),
        other => format!("%!{other}({}={})", v.type_name(), v.to_print_inner()),
    }
}

/// Digits past this many after the point are all zeros in a float's exact decimal form (an
/// `f64`'s smallest fraction, 2^-1074, has 1,074), and Rust's formatter refuses a precision past
/// 65,535 (a panic) where Go's takes up to a million: longer ones are written up to here and
/// padded with zeros, which is what Go prints.
const EXACT_DIGITS: usize = 1_100;

/// Go's `%f` with `precision` digits after the point.
fn go_fixed(f: f64, precision: usize) -> String {
    let mut s = format!("{:.*}", precision.min(EXACT_DIGITS), f);
    if f.is_finite() && precision > EXACT_DIGITS {
        s.extend(std::iter::repeat_n('0', precision - EXACT_DIGITS));
    }
    s
}

/// Go's `%e`: `1.500000e+00`.
fn go_exp(f: f64, precision: usize) -> String {
    let mut s = format!("{:.*e}", precision.min(EXACT_DIGITS), f);
    if f.is_finite() && precision > EXACT_DIGITS {
        let e = s.find('e').unwrap_or(s.len());
        s.insert_str(e, &"0".repeat(precision - EXACT_DIGITS));
    }
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!(
        "{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Precisions past Rust's formatter's bound print as Go prints them (Helm 4.2.3 gives the
    /// same text for these, checked by their SHA-256), not a panic.
    #[test]
    fn float_precisions_past_rusts_bound_print_as_gos() {
        let fixed = printf("%.70000f", &[Value::Float(0.1)]);
        assert_eq!(fixed.len(), 70_002);
        assert!(fixed.starts_with("0.1000000000000000055511151231257827"));
        assert!(
            fixed
                .trim_end_matches('0')
                .ends_with("1231257827021181583404541015625")
        );
        let exp = printf("%.3000e", &[Value::Float(0.1)]);
        assert!(exp.starts_with("1.000000000000000055511151231257827") && exp.ends_with("000e-01"));
        assert_eq!(exp.len(), 3_006);
        assert_eq!(printf("%.70000f", &[Value::Float(f64::NAN)]), "NaN");
    }
}
