//! Semantic versions as Kubernetes' CEL semver library reads them (blang/semver, SemVer 2.0):
//! `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, precedence by the numbers, then the pre-release
//! (a release is above its pre-releases), build metadata ignored.
//!
//! Hand-written: the `semver` crate's `Version` orders build metadata too, where SemVer (and
//! blang) ignore it, and this is a few dozen lines.

use std::cmp::Ordering;

#[derive(Debug, Clone)]
pub struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// The pre-release identifiers, validated, dot-separated (empty for a release).
    pre: String,
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
    pub(super) fn parse(text: &str, normalize: bool) -> Result<Semver, String> {
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
        if let Some(p) = pre {
            for id in identifiers(p)? {
                if id.bytes().all(|b| b.is_ascii_digit()) {
                    number(id)?;
                }
            }
        }
        let pre = pre.unwrap_or("").to_string();
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
        precedence(
            (self.major, self.minor, self.patch, &self.pre),
            (other.major, other.minor, other.patch, &other.pre),
        )
    }
}

/// SemVer 2.0 precedence of `(major, minor, patch, pre-release)`: the numbers, then a release
/// above its pre-releases, then the pre-releases (see [`compare_prerelease`]). Shared with
/// Helm's Masterminds semver, which orders versions the same way.
pub fn precedence(a: (u64, u64, u64, &str), b: (u64, u64, u64, &str)) -> Ordering {
    (a.0, a.1, a.2)
        .cmp(&(b.0, b.1, b.2))
        .then_with(|| match (a.3.is_empty(), b.3.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prerelease(a.3, b.3),
        })
}

/// SemVer 2.0 precedence of two pre-releases (`alpha.1` < `alpha.beta` < `beta.2` <
/// `beta.11`): identifier by identifier, numbers numerically and below words, a shorter list
/// first when one is a prefix of the other.
pub fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.split('.'), b.split('.'));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
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
