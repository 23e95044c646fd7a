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

/// Go's `time.Duration.String` (`1h2m3s`).
pub fn duration(seconds: i64) -> String {
    if seconds == 0 {
        return "0s".into();
    }
    let (sign, mut s) = if seconds < 0 {
        ("-", -seconds)
    } else {
        ("", seconds)
    };
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
