//! Kubernetes' URL library, in every Kubernetes version (`go_url.rs`).

use super::*;

pub(super) fn register(r: &mut Registry) {
    fn url(v: &Val<'_>) -> Result<Rc<Net>, EvalError> {
        match v {
            Val::Net(n) if matches!(**n, Net::Url(_)) => Ok(n.clone()),
            _ => match v.kind() {
                Kind::Str(t) => Url::parse(t)
                    .map(|u| Rc::new(Net::Url(Box::new(u))))
                    .map_err(err),
                _ => Err(err(format!("{} is not a URL", v.type_name()))),
            },
        }
    }
    r.add(
        "url(string) -> kubernetes.URL",
        "a URL as Go's `net/url` reads it: an absolute URI (`https://example.com:8443/a?b=c`) or an absolute path (`/healthz`); an error for anything else",
        |_, a| Ok(Val::Net(url(&a[0])?)),
    );
    r.add(
        "isURL(string) -> bool",
        "whether the text is an absolute URI or an absolute path (Go's `url.ParseRequestURI`, which `url()` also requires)",
        |_, a| Ok(Val::Bool(Url::is_request_uri(s(&a[0])))),
    );
    for (sig, doc) in [
        (
            "kubernetes.URL.getScheme() -> string",
            "the scheme, lower-cased (`''` for a path)",
        ),
        (
            "kubernetes.URL.getHost() -> string",
            "the host with its port as written (`example.com:80`, `[::1]:80`; `''` for a path)",
        ),
        (
            "kubernetes.URL.getHostname() -> string",
            "the host without port or IPv6 brackets (`::1`)",
        ),
        (
            "kubernetes.URL.getPort() -> string",
            "the port as written, or `''`",
        ),
        (
            "kubernetes.URL.getEscapedPath() -> string",
            "the path, percent-encoded (`/path%20with%20spaces/`)",
        ),
    ] {
        r.add(sig, doc, |c, a| {
            let n = url(&a[0])?;
            let Net::Url(u) = &*n else {
                return Err(err("not a URL"));
            };
            Ok(Val::str(match c.name {
                "getScheme" => u.scheme().to_string(),
                "getHost" => u.host(),
                "getHostname" => u.hostname(),
                "getPort" => u.port(),
                _ => u.escaped_path(),
            }))
        });
    }
    r.add(
        "kubernetes.URL.getQuery() -> map(string, list(string))",
        "the query's values by key, unescaped (`?k=a&k=b` gives `{'k': ['a', 'b']}`)",
        |_, a| {
            let n = url(&a[0])?;
            let Net::Url(u) = &*n else {
                return Err(err("not a URL"));
            };
            let entries = u
                .query()
                .into_iter()
                .map(|(k, vs)| {
                    let values = vs.into_iter().map(Val::str).collect();
                    (Val::str(k), Val::List(Rc::new(values)))
                })
                .collect();
            Ok(Val::Map(Rc::new(entries)))
        },
    );
}
