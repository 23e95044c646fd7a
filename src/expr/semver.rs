//! Semantic versions as Kubernetes' CEL semver library reads them (blang/semver, SemVer 2.0):
//! `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, precedence by the numbers, then the pre-release
//! (a release is above its pre-releases), build metadata ignored.
//!
//! Hand-written: the `semver` crate's `Version` orders build metadata too, where SemVer (and
//! blang) ignore it, and this is a few dozen lines.

use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ident {
    Numeric(u64),
    Text(String),
}

#[derive(Debug, Clone)]
pub struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pre: Vec<Ident>,
    text: String,
}

fn number(part: &str) -> Result<u64, String> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{part}` is not a number"));
    }
    if part.len() > 1 && part.starts_with('0') {
        return Err(format!("`{part}` has a leading zero"));
    }
    part.parse().map_err(|_| format!("`{part}` is too large"))
}

fn identifiers(text: &str) -> Result<Vec<&str>, String> {
    let ids: Vec<&str> = text.split('.').collect();
    for id in &ids {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(format!("`{text}` has an empty or invalid identifier"));
        }
    }
    Ok(ids)
}

impl Semver {
    /// Parses a version; with `normalize`, as Kubernetes' `semver(s, true)` does: a leading
    /// `v` is dropped and a missing minor or patch is zero (such a short form may carry no
    /// pre-release or build).
    pub fn parse(text: &str, normalize: bool) -> Result<Semver, String> {
        let mut t = text;
        if normalize {
            t = t.strip_prefix('v').unwrap_or(t);
        }
        let (rest, build) = match t.split_once('+') {
            Some((r, b)) => (r, Some(b)),
            None => (t, None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let mut parts: Vec<&str> = core.split('.').collect();
        if normalize && parts.len() < 3 {
            if pre.is_some() || build.is_some() {
                return Err("short version cannot contain PreRelease/Build meta data".into());
            }
            parts.resize(3, "0");
        }
        let [major, minor, patch] = parts.as_slice() else {
            return Err(format!("`{text}` is not MAJOR.MINOR.PATCH"));
        };
        let pre = match pre {
            Some(p) => identifiers(p)?
                .into_iter()
                .map(|id| {
                    if id.bytes().all(|b| b.is_ascii_digit()) {
                        number(id).map(Ident::Numeric)
                    } else {
                        Ok(Ident::Text(id.to_string()))
                    }
                })
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        if let Some(b) = build {
            identifiers(b)?;
        }
        let (major, minor, patch) = (number(major)?, number(minor)?, number(patch)?);
        let mut text = format!("{major}.{minor}.{patch}");
        if let Some(p) = rest.split_once('-').map(|(_, p)| p) {
            text.push('-');
            text.push_str(p);
        }
        Ok(Semver {
            major,
            minor,
            patch,
            pre,
            text,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

impl PartialEq for Semver {
    fn eq(&self, other: &Semver) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Semver {}

impl PartialOrd for Semver {
    fn partial_cmp(&self, other: &Semver) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Semver {
    fn cmp(&self, other: &Semver) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let o = match (a, b) {
                            (Ident::Numeric(x), Ident::Numeric(y)) => x.cmp(y),
                            (Ident::Numeric(_), Ident::Text(_)) => Ordering::Less,
                            (Ident::Text(_), Ident::Numeric(_)) => Ordering::Greater,
                            (Ident::Text(x), Ident::Text(y)) => x.cmp(y),
                        };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::Semver;

    fn v(t: &str) -> Semver {
        Semver::parse(t, false).unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    /// SemVer 2.0's own precedence example, and Kubernetes' normalisation.
    #[test]
    fn precedence_is_semvers() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "2.0.0",
            "2.1.0",
            "2.1.1",
        ];
        for w in order.windows(2) {
            assert!(v(w[0]) < v(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(v("1.0.0+build.1"), v("1.0.0+other"));
        assert_eq!(Semver::parse("v1.25", true).unwrap(), v("1.25.0"));
        for bad in ["1.2", "1.2.3-", "1.2.3-01", "01.2.3", "1.2.3+", "a.b.c"] {
            assert!(Semver::parse(bad, false).is_err(), "{bad}");
        }
        assert!(Semver::parse("1.0-rc1", true).is_err());
    }
}
