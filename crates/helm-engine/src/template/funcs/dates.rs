//! Sprig's date functions (`date.go`): Go's time layouts and durations.

use super::*;
use crate::template::time;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    // `dateModify` leaves a date as it is when the duration doesn't parse;
    // `mustDateModify` fails.
    (&["dateModify"], |_, a| {
        let t = time::time_of(&arg(&a, 1)?);
        let nanos = time::parse_go_duration(&string_arg(&a, 0)?).unwrap_or(0);
        Ok(time::shifted(&t, nanos))
    }),
    (&["mustDateModify"], |_, a| {
        let t = time::time_of(&arg(&a, 1)?);
        let shift = string_arg(&a, 0)?;
        match time::parse_go_duration(&shift) {
            Some(nanos) => Ok(time::shifted(&t, nanos)),
            None => err(format!("time: invalid duration {shift:?}")),
        }
    }),
    (&["durationRound"], |_, a| {
        Ok(Value::from(time::duration_round(&arg(&a, 0)?)))
    }),
    (&["now"], |_, _| Ok(time::now())),
    (&["date"], |_, a| {
        let t = time::time_of(&arg(&a, 1)?);
        Ok(Value::from(time::format_go(&t, &string_arg(&a, 0)?)))
    }),
    (&["dateInZone"], |_, a| {
        let t = time::time_of(&arg(&a, 1)?);
        let t = time::in_zone(t, &string_arg(&a, 2)?);
        Ok(Value::from(time::format_go(&t, &string_arg(&a, 0)?)))
    }),
    (&["htmlDate"], |_, a| {
        let t = time::time_of(&arg(&a, 0)?);
        Ok(Value::from(time::format_go(&t, "2006-01-02")))
    }),
    (&["htmlDateInZone"], |_, a| {
        let t = time::time_of(&arg(&a, 0)?);
        let t = time::in_zone(t, &string_arg(&a, 1)?);
        Ok(Value::from(time::format_go(&t, "2006-01-02")))
    }),
    (&["unixEpoch"], |_, a| {
        let t = time::time_of(&arg(&a, 0)?);
        Ok(Value::from(t.timestamp().as_second().to_string()))
    }),
    (&["ago"], |_, a| {
        let t = time::time_of(&arg(&a, 0)?);
        let secs = jiff::Timestamp::now().as_second() - t.timestamp().as_second();
        Ok(Value::from(time::duration(secs)))
    }),
    // Sprig reads only an `int64` or a string here; anything else (a literal `int`) is 0.
    (&["duration"], |_, a| {
        let secs = match arg(&a, 0)? {
            Value::Int64(n) => n,
            Value::Str(s) => s.parse().unwrap_or(0),
            _ => 0,
        };
        Ok(Value::from(time::duration(secs)))
    }),
    (&["toDate", "mustToDate"], |_, a| {
        // Go layouts are not parsed: the text is read as RFC 3339 or a plain date, the forms
        // charts pass (`toDate "2006-01-02" "2024-05-01"`).
        let text = string_arg(&a, 1)?;
        let zoned = text
            .parse::<jiff::Timestamp>()
            .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC))
            .or_else(|_| {
                text.parse::<jiff::civil::Date>()
                    .map_err(|e| e.to_string())
                    .and_then(|d| {
                        d.to_zoned(jiff::tz::TimeZone::UTC)
                            .map_err(|e| e.to_string())
                    })
            })
            .map_err(|e| Failure::Exec(format!("parsing time {text:?}: {e}")))?;
        Ok(Value::Object(std::rc::Rc::new(time::Time(zoned))))
    }),
];
