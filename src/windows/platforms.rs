//! An image's platforms as its registry lists them (the OCI image index's `platform` entries, or
//! an image manifest's config), and the place the Windows model asks for them: the
//! [`ImagePlatformSource`] a run is given when it resolves images (`--resolve-images`). The model
//! reads only these plain values; how they are fetched and cached is the registry adapter's.

use std::sync::Arc;

/// One platform of an image: `windows/amd64` at `10.0.20348.2700`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Platform {
    pub os: String,
    /// `os.version` as the registry gives it (Windows images carry the full build,
    /// `10.0.17763.6414`).
    #[serde(
        rename = "os.version",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub os_version: Option<String>,
    pub architecture: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

impl Platform {
    /// `os/architecture[/variant]`, as `docker manifest inspect` and `--platform` write it.
    pub fn name(&self) -> String {
        match &self.variant {
            Some(v) => format!("{}/{}/{v}", self.os, self.architecture),
            None => format!("{}/{}", self.os, self.architecture),
        }
    }

    /// The Windows build of a Windows platform (`10.0.20348.2700` → 20348).
    pub fn windows_build(&self) -> Option<u64> {
        (self.os == "windows")
            .then_some(self.os_version.as_deref())
            .flatten()
            .and_then(super::build_of_version)
    }
}

/// What a registry says of one image: the digest its reference resolved to and the platforms
/// that digest holds (one for an image manifest, each entry's for an index).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImagePlatforms {
    pub digest: String,
    pub platforms: Vec<Platform>,
    /// The config file that states them (`images.platforms`), when they were not read.
    #[serde(skip)]
    pub stated_in: Option<String>,
}

impl ImagePlatforms {
    /// Where they come from, for messages: `its registry (sha256:0123456789ab)`, or the config
    /// that states them.
    pub fn origin(&self) -> String {
        match &self.stated_in {
            Some(file) => format!("`images.platforms` in {file}"),
            None => format!("its registry ({})", super::short_digest(&self.digest)),
        }
    }

    /// The OSes of its platforms, each once, in the registry's order.
    pub fn oses(&self) -> Vec<&str> {
        let mut oses: Vec<&str> = Vec::new();
        for p in &self.platforms {
            if !oses.contains(&p.os.as_str()) {
                oses.push(&p.os);
            }
        }
        oses
    }

    /// The Windows builds of its Windows platforms, sorted, each once.
    pub fn windows_builds(&self) -> Vec<u64> {
        let mut builds: Vec<u64> = self
            .platforms
            .iter()
            .filter_map(Platform::windows_build)
            .collect();
        builds.sort_unstable();
        builds.dedup();
        builds
    }

    /// Its platforms' names, comma-separated (`windows/amd64, linux/arm64`).
    pub fn names(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        for p in &self.platforms {
            let name = p.name();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.join(", ")
    }
}

/// Where the model gets an image's platforms when a run resolves images: `None` when they
/// could not be read (the source reports why; the model then judges the image by its name).
pub(crate) trait ImagePlatformSource: Send + Sync {
    fn platforms(&self, image: &str) -> Option<Arc<ImagePlatforms>>;
}
