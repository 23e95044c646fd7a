//! Sprig's regular expressions (`regex.go`): Go's RE2 syntax, Go's package name `regexp`.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["regexMatch", "mustRegexMatch"], |_, a| {
        Ok(Value::Bool(
            regex(&string_arg(&a, 0)?)?.is_match(&string_arg(&a, 1)?),
        ))
    }),
    (&["regexFind", "mustRegexFind"], |_, a| {
        let s = string_arg(&a, 1)?;
        Ok(Value::from(
            regex(&string_arg(&a, 0)?)?
                .find(&s)
                .map_or("", |m| m.as_str()),
        ))
    }),
    (&["regexFindAll", "mustRegexFindAll"], |_, a| {
        let s = string_arg(&a, 1)?;
        let n = to_int(&arg(&a, 2)?);
        let re = regex(&string_arg(&a, 0)?)?;
        let found = re.find_iter(&s).map(|m| Value::from(m.as_str()));
        Ok(Value::list(if n < 0 {
            found.collect()
        } else {
            found.take(n as usize).collect()
        }))
    }),
    (&["regexReplaceAll", "mustRegexReplaceAll"], |_, a| {
        let (re, s, repl) = (
            regex(&string_arg(&a, 0)?)?,
            string_arg(&a, 1)?,
            string_arg(&a, 2)?,
        );
        // Go's `$1`/`${name}` expansion is the regex crate's too.
        Ok(Value::from(re.replace_all(&s, &*repl).into_owned()))
    }),
    (
        &["regexReplaceAllLiteral", "mustRegexReplaceAllLiteral"],
        |_, a| {
            let (re, s, repl) = (
                regex(&string_arg(&a, 0)?)?,
                string_arg(&a, 1)?,
                string_arg(&a, 2)?,
            );
            Ok(Value::from(
                re.replace_all(&s, regex::NoExpand(&repl)).into_owned(),
            ))
        },
    ),
    (&["regexSplit", "mustRegexSplit"], |_, a| {
        let (re, s, n) = (
            regex(&string_arg(&a, 0)?)?,
            string_arg(&a, 1)?,
            to_int(&arg(&a, 2)?),
        );
        let parts: Vec<Value> = if n < 0 {
            re.split(&s).map(Value::from).collect()
        } else {
            re.splitn(&s, n as usize).map(Value::from).collect()
        };
        Ok(Value::list(parts))
    }),
    (&["regexQuoteMeta"], |_, a| {
        Ok(Value::from(regex::escape(&string_arg(&a, 0)?)))
    }),
];
