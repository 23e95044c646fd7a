//! Sprig's date functions (`now`, `date`, `dateInZone`, `htmlDate`, `toDate`, `unixEpoch`,
//! `dateModify`, `ago`, `duration`) over `jiff`, with Go's reference-time layouts
//! (`2006-01-02T15:04:05Z07:00`). Clock output differs run to run, in Helm too.

use std::rc::Rc;

use super::value::{Object, Value};

/// A Go `time.Time`.
pub struct Time(pub jiff::Zoned);

impl Object for Time {
    fn type_name(&self) -> &str {
        "time.Time"
    }
    fn display(&self) -> String {
        format_go(&self.0, "2006-01-02 15:04:05.999999999 -0700 MST")
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match name {
            "Unix" => Some(Ok(Value::Int64(self.0.timestamp().as_second()))),
            "Format" => Some(match args.first() {
                Some(Value::Str(layout)) => Ok(Value::from(format_go(&self.0, layout))),
                _ => Err("Format needs a layout".into()),
            }),
            _ => None,
        }
    }
}

pub fn now() -> Value {
    Value::Object(Rc::new(Time(jiff::Zoned::now())))
}

/// A time argument: a `time.Time`, or Unix seconds (Sprig accepts both); anything else is now.
pub fn time_of(v: &Value) -> jiff::Zoned {
    let from_unix = |s: i64| {
        jiff::Timestamp::from_second(s)
            .ok()
            .map(|t| t.to_zoned(jiff::tz::TimeZone::system()))
    };
    let t = match v {
        Value::Int(s) | Value::Int64(s) => from_unix(*s),
        Value::Float(f) => from_unix(*f as i64),
        Value::Object(o) => {
            let any: &dyn std::any::Any = o.as_ref();
            any.downcast_ref::<Time>().map(|t| t.0.clone())
        }
        _ => None,
    };
    t.unwrap_or_else(jiff::Zoned::now)
}

pub fn in_zone(t: jiff::Zoned, zone: &str) -> jiff::Zoned {
    match jiff::tz::TimeZone::get(zone) {
        Ok(tz) => t.with_time_zone(tz),
        Err(_) => t.with_time_zone(jiff::tz::TimeZone::UTC),
    }
}

/// Go's `time.Format` for the layout elements charts use.
pub fn format_go(t: &jiff::Zoned, layout: &str) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let offset = t.offset().seconds();
    let (sign, abs) = if offset < 0 {
        ('-', -offset)
    } else {
        ('+', offset)
    };
    let tokens: [(&str, String); 24] = [
        ("January", MONTHS[t.month() as usize - 1].to_string()),
        (
            "Monday",
            DAYS[t.weekday().to_monday_zero_offset() as usize].to_string(),
        ),
        ("2006", format!("{:04}", t.year())),
        (
            "-07:00",
            format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60),
        ),
        (
            "Z07:00",
            if offset == 0 {
                "Z".into()
            } else {
                format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60)
            },
        ),
        (
            "-0700",
            format!("{sign}{:02}{:02}", abs / 3600, abs % 3600 / 60),
        ),
        (".999999999", {
            let n = t.subsec_nanosecond();
            if n == 0 {
                String::new()
            } else {
                format!(".{n:09}").trim_end_matches('0').to_string()
            }
        }),
        (".000", format!(".{:03}", t.subsec_nanosecond() / 1_000_000)),
        ("Jan", MONTHS[t.month() as usize - 1][..3].to_string()),
        (
            "Mon",
            DAYS[t.weekday().to_monday_zero_offset() as usize][..3].to_string(),
        ),
        (
            "MST",
            if offset == 0 {
                "UTC".into()
            } else {
                format!("{sign}{:02}", abs / 3600)
            },
        ),
        ("15", format!("{:02}", t.hour())),
        ("06", format!("{:02}", t.year() % 100)),
        ("01", format!("{:02}", t.month())),
        ("02", format!("{:02}", t.day())),
        ("_2", format!("{:>2}", t.day())),
        ("03", format!("{:02}", (t.hour() + 11) % 12 + 1)),
        ("04", format!("{:02}", t.minute())),
        ("05", format!("{:02}", t.second())),
        (
            "PM",
            if t.hour() >= 12 {
                "PM".into()
            } else {
                "AM".into()
            },
        ),
        (
            "pm",
            if t.hour() >= 12 {
                "pm".into()
            } else {
                "am".into()
            },
        ),
        ("1", t.month().to_string()),
        ("2", t.day().to_string()),
        ("3", ((t.hour() + 11) % 12 + 1).to_string()),
    ];
    let mut out = String::new();
    let mut rest = layout;
    'outer: while !rest.is_empty() {
        for (token, value) in &tokens {
            if let Some(r) = rest.strip_prefix(token) {
                out.push_str(value);
                rest = r;
                continue 'outer;
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A `time.Time` value.
pub fn value(t: jiff::Zoned) -> Value {
    Value::Object(Rc::new(Time(t)))
}

/// `t` moved by `nanos` nanoseconds (`dateModify`); a move past the calendar's range leaves
/// it where it is.
pub fn shifted(t: &jiff::Zoned, nanos: i128) -> Value {
    let moved = i64::try_from(nanos)
        .ok()
        .and_then(|n| t.checked_add(jiff::SignedDuration::from_nanos(n)).ok());
    value(moved.unwrap_or_else(|| t.clone()))
}

/// Go's `time.ParseDuration`: `[-+]` then numbers with units (`ns`, `us`, `µs`, `ms`, `s`,
/// `m`, `h`), fractions allowed (`1.5h`, `-2h45m`), or a bare `0`. In nanoseconds; `None` for
/// anything else, or past `int64`'s range, as Go refuses. By hand: crates that read durations
/// take other syntaxes (`1 hour`, `P1D`).
pub fn parse_go_duration(text: &str) -> Option<i128> {
    let (neg, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        if number.is_empty() || number == "." {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += value * scale;
        rest = next;
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let nanos = total as i128;
    Some(if neg { -nanos } else { nanos })
}

/// Sprig's `durationRound`: a duration (Go's syntax, nanoseconds as an `int64`, or the time
/// since a `time.Time`) as its largest whole unit: `2h`, `3mo`, `1y`.
pub fn duration_round(v: &Value) -> String {
    let nanos: i128 = match v {
        Value::Str(s) => parse_go_duration(s).unwrap_or(0),
        Value::Int64(n) => i128::from(*n),
        Value::Object(o) => {
            let any: &dyn std::any::Any = o.as_ref();
            any.downcast_ref::<Time>().map_or(0, |t| {
                jiff::Timestamp::now().as_nanosecond() - t.0.timestamp().as_nanosecond()
            })
        }
        _ => 0,
    };
    let u = nanos.unsigned_abs();
    const SECOND: u128 = 1_000_000_000;
    const MINUTE: u128 = 60 * SECOND;
    const HOUR: u128 = 60 * MINUTE;
    const DAY: u128 = 24 * HOUR;
    const MONTH: u128 = 30 * DAY;
    const YEAR: u128 = 365 * DAY;
    for (unit, suffix) in [
        (YEAR, "y"),
        (MONTH, "mo"),
        (DAY, "d"),
        (HOUR, "h"),
        (MINUTE, "m"),
        (SECOND, "s"),
    ] {
        if u > unit {
            return format!("{}{suffix}", u / unit);
        }
    }
    "0s".into()
}

/// Go's `time.Duration.String` (`1h2m3s`).
pub fn duration(seconds: i64) -> String {
    if seconds == 0 {
        return "0s".into();
    }
    let sign = if seconds < 0 { "-" } else { "" };
    // `unsigned_abs`: `-i64::MIN` does not fit an `i64`.
    let mut s = seconds.unsigned_abs();
    let h = s / 3600;
    s %= 3600;
    let m = s / 60;
    s %= 60;
    let mut out = String::from(sign);
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&format!("{s}s"));
    out
}
