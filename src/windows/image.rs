//! Container image references: `[registry/]path[:tag][@digest]`, normalised the way Docker does
//! (no registry → `docker.io`, one path component → `library/`), so catalog regexes see one form.

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImageRef {
    pub original: String,
    /// Normalised repository, lower case: `mcr.microsoft.com/windows/servercore`, `docker.io/library/busybox`.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
    /// The tag as its tokens are read: `ltsc-2022` spelled as the one token `ltsc2022` (tags write
    /// the channel and year both ways, `…-windows-ltsc-2022` and `…-ltsc2022`).
    tag_words: String,
}

impl ImageRef {
    /// Tag tokens: the tag split at `-` and `_` (`4.8-windowsservercore-ltsc2019` → `4.8`,
    /// `windowsservercore`, `ltsc2019`).
    pub(crate) fn tag_tokens(&self) -> impl Iterator<Item = &str> {
        self.tag_words.split(['-', '_']).filter(|t| !t.is_empty())
    }
}

pub(crate) fn parse_image(image: &str) -> ImageRef {
    let original = image.trim().to_string();
    let (rest, digest) = match original.split_once('@') {
        Some((r, d)) => (r, Some(d.to_string())),
        None => (original.as_str(), None),
    };
    // A `:` after the last `/` starts the tag (a `:` before it is a registry port).
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].find(':') {
        Some(i) => (
            &rest[..last_slash + i],
            Some(rest[last_slash + i + 1..].to_string()),
        ),
        None => (rest, None),
    };
    let mut parts: Vec<&str> = name.split('/').collect();
    let has_registry = parts.len() > 1
        && (parts[0].contains('.') || parts[0].contains(':') || parts[0] == "localhost");
    let docker_hub = has_registry
        && (parts[0].eq_ignore_ascii_case("docker.io")
            || parts[0].eq_ignore_ascii_case("index.docker.io"));
    let repository = if docker_hub {
        // Docker Hub by its name or its old index name: as without one.
        let path = &parts[1..];
        let library = if path.len() == 1 { "library/" } else { "" };
        format!("docker.io/{library}{}", path.join("/")).to_lowercase()
    } else if has_registry {
        name.to_lowercase()
    } else {
        if parts.len() == 1 {
            parts.insert(0, "library");
        }
        format!("docker.io/{}", parts.join("/")).to_lowercase()
    };
    let tag = tag.filter(|t| !t.is_empty());
    ImageRef {
        tag_words: tag.as_deref().map(join_channel_years).unwrap_or_default(),
        original,
        repository,
        tag,
        digest,
    }
}

/// `tag` with each `ltsc`/`sac` followed by `-`/`_` and a four-digit year joined to it.
fn join_channel_years(tag: &str) -> String {
    let mut out = String::with_capacity(tag.len());
    let mut words = tag.split_inclusive(['-', '_']).peekable();
    while let Some(word) = words.next() {
        let bare = word.trim_end_matches(['-', '_']);
        let joins = bare.eq_ignore_ascii_case("ltsc") || bare.eq_ignore_ascii_case("sac");
        let next_is_year = words.peek().is_some_and(|n| {
            let n = n.trim_end_matches(['-', '_']);
            n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit())
        });
        out.push_str(if joins && next_is_year { bare } else { word });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_repositories() {
        let i =
            parse_image("mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019");
        assert_eq!(i.repository, "mcr.microsoft.com/dotnet/framework/aspnet");
        assert_eq!(
            i.tag_tokens().collect::<Vec<_>>(),
            ["4.8", "windowsservercore", "ltsc2019"]
        );
        assert_eq!(
            parse_image("busybox").repository,
            "docker.io/library/busybox"
        );
        assert_eq!(
            parse_image("microsoft/iis:nanoserver").repository,
            "docker.io/microsoft/iis"
        );
        // Docker Hub named, by either name: the same repository as unnamed.
        for named in ["docker.io/busybox", "index.docker.io/library/busybox:1"] {
            assert_eq!(parse_image(named).repository, "docker.io/library/busybox");
        }
        assert_eq!(
            parse_image("Docker.io/Microsoft/IIS").repository,
            "docker.io/microsoft/iis"
        );
        let p = parse_image("localhost:5000/app:1.0@sha256:abc");
        assert_eq!(
            (p.repository.as_str(), p.tag.as_deref()),
            ("localhost:5000/app", Some("1.0"))
        );
        assert_eq!(p.digest.as_deref(), Some("sha256:abc"));
        let spelled = parse_image("example.com/agent:1.2-windows-ltsc-2022-amd64");
        assert_eq!(
            spelled.tag_tokens().collect::<Vec<_>>(),
            ["1.2", "windows", "ltsc2022", "amd64"]
        );
        assert_eq!(spelled.tag.as_deref(), Some("1.2-windows-ltsc-2022-amd64"));
    }
}
