//! Kubernetes' URL library (`k8s.io/apiserver/pkg/cel/library/urls.go`): URLs read as Go's
//! `net/url` reads them.
//!
//! Written by hand, after Go's `net/url` (`parse`, `parseAuthority`, `parseHost`, `setPath`,
//! `EscapedPath`, `Query`, `shouldEscape`, `unescape`), because Kubernetes' answers are that
//! package's: the `url` crate implements the WHATWG URL standard, which reads differently what
//! matters here — it resolves no absolute path without a base (`url('/path')` is valid in
//! Kubernetes), drops a scheme's default port from the host (`https://x:443/` keeps `:443` in
//! Go), lower-cases and IDNA-encodes hosts, and escapes paths with other character sets.
//!
//! It follows the Go releases Kubernetes 1.3x builds with (1.24.8, 1.25.2 and later, which check
//! bracketed hosts). A host or query part that decodes to bytes that are not UTF-8 (`%C3`) reads
//! with U+FFFD in their place: CEL strings are UTF-8, Go's hold any bytes.

/// A URL as Go's `url.Parse` splits it, its fields Go's. Two URLs are equal when Go would write
/// them alike (Kubernetes' `URL.Equal` compares `URL.String()`): the same scheme, opaque part,
/// user, host, escaped path, query and escaped fragment.
#[derive(Debug, Clone)]
pub struct Url {
    scheme: String,
    opaque: String,
    /// The user name and, after the first `:`, the password, each unescaped (Go's `Userinfo`).
    user: Option<(Vec<u8>, Option<Vec<u8>>)>,
    host: Vec<u8>,
    path: Vec<u8>,
    raw_path: String,
    raw_query: String,
    /// A `?` with nothing after it.
    force_query: bool,
    fragment: Vec<u8>,
    /// The fragment as written.
    raw_fragment: String,
    /// The text it was read from, for `string()`-like displays.
    text: String,
}

impl PartialEq for Url {
    fn eq(&self, other: &Url) -> bool {
        fn fields(u: &Url) -> impl PartialEq + '_ {
            (
                u.scheme.as_str(),
                u.opaque.as_str(),
                &u.user,
                u.host.as_slice(),
                u.escaped_path(),
                u.force_query || !u.raw_query.is_empty(),
                u.raw_query.as_str(),
                u.escaped_fragment(),
            )
        }
        fields(self) == fields(other)
    }
}

impl Eq for Url {}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Host,
    Zone,
    QueryComponent,
    Fragment,
}

/// Go's `shouldEscape`: whether a byte must be percent-encoded in a part of a URL.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&\'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            // Go allows every reserved character in a path but `?`.
            Mode::Path => c == b'?',
            Mode::QueryComponent => true,
            Mode::Fragment => false,
            Mode::Host | Mode::Zone => true,
        },
        b'!' | b'(' | b')' | b'*' if mode == Mode::Fragment => false,
        _ => true,
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Go's `unescape`: percent-decoding, with the checks each part of a URL makes.
fn unescape(s: &str, mode: Mode) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let (Some(hi), Some(lo)) = (
                    b.get(i + 1).copied().and_then(hex),
                    b.get(i + 2).copied().and_then(hex),
                ) else {
                    // Bytes, not a slice of `s`: a multi-byte character may follow the `%`.
                    let end = (i + 3).min(b.len());
                    let escape = String::from_utf8_lossy(&b[i..end]);
                    return Err(format!("invalid URL escape {escape:?}"));
                };
                // A host may %-encode only non-ASCII bytes (RFC 3986 §3.2.2), and `%25`; a zone
                // only what it could hold unescaped (and spaces, which Windows puts there).
                let byte = hi << 4 | lo;
                let refused = match mode {
                    Mode::Host => hi < 8 && &b[i..i + 3] != b"%25",
                    Mode::Zone => {
                        &b[i..i + 3] != b"%25" && byte != b' ' && should_escape(byte, Mode::Host)
                    }
                    _ => false,
                };
                if refused {
                    return Err(format!("invalid URL escape {:?}", &s[i..i + 3]));
                }
                out.push(byte);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!("invalid character {:?} in host name", c as char));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `escape` for a path or a fragment.
fn escape(s: &[u8], mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s {
        if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(c as char);
        }
    }
    out
}

/// Go's `validEncoded`: whether text as written is a valid encoding (RFC 3986's pchar, and the
/// brackets browsers leave alone).
fn valid_encoded(raw: &str, mode: Mode) -> bool {
    raw.bytes()
        .all(|c| b"!$&\'()*+,;=:@[]%".contains(&c) || !should_escape(c, mode))
}

/// Go's `validOptionalPort`: empty, or `:` and digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `getScheme`: the scheme, and the rest; no scheme when the text does not start with one.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseHost` as of the releases Kubernetes 1.3x builds with (Go 1.24.8, 1.25.2 and later):
/// a bracketed host must hold an IPv6 address, a `[` elsewhere is refused, and so is a second `:`
/// outside brackets (`a:1:2`).
fn parse_host(host: &str) -> Result<Vec<u8>, String> {
    if host.starts_with('[') {
        let close = host.rfind(']').ok_or("missing ']' in host")?;
        let port = &host[close + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
        // RFC 6874: `%25` starts a zone, which has escaping rules of its own.
        let zone = host[..close].find("%25");
        let address = &host[1..zone.unwrap_or(close)];
        if address.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("invalid IP-literal {:?}", &host[..=close]));
        }
        if let Some(zone) = zone {
            let mut out = unescape(&host[..zone], Mode::Host)?;
            out.extend(unescape(&host[zone..close], Mode::Zone)?);
            out.extend(unescape(&host[close..], Mode::Host)?);
            return Ok(out);
        }
    } else if host.contains('[') {
        return Err(format!("invalid IP-literal {host:?}"));
    } else if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_optional_port(port) || host[..colon].contains(':') {
            return Err(format!("invalid port {port:?} after host"));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_userinfo(s: &str) -> bool {
    s.bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._:~!$&\'()*+,;=%@".contains(&c))
}

/// Go's `parse(rawURL, viaRequest)`, with the fragment already split off.
fn parse(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url {
        scheme: String::new(),
        opaque: String::new(),
        user: None,
        host: Vec::new(),
        path: Vec::new(),
        raw_path: String::new(),
        raw_query: String::new(),
        force_query: false,
        fragment: Vec::new(),
        raw_fragment: String::new(),
        text: raw.to_string(),
    };
    if raw == "*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // A rootless path after a scheme is opaque (RFC 3986).
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest.split('/').next().unwrap_or("").contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let (authority, path) = match rest[2..].find('/') {
            Some(i) => (&rest[2..2 + i], &rest[2 + i..]),
            None => (&rest[2..], ""),
        };
        match authority.rfind('@') {
            Some(at) => {
                url.host = parse_host(&authority[at + 1..])?;
                let userinfo = &authority[..at];
                if !valid_userinfo(userinfo) {
                    return Err("net/url: invalid userinfo".into());
                }
                // Go splits the user name from the password at the first `:` and unescapes each
                // with no host checks.
                let (name, password) = match userinfo.split_once(':') {
                    Some((n, p)) => (n, Some(p)),
                    None => (userinfo, None),
                };
                let bad = |_| "net/url: invalid userinfo".to_string();
                url.user = Some((
                    unescape(name, Mode::Path).map_err(bad)?,
                    password
                        .map(|p| unescape(p, Mode::Path))
                        .transpose()
                        .map_err(bad)?,
                ));
            }
            None => url.host = parse_host(authority)?,
        }
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    // The path as written is kept only where it differs from the default escaping.
    if escape(&url.path, Mode::Path) != rest {
        url.raw_path = rest.to_string();
    }
    Ok(url)
}

impl Url {
    /// Kubernetes' `isURL`: whether `url.ParseRequestURI` takes the text (the fragment is not
    /// split off there, so a bad escape after `#` in a query goes unchecked, as in Go).
    pub(super) fn is_request_uri(text: &str) -> bool {
        parse(text, true).is_ok()
    }

    /// Reads `text` as Kubernetes' `url()` does: valid for `url.ParseRequestURI` (an absolute
    /// URI or an absolute path), then split by `url.Parse` (which takes the fragment apart).
    pub(super) fn parse(text: &str) -> Result<Url, String> {
        parse(text, true)
            .map_err(|e| format!("URL parse error during conversion from string: {e}"))?;
        let (before, fragment) = text.split_once('#').unwrap_or((text, ""));
        let mut url = parse(before, false)
            .map_err(|e| format!("URL parse error during conversion from string: {e}"))?;
        url.fragment = unescape(fragment, Mode::Fragment)
            .map_err(|e| format!("URL parse error during conversion from string: {e}"))?;
        url.raw_fragment = fragment.to_string();
        url.text = text.to_string();
        Ok(url)
    }

    pub(super) fn scheme(&self) -> &str {
        &self.scheme
    }

    pub(super) fn host(&self) -> String {
        String::from_utf8_lossy(&self.host).into_owned()
    }

    /// Go's `splitHostPort`: the host without a valid `:port`, IPv6 brackets removed.
    fn split_host_port(&self) -> (String, String) {
        let host = self.host();
        let (mut name, port) = match host.rfind(':') {
            Some(colon) if valid_optional_port(&host[colon..]) => {
                (host[..colon].to_string(), host[colon + 1..].to_string())
            }
            _ => (host.clone(), String::new()),
        };
        if name.starts_with('[') && name.ends_with(']') && name.len() >= 2 {
            name = name[1..name.len() - 1].to_string();
        }
        (name, port)
    }

    pub(super) fn hostname(&self) -> String {
        self.split_host_port().0
    }

    pub(super) fn port(&self) -> String {
        self.split_host_port().1
    }

    /// Go's `EscapedPath`: the path as written when that is a valid encoding of it, else the
    /// path escaped.
    pub(super) fn escaped_path(&self) -> String {
        let raw = &self.raw_path;
        let valid_encoded = valid_encoded(raw, Mode::Path);
        if !raw.is_empty()
            && valid_encoded
            && unescape(raw, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return raw.clone();
        }
        if self.path == b"*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }

    /// Go's `Query`: each key's values in order; pairs with a `;` or a bad escape are left out.
    pub(super) fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) = (
                unescape(key, Mode::QueryComponent),
                unescape(value, Mode::QueryComponent),
            ) else {
                continue;
            };
            let key = String::from_utf8_lossy(&key).into_owned();
            let value = String::from_utf8_lossy(&value).into_owned();
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(value),
                None => out.push((key, vec![value])),
            }
        }
        out
    }

    /// Go's `EscapedFragment`: the fragment as written when that is a valid encoding of it, else
    /// the fragment escaped.
    fn escaped_fragment(&self) -> String {
        let raw = &self.raw_fragment;
        let valid_encoded = valid_encoded(raw, Mode::Fragment);
        if valid_encoded {
            return raw.clone();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    pub(super) fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of Kubernetes' `urls.go`.
    #[test]
    fn kubernetes_examples() {
        for ok in [
            "https://user:pass@example.com:80/path?query=val#fragment",
            "/absolute-path",
            "https://example.com/path with spaces/",
            "*",
        ] {
            assert!(Url::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "https://a:b:c/",
            "../relative-path",
            "",
            "relative",
            "https://exa mple.com/",
            "/path%zz",
            "/p%é",
            "/p%xé",
            "https://h%é/",
            "https://example.com/\n",
            ":no-scheme",
            // Go 1.24.8/1.25.2 and later: brackets hold an IPv6 address, and only at the start.
            "https://[1.2.3.4]/",
            "https://a[b]/",
            "https://[v1.x]/",
            "https://a:1:2/",
            // A zone may not escape what it could not hold unescaped.
            "https://[fe80::1%25en%2F0]/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
        assert!(Url::parse("https://[fe80::1%25en0]:8080/").is_ok());
        assert!(Url::parse("https://[fe80::1%25en%200]/").is_ok());
        // `isURL` checks as ParseRequestURI does, where the fragment is not split off.
        assert!(Url::is_request_uri("https://example.com/?#%zz"));
        assert!(Url::parse("https://example.com/?#%zz").is_err());
        let u = |s| Url::parse(s).unwrap();
        // Equal when Go writes them alike (`URL.String()`).
        assert_eq!(u("/a b"), u("/a%20b"));
        assert_ne!(u("/a#%41"), u("/a#A"));
        assert_ne!(u("https://a%3Ab@h/"), u("https://a:b@h/"));
        assert_eq!(u("https://a%62@h/"), u("https://ab@h/"));
        assert_eq!(u("/path").scheme(), "");
        assert_eq!(u("HTTPS://example.com/").scheme(), "https");
        assert_eq!(u("https://example.com:80/").host(), "example.com:80");
        assert_eq!(u("https://example.com:443/").host(), "example.com:443");
        assert_eq!(u("https://[::1]:80/").host(), "[::1]:80");
        assert_eq!(u("https://[::1]/").host(), "[::1]");
        assert_eq!(u("/path").host(), "");
        assert_eq!(u("https://example.com:80/").hostname(), "example.com");
        assert_eq!(u("https://127.0.0.1:80/").hostname(), "127.0.0.1");
        assert_eq!(u("https://[::1]:80/").hostname(), "::1");
        assert_eq!(u("https://example.com:80/").port(), "80");
        assert_eq!(u("https://example.com/").port(), "");
        assert_eq!(u("https://example.com/path").escaped_path(), "/path");
        assert_eq!(
            u("https://example.com/path with spaces/").escaped_path(),
            "/path%20with%20spaces/"
        );
        assert_eq!(u("https://example.com").escaped_path(), "");
        assert_eq!(u("https://example.com/a%2Fb").escaped_path(), "/a%2Fb");
        // Go keeps the path as written when it is a valid encoding of it.
        assert_eq!(u("https://example.com/a%41").escaped_path(), "/a%41");
        assert_eq!(u("https://example.com/p#frag").escaped_path(), "/p");
        assert_eq!(
            u("https://example.com/path?k1=a&k2=b&k2=c").query(),
            vec![
                ("k1".to_string(), vec!["a".to_string()]),
                ("k2".to_string(), vec!["b".to_string(), "c".to_string()])
            ]
        );
        assert_eq!(
            u("https://example.com/path?key with spaces=value with spaces").query(),
            vec![(
                "key with spaces".to_string(),
                vec!["value with spaces".to_string()]
            )]
        );
        assert_eq!(u("https://example.com/path?a+b=%41&x;y=1").query().len(), 1);
        assert!(u("https://example.com/path?").query().is_empty());
        // Go checks no escapes in the query when parsing; `Query` skips the bad pair.
        assert_eq!(u("/p?%xé=1&a=b").query().len(), 1);
        assert!(u("https://example.com/path").query().is_empty());
        assert_eq!(
            u("https://example.com/a?b#c"),
            u("https://example.com/a?b#c")
        );
        assert_ne!(u("https://example.com/a"), u("https://example.com/b"));
        assert_eq!(u("HTTPS://example.com/a"), u("https://example.com/a"));
        assert_ne!(u("https://example.com/a?"), u("https://example.com/a"));
    }
}
