//! Sprig's URLs (`url.go`): Go's `net/url`.

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["urlParse"], |_, a| Ok(url_parse(&str_arg(&a, 0)?))),
    (&["urlJoin"], |_, a| {
        let m = map_arg(&a, 0)?;
        let m = m.borrow();
        let part = |k: &str| m.get(k).map(strval).unwrap_or_default();
        let mut out = String::new();
        if !part("scheme").is_empty() {
            out.push_str(&format!("{}://", part("scheme")));
        }
        if !part("userinfo").is_empty() {
            out.push_str(&format!("{}@", part("userinfo")));
        }
        out.push_str(&part("host"));
        out.push_str(&part("path"));
        if !part("query").is_empty() {
            out.push_str(&format!("?{}", part("query")));
        }
        if !part("fragment").is_empty() {
            out.push_str(&format!("#{}", part("fragment")));
        }
        Ok(Value::from(out))
    }),
];
