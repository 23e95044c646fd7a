//! The facts of one pod and its containers, as records the rule expressions read field by field.
//!
//! What decides the pod's OS (its sources, the containers' images and builds) is worked out when
//! the facts are made; every field rules read is turned into a JSON value only when a rule first
//! reads it (see [`Record`]). Most fields of most pods are never read: a Linux pod's rules stop at
//! `pod.os`, and only IIS rules look at `container.script`.

use std::cell::OnceCell;

use crate::value::Doc;

use super::command::windows_shell;
use super::{
    BuildCompat, ImageFacts, ModelContext, NodesSelected, OS_KEYS, Source, affinity_values,
    analyse_command, build_compat, build_selectors, compat_rank, control_plane_selection,
    escape_pointer_token, nodes_selected, os_of, runtime_class_facts, selected_builds, str_map,
    unsupported_fields,
};
use crate::expr::{Record, RecordList, Val};

/// Declares a record's fields: an enum with one variant per field, its JSON name, what it means
/// (the rules/README.md fact tables are generated from these), and the lookup from name to field.
/// One list, so the names rules read, their docs and the names of the whole map agree.
macro_rules! fields {
    ($name:ident { $($variant:ident = $json:literal : $ty:literal : $doc:literal,)* }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $name { $($variant,)* }
        impl $name {
            /// Every field with its name, in the order of the whole map (sorted by name).
            pub(crate) const ALL: &'static [($name, &'static str)] = &[$(($name::$variant, $json),)*];
            /// Every field's name, its type as rule expressions see it, and what it means.
            pub(crate) const DECLS: &'static [(&'static str, &'static str, &'static str)] =
                &[$(($json, $ty, $doc),)*];
            /// Every field's name, in the same order.
            pub(crate) const NAMES: &'static [&'static str] = &[$($json,)*];

        }
    };
}

fields!(PodField {
    AllHostProcess = "allHostProcess" : "bool" : "every container (init, app and ephemeral) is HostProcess",
    AppContainers = "appContainers" : "int" : "the number of app containers (`spec.containers`)",
    BuildSelectors = "buildSelectors" : "list(dyn)" : "every `node.kubernetes.io/windows-build` value the pod selects, as written: `{site, value, pointer, valid, build, label}` (site: nodeSelector, affinity or runtimeClass; valid: of the form `MAJOR.MINOR.BUILD`)",
    BuildSource = "buildSource" : "dyn" : "where the selected builds come from: `{kind, pointer}`, or null",
    Conflicts = "conflicts" : "list(dyn)" : "the target-OS sources that contradict the deciding one: `{os, kind, reason, pointer}`",
    Containers = "containers" : "list(container)" : "the container records (init, app and ephemeral containers, in that order)",
    DecidedBy = "decidedBy" : "string" : "the kind of source that decided the OS (`os.name`, `nodeSelector`, `affinity`, `nodes` (the nodes of `--nodes` its selection matches), `runtimeClass`, `hostProcess`, `image`, `default`)",
    HostProcess = "hostProcess" : "bool" : "some container (or the pod) is HostProcess",
    ImageBuild = "imageBuild" : "dyn" : "the Windows build of the first Windows image with a known build, or null",
    ImageBuildLabel = "imageBuildLabel" : "dyn" : "that build as the node label writes it (`10.0.20348`)",
    LinuxSelected = "linuxSelected" : "bool" : "a nodeSelector, required affinity, RuntimeClass or required control-plane node keeps the pod on Linux nodes",
    MetaPath = "metaPath" : "string" : "JSON pointer to the pod (template) metadata in the object",
    NodeBuilds = "nodeBuilds" : "list(int)" : "the Windows builds the pod can land on: the selected ones, else `windows.nodeBuilds`",
    Os = "os" : "string" : "the OS the pod targets: `windows` or `linux` (RULES.md §1)",
    OsName = "osName" : "dyn" : "`spec.os.name` as written where the cluster keeps it (1.24 and later, or the IdentifyPodOS gate), else null",
    OsReason = "osReason" : "string" : "why: `targets Windows because …`",
    Path = "path" : "string" : "JSON pointer to the pod spec in the object",
    RuntimeClass = "runtimeClass" : "dyn" : "the pod's RuntimeClass from the input set or the config: `{name, found, os, nodeSelector, tolerations}`, or null",
    SelectedBuilds = "selectedBuilds" : "list(int)" : "the builds `node.kubernetes.io/windows-build` selects (nodeSelector, required affinity or RuntimeClass)",
    Sources = "sources" : "list(dyn)" : "every target-OS source found, in RULES.md §1 order: `{os, kind, reason, pointer}`",
    Tolerations = "tolerations" : "list(dyn)" : "the pod's tolerations and its RuntimeClass's (merged at admission)",
    UnsupportedFields = "unsupportedFields" : "list(dyn)" : "the Linux-only fields set on a Windows pod that reach validation on this cluster: `{field, pointer, container}`; empty for a Linux pod",
    WindowsIndicated = "windowsIndicated" : "dyn" : "the reason something other than a selector points at Windows (`os.name`, HostProcess, a Windows image), or null",
    WindowsSelected = "windowsSelected" : "bool" : "a nodeSelector, required affinity or RuntimeClass selects Windows nodes",
});

fields!(ContainerField {
    Build = "build" : "dyn" : "the image's Windows build when it has one (`ltsc2022` → 20348), or null (none known, or several)",
    BuildOrigin = "buildOrigin" : "dyn" : "where the image's builds come from: `its tag`, `its registry (sha256:…)` or the config stating them (`images.platforms`), or null",
    Builds = "builds" : "list(int)" : "the image's Windows builds: every one its registry lists (`--resolve-images`), else its tag's",
    BuildCompat = "buildCompat" : "dyn" : "whether the image runs on the builds the pod can land on: `exact`, `stable-abi` or `incompatible` (null without a build or for HostProcess)",
    BuildCompatHosts = "buildCompatHosts" : "list(dyn)" : "the host builds that verdict is about: `{build, label, name}`",
    BuildLabel = "buildLabel" : "dyn" : "the image's builds as the node label writes them (`10.0.20348`; several comma-separated)",
    BuildName = "buildName" : "dyn" : "the names of the image's builds (`Windows Server 2022`)",
    DefaultUser = "defaultUser" : "dyn" : "the image's default user when the catalog knows it (`ContainerUser`, `ContainerAdministrator`), or null",
    Digest = "digest" : "dyn" : "the image digest, or null",
    HasArgs = "hasArgs" : "bool" : "the container sets `args`",
    HasCommand = "hasCommand" : "bool" : "the container sets `command`",
    HostProcess = "hostProcess" : "bool" : "the container is HostProcess (its own setting, else the pod's)",
    Iis = "iis" : "bool" : "the image is an IIS image (entrypoint `ServiceMonitor.exe w3svc`)",
    Image = "image" : "string" : "the image as written",
    ImageOs = "imageOs" : "dyn" : "the OS the image is known for: `windows`, `linux`, or null (unknown, or published for both)",
    ImageOsReason = "imageOsReason" : "dyn" : "why (`its repository …`, `its tag token …`)",
    Kind = "kind" : "string" : "`containers`, `initContainers` or `ephemeralContainers`",
    Name = "name" : "dyn" : "the container's name",
    Os = "os" : "dyn" : "the container's OS as far as it shows: `imageOs`, else `windows` when its command runs a Windows shell, else null",
    OsReason = "osReason" : "dyn" : "why (`its repository …`, `its command runs powershell.exe`)",
    Path = "path" : "string" : "JSON pointer to the container in the object",
    PlatformOses = "platformOses" : "list(string)" : "the OSes of the image's platforms as its registry lists them (`--resolve-images`); empty when not read",
    Platforms = "platforms" : "dyn" : "the image's platforms as its registry lists them: `{digest, names, origin, list: [{os, osVersion, architecture}]}` (origin: `its registry (sha256:…)` or the config stating them), or null when not read",
    Repository = "repository" : "string" : "the normalised repository (`docker.io/library/busybox`)",
    Role = "role" : "string" : "`container`, `init container` or `ephemeral container` (for messages)",
    Script = "script" : "dyn" : "the entrypoint analysis: `{shell, steps, serviceMonitor, serviceMonitorLast, lastStep, copies: [{source, step}]}`, or null without command and args",
    Tag = "tag" : "dyn" : "the image tag, or null",
});

/// A record's every field as one JSON map (for a rule that uses the whole record as a value).
fn whole_map<'r, 'd: 'r, F: Copy>(fields: &[(F, &str)], get: impl Fn(F) -> &'r Doc<'d>) -> Doc<'d> {
    Doc::Object(
        fields
            .iter()
            .map(|(f, name)| (name.to_string(), get(*f).clone()))
            .collect(),
    )
}

const POD_FIELDS: usize = PodField::ALL.len();
const CONTAINER_FIELDS: usize = ContainerField::ALL.len();

/// The facts of one container.
pub struct ContainerFacts<'a> {
    ctx: &'a ModelContext<'a>,
    /// The container as written.
    pub raw: &'a Doc<'a>,
    /// `containers`, `initContainers` or `ephemeralContainers`.
    pub kind: &'static str,
    /// JSON pointer to the container in the object.
    pub path: String,
    image_text: &'a str,
    /// What the catalog makes of the image (shared by the containers with the same image).
    of_image: std::sync::Arc<ImageFacts>,
    /// The Windows shell its command runs, when the image tells nothing.
    windows_shell: Option<&'a str>,
    host_process: bool,
    compat: Option<&'static str>,
    compat_hosts: Vec<u64>,
    cells: [OnceCell<Doc<'a>>; CONTAINER_FIELDS],
    whole: OnceCell<Doc<'a>>,
}

impl<'a> ContainerFacts<'a> {
    fn new(
        ctx: &'a ModelContext<'a>,
        raw: &'a Doc<'a>,
        kind: &'static str,
        path: String,
        pod_host_process: Option<bool>,
        selected_builds: &[u64],
    ) -> Self {
        let image_text = raw.get("image").and_then(Doc::as_str).unwrap_or("");
        let of_image = ctx.image_facts(image_text);
        let builds = of_image.builds.as_slice();
        let host_process = raw
            .pointer("/securityContext/windowsOptions/hostProcess")
            .and_then(Doc::as_bool)
            .or(pod_host_process)
            .unwrap_or(false);
        // Can the image run where the pod lands? With a build selection, on every selected build
        // (the worst case); without one, on some configured node build (the best case). A host
        // runs an image of several builds when one of them suits it (containerd picks that one).
        // HostProcess containers don't inherit the compatibility requirements.
        let (compat, compat_hosts) = if builds.is_empty() || host_process {
            (None, Vec::new())
        } else {
            let (hosts, worst) = if selected_builds.is_empty() {
                (ctx.profile.node_builds.as_slice(), false)
            } else {
                (selected_builds, true)
            };
            let on_host = |h: u64| {
                builds
                    .iter()
                    .map(|b| build_compat(h, *b))
                    .min_by_key(|c| compat_rank(*c))
                    .unwrap_or(BuildCompat::Incompatible)
            };
            let results = hosts.iter().map(|h| on_host(*h));
            let summary = if worst {
                results.max_by_key(|c| compat_rank(*c))
            } else {
                results.min_by_key(|c| compat_rank(*c))
            };
            (summary.map(BuildCompat::as_str), hosts.to_vec())
        };
        let windows_shell = if of_image.os.is_none() {
            windows_shell(&ctx.catalog.commands, raw.get("command"))
        } else {
            None
        };
        ContainerFacts {
            ctx,
            raw,
            kind,
            path,
            image_text,
            of_image,
            windows_shell,
            host_process,
            compat,
            compat_hosts,
            cells: Default::default(),
            whole: OnceCell::new(),
        }
    }

    pub fn name(&self) -> &str {
        self.raw.get("name").and_then(Doc::as_str).unwrap_or("")
    }

    /// The container's OS as far as it shows: its image's, else Windows when its command runs
    /// a Windows shell.
    fn os(&self) -> Option<&'static str> {
        self.of_image.os.or(self.windows_shell.map(|_| "windows"))
    }

    fn command(&self) -> Option<&'a Doc<'a>> {
        self.raw.get("command").filter(|v| !v.is_null())
    }

    fn args(&self) -> Option<&'a Doc<'a>> {
        self.raw.get("args").filter(|v| !v.is_null())
    }

    fn compute(&self, field: ContainerField) -> Doc<'a> {
        use ContainerField as F;
        let catalog = self.ctx.catalog;
        match field {
            F::Build => Doc::from(match self.of_image.builds.as_slice() {
                [one] => Some(*one),
                _ => None,
            }),
            F::BuildOrigin => Doc::from(self.of_image.build_origin.as_deref()),
            F::Builds => Doc::Array(self.of_image.builds.iter().map(|b| Doc::from(*b)).collect()),
            F::BuildCompat => Doc::from(self.compat),
            F::BuildCompatHosts => Doc::Array(
                self.compat_hosts
                    .iter()
                    .map(|h| {
                        Doc::object([
                            ("build", Doc::from(*h)),
                            ("label", Doc::from(format!("10.0.{h}"))),
                            ("name", Doc::from(catalog.build_name(*h))),
                        ])
                    })
                    .collect(),
            ),
            F::BuildLabel => Doc::from((!self.of_image.builds.is_empty()).then(|| {
                let labels: Vec<String> = self
                    .of_image
                    .builds
                    .iter()
                    .map(|b| format!("10.0.{b}"))
                    .collect();
                labels.join(", ")
            })),
            F::BuildName => Doc::from((!self.of_image.builds.is_empty()).then(|| {
                let names: Vec<String> = self
                    .of_image
                    .builds
                    .iter()
                    .map(|b| catalog.build_name(*b))
                    .collect();
                names.join(", ")
            })),
            F::DefaultUser => Doc::from(self.of_image.default_user(catalog)),
            F::Digest => Doc::from(self.of_image.image.digest.as_deref()),
            F::HasArgs => Doc::Bool(self.args().is_some()),
            F::HasCommand => Doc::Bool(self.command().is_some()),
            F::HostProcess => Doc::Bool(self.host_process),
            F::Iis => Doc::Bool(self.of_image.is_iis(catalog)),
            F::Image => Doc::from(self.image_text),
            F::ImageOs => Doc::from(self.of_image.os),
            F::ImageOsReason => Doc::from(self.of_image.os_reason.as_deref()),
            F::Kind => Doc::from(self.kind),
            F::Name => self.raw.get("name").cloned().unwrap_or(Doc::Null),
            F::Os => Doc::from(self.os()),
            F::OsReason => Doc::from(match (self.of_image.os, self.windows_shell) {
                (Some(_), _) => self.of_image.os_reason.clone(),
                (None, Some(shell)) => Some(format!("its command runs `{shell}`")),
                (None, None) => None,
            }),
            F::Path => Doc::from(self.path.as_str()),
            F::PlatformOses => Doc::Array(
                self.of_image
                    .registry
                    .as_ref()
                    .map(|r| r.oses().into_iter().map(Doc::from).collect())
                    .unwrap_or_default(),
            ),
            F::Platforms => match &self.of_image.registry {
                None => Doc::Null,
                Some(r) => Doc::object([
                    ("digest", Doc::from(r.digest.as_str())),
                    ("names", Doc::from(r.names())),
                    ("origin", Doc::from(r.origin())),
                    (
                        "list",
                        Doc::Array(
                            r.platforms
                                .iter()
                                .map(|p| {
                                    Doc::object([
                                        ("os", Doc::from(p.os.as_str())),
                                        ("osVersion", Doc::from(p.os_version.as_deref())),
                                        ("architecture", Doc::from(p.architecture.as_str())),
                                    ])
                                })
                                .collect(),
                        ),
                    ),
                ]),
            },
            F::Repository => Doc::from(self.of_image.image.repository.as_str()),
            F::Role => Doc::from(match self.kind {
                "initContainers" => "init container",
                "ephemeralContainers" => "ephemeral container",
                _ => "container",
            }),
            F::Script => analyse_command(&catalog.commands, self.command(), self.args()),
            F::Tag => Doc::from(self.of_image.image.tag.as_deref()),
        }
    }

    fn get(&self, field: ContainerField) -> &Doc<'a> {
        self.cells[field as usize].get_or_init(|| self.compute(field))
    }

    /// Every field, as one map (for the container used as a value).
    fn whole(&self) -> &Doc<'a> {
        self.whole
            .get_or_init(|| whole_map(ContainerField::ALL, |f| self.get(f)))
    }
}

impl Record for ContainerFacts<'_> {
    fn field(&self, index: usize) -> Val<'_> {
        Val::Ref(self.get(ContainerField::ALL[index].0))
    }

    fn names(&self) -> &'static [&'static str] {
        ContainerField::NAMES
    }

    fn value(&self) -> &Doc<'_> {
        self.whole()
    }
}

/// The target-OS facts of one pod spec.
pub(crate) struct PodFacts<'a> {
    ctx: &'a ModelContext<'a>,
    spec: &'a Doc<'a>,
    spec_path: &'a str,
    meta_path: &'a str,
    /// `spec.os.name` where the cluster keeps it (from 1.24), as written.
    os_name: Option<&'a str>,
    /// The pod's containers, init and ephemeral containers, in that order.
    pub containers: Vec<ContainerFacts<'a>>,
    sources: Vec<Source>,
    /// The source that decided the OS (by index into `sources`).
    decisive: Option<usize>,
    /// `windows` or `linux`.
    pub os: &'static str,
    reason: String,
    decided_by: &'static str,
    runtime_class: Option<Doc<'a>>,
    selected_builds: Vec<u64>,
    build_source: Doc<'a>,
    any_host_process: bool,
    all_host_process: bool,
    app_containers: usize,
    cells: [OnceCell<Doc<'a>>; POD_FIELDS],
    whole: OnceCell<Doc<'a>>,
}

impl<'a> PodFacts<'a> {
    /// Works out which OS the pod spec targets and why. `spec_path` and `meta_path` are JSON
    /// pointers into the object.
    pub(crate) fn new(
        ctx: &'a ModelContext<'a>,
        spec: &'a Doc<'a>,
        spec_path: &'a str,
        meta_path: &'a str,
    ) -> Self {
        let os_name = spec
            .pointer("/os/name")
            .and_then(Doc::as_str)
            .filter(|_| ctx.profile.gate("IdentifyPodOS", Some((1, 24))));
        let runtime_class = runtime_class_facts(ctx, spec);
        let by_nodes = nodes_selected(ctx, spec, spec_path, runtime_class.as_ref());
        let mut sources = scheduling_sources(
            spec,
            spec_path,
            os_name,
            runtime_class.as_ref(),
            by_nodes.as_ref(),
        );
        // Node builds the pod can land on.
        let (selected_builds, build_source) = selected_builds(
            ctx,
            spec,
            runtime_class.as_ref(),
            by_nodes.as_ref(),
            spec_path,
        );
        let pod_host_process = spec
            .pointer("/securityContext/windowsOptions/hostProcess")
            .and_then(Doc::as_bool);
        let containers = containers_of(ctx, spec, spec_path, pod_host_process, &selected_builds);
        let any_host_process =
            pod_host_process == Some(true) || containers.iter().any(|c| c.host_process);
        let all_host_process = containers.iter().all(|c| c.host_process);
        let app_containers = containers.iter().filter(|c| c.kind == "containers").count();
        push_container_sources(
            &mut sources,
            &containers,
            spec_path,
            pod_host_process,
            any_host_process,
        );
        let (decisive, os, reason, decided_by) = decide(&sources);
        PodFacts {
            ctx,
            spec,
            spec_path,
            meta_path,
            os_name,
            containers,
            sources,
            decisive,
            os,
            reason,
            decided_by,
            runtime_class,
            selected_builds,
            build_source,
            any_host_process,
            all_host_process,
            app_containers,
            cells: Default::default(),
            whole: OnceCell::new(),
        }
    }

    /// `windowsOptions` outside HostProcess: where it is set, if anywhere.
    fn windows_options_at(&self) -> Option<String> {
        let spec_path = self.spec_path;
        if self
            .spec
            .pointer("/securityContext/windowsOptions")
            .is_some()
        {
            return Some(format!("{spec_path}/securityContext/windowsOptions"));
        }
        self.spec
            .get("containers")
            .and_then(Doc::as_array)
            .into_iter()
            .flatten()
            .position(|c| c.pointer("/securityContext/windowsOptions").is_some())
            .map(|i| format!("{spec_path}/containers/{i}/securityContext/windowsOptions"))
    }

    /// Contradictions of the deciding source. Images take part only when a non-image source
    /// decided (image against image is `mixed-os-pod`'s business), and only by their names: an
    /// OS the registry listed is `windows-image-os-mismatch`'s, which names the digest.
    fn conflicts(&self) -> Vec<Doc<'a>> {
        let mut conflicts = Vec::new();
        let Some(d) = self.decisive.map(|i| &self.sources[i]) else {
            return conflicts;
        };
        for s in &self.sources {
            if s.os != d.os && !(s.kind == "image" && (d.kind == "image" || s.from_registry)) {
                conflicts.push(Doc::object([
                    ("os", Doc::from(s.os)),
                    ("kind", Doc::from(s.kind)),
                    ("reason", Doc::from(s.reason.as_str())),
                    ("pointer", Doc::from(s.pointer.as_str())),
                ]));
            }
        }
        // `windowsOptions` only contradicts `os.name: linux` (§3.1 validateLinux).
        if d.kind == "os.name"
            && d.os == "linux"
            && let Some(ptr) = self.windows_options_at()
        {
            conflicts.push(Doc::object([
                ("os", Doc::from("windows")),
                ("kind", Doc::from("windowsOptions")),
                (
                    "reason",
                    Doc::from(
                        "`windowsOptions` is set, which the API server forbids for a Linux pod",
                    ),
                ),
                ("pointer", Doc::from(ptr)),
            ]));
        }
        conflicts
    }

    fn selected_by(&self, os: &str) -> bool {
        self.sources.iter().any(|s| {
            matches!(
                s.kind,
                "nodeSelector" | "affinity" | "nodes" | "runtimeClass" | "controlPlane"
            ) && s.os == os
        })
    }

    fn windows_build(&self) -> Option<u64> {
        self.containers
            .iter()
            .filter(|c| c.of_image.os == Some("windows"))
            .find_map(|c| match c.of_image.builds.as_slice() {
                [one] => Some(*one),
                _ => None,
            })
    }

    fn compute(&self, field: PodField) -> Doc<'a> {
        use PodField as F;
        match field {
            F::AllHostProcess => Doc::Bool(self.any_host_process && self.all_host_process),
            F::AppContainers => Doc::from(self.app_containers),
            F::BuildSelectors => Doc::Array(build_selectors(
                self.ctx,
                self.spec,
                self.runtime_class.as_ref(),
                self.spec_path,
            )),
            F::BuildSource => self.build_source.clone(),
            F::Conflicts => Doc::Array(self.conflicts()),
            F::Containers => {
                Doc::Array(self.containers.iter().map(|c| c.whole().clone()).collect())
            }
            F::DecidedBy => Doc::from(self.decided_by),
            F::HostProcess => Doc::Bool(self.any_host_process),
            F::ImageBuild => Doc::from(self.windows_build()),
            F::ImageBuildLabel => Doc::from(self.windows_build().map(|b| format!("10.0.{b}"))),
            F::LinuxSelected => Doc::Bool(self.selected_by("linux")),
            F::MetaPath => Doc::from(self.meta_path),
            F::NodeBuilds => if self.selected_builds.is_empty() {
                &self.ctx.profile.node_builds
            } else {
                &self.selected_builds
            }
            .iter()
            .copied()
            .collect(),
            F::Os => Doc::from(self.os),
            F::OsName => Doc::from(self.os_name),
            F::OsReason => Doc::from(format!(
                "targets {} because {}",
                if self.os == "windows" {
                    "Windows"
                } else {
                    "Linux"
                },
                self.reason
            )),
            F::Path => Doc::from(self.spec_path),
            F::RuntimeClass => self.runtime_class.clone().unwrap_or(Doc::Null),
            F::SelectedBuilds => self.selected_builds.iter().copied().collect(),
            F::Sources => Doc::Array(
                self.sources
                    .iter()
                    .map(|s| {
                        Doc::object([
                            ("kind", Doc::from(s.kind)),
                            ("os", Doc::from(s.os)),
                            ("pointer", Doc::from(s.pointer.as_str())),
                            ("reason", Doc::from(s.reason.as_str())),
                        ])
                    })
                    .collect(),
            ),
            // Tolerations, including the RuntimeClass's (they are merged into the pod at
            // admission).
            F::Tolerations => {
                let mut tolerations: Vec<Doc<'a>> = self
                    .spec
                    .get("tolerations")
                    .and_then(Doc::as_array)
                    .cloned()
                    .unwrap_or_default();
                if let Some(extra) = self
                    .runtime_class
                    .as_ref()
                    .and_then(|rc| rc.get("tolerations"))
                    .and_then(Doc::as_array)
                {
                    tolerations.extend(extra.iter().cloned());
                }
                Doc::Array(tolerations)
            }
            // Linux-only fields matter only where the pod runs on Windows; on a Linux pod they
            // are the norm (hardening sets several).
            F::UnsupportedFields => Doc::Array(if self.os == "windows" {
                unsupported_fields(self.ctx, self.spec, self.spec_path, &self.containers)
            } else {
                Vec::new()
            }),
            F::WindowsIndicated => Doc::from(
                self.sources
                    .iter()
                    .find(|s| {
                        s.os == "windows" && matches!(s.kind, "os.name" | "hostProcess" | "image")
                    })
                    .map(|s| s.reason.as_str()),
            ),
            F::WindowsSelected => Doc::Bool(self.selected_by("windows")),
        }
    }

    fn get(&self, field: PodField) -> &Doc<'a> {
        self.cells[field as usize].get_or_init(|| self.compute(field))
    }
}

impl crate::engine::PodScope for PodFacts<'_> {
    fn containers(&self) -> usize {
        self.containers.len()
    }

    fn container(&self, index: usize) -> (&dyn Record, &Doc<'_>, &str) {
        let c = &self.containers[index];
        (c, c.raw, &c.path)
    }

    /// Why the pod targets its OS (`targets Windows because …`).
    fn note(&self) -> Option<&str> {
        self.get(PodField::OsReason).as_str()
    }
}

impl Record for PodFacts<'_> {
    fn field(&self, index: usize) -> Val<'_> {
        match PodField::ALL[index].0 {
            // Macros walk the containers' records, not their maps.
            PodField::Containers => Val::Recs(&self.containers),
            field => Val::Ref(self.get(field)),
        }
    }

    fn names(&self) -> &'static [&'static str] {
        PodField::NAMES
    }

    fn value(&self) -> &Doc<'_> {
        self.whole
            .get_or_init(|| whole_map(PodField::ALL, |f| self.get(f)))
    }
}

impl RecordList for Vec<ContainerFacts<'_>> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn get(&self, index: usize) -> &dyn Record {
        &self[index]
    }
}

/// What selects the pod's OS in its spec, in RULES.md §1 order: `os.name` (where the API server
/// keeps it), the nodeSelector, required node affinity, control-plane nodes, the RuntimeClass.
fn scheduling_sources(
    spec: &Doc<'_>,
    spec_path: &str,
    os_name: Option<&str>,
    runtime_class: Option<&Doc<'_>>,
    by_nodes: Option<&NodesSelected>,
) -> Vec<Source> {
    let mut sources: Vec<Source> = Vec::new();
    let p = |rest: &str| [spec_path, rest].concat();
    // 1. spec.os.name, where it reaches the API server: before 1.24 (IdentifyPodOS off) it
    // is dropped on admission and decides nothing.
    if let Some(name) = os_name
        && let Some(os) = os_of(name)
    {
        sources.push(Source {
            os,
            kind: "os.name",
            reason: ["`spec.os.name` is `", name, "`"].concat(),
            pointer: p("/os/name"),
            from_registry: false,
        });
    }
    // 2. nodeSelector
    for (key, value) in str_map(spec.get("nodeSelector")) {
        if OS_KEYS.contains(&key.as_str())
            && let Some(os) = os_of(value)
        {
            sources.push(Source {
                os,
                kind: "nodeSelector",
                reason: ["its nodeSelector has `", key, ": ", value, "`"].concat(),
                pointer: [spec_path, "/nodeSelector/", &escape_pointer_token(key)].concat(),
                from_registry: false,
            });
            break;
        }
    }
    // 3. required node affinity
    if let Some((values, pointer)) = affinity_values(spec, &OS_KEYS) {
        let oses: Vec<_> = values.iter().filter_map(|v| os_of(v)).collect();
        if let Some(first) = oses.first()
            && oses.iter().all(|o| o == first)
        {
            sources.push(Source {
                os: first,
                kind: "affinity",
                reason: format!("its required node affinity selects OS `{first}`"),
                pointer: p(&pointer),
                from_registry: false,
            });
        }
    }
    // The cluster's nodes the selection matches, when it names pools rather than an OS.
    if let Some(n) = by_nodes
        && !sources
            .iter()
            .any(|s| matches!(s.kind, "nodeSelector" | "affinity"))
    {
        let (os_name, plural) = match (n.os, n.count) {
            ("windows", 1) => ("a Windows node", ""),
            ("windows", _) => ("Windows nodes", "s"),
            (_, 1) => ("a Linux node", ""),
            _ => ("Linux nodes", "s"),
        };
        sources.push(Source {
            os: n.os,
            kind: "nodes",
            reason: format!(
                "its node selection matches {count} node{plural} in `{file}`, {only}{os_name}",
                count = n.count,
                file = n.file,
                only = if n.count == 1 { "" } else { "all " },
            ),
            pointer: n.pointer.clone(),
            from_registry: false,
        });
    }
    // Control-plane nodes are Linux nodes: requiring one keeps the pod off Windows.
    if let Some((key, pointer)) = control_plane_selection(spec) {
        sources.push(Source {
            os: "linux",
            kind: "controlPlane",
            reason: format!("it requires control-plane nodes (`{key}`), which run Linux"),
            pointer: p(&pointer),
            from_registry: false,
        });
    }
    // 4. RuntimeClass
    if let Some(rc) = runtime_class
        && let Some(os) = rc.get("os").and_then(Doc::as_str).and_then(os_of)
    {
        sources.push(Source {
            os,
            kind: "runtimeClass",
            reason: format!(
                "RuntimeClass `{}` schedules onto {os} nodes",
                rc["name"].as_str().unwrap_or("")
            ),
            pointer: p("/runtimeClassName"),
            from_registry: false,
        });
    }
    sources
}

/// The facts of every container of the pod (init, app and ephemeral), in that order.
fn containers_of<'a>(
    ctx: &'a ModelContext<'a>,
    spec: &'a Doc<'a>,
    spec_path: &str,
    pod_host_process: Option<bool>,
    selected_builds: &[u64],
) -> Vec<ContainerFacts<'a>> {
    let lists = ["initContainers", "containers", "ephemeralContainers"]
        .map(|kind| (kind, spec.get(kind).and_then(Doc::as_array)));
    let mut containers = Vec::with_capacity(lists.iter().map(|(_, l)| l.map_or(0, Vec::len)).sum());
    for (kind, list) in lists {
        let Some(list) = list else {
            continue;
        };
        for (i, c) in list.iter().enumerate() {
            let facts = ContainerFacts::new(
                ctx,
                c,
                kind,
                [spec_path, "/", kind, "/", itoa::Buffer::new().format(i)].concat(),
                pod_host_process,
                selected_builds,
            );
            containers.push(facts);
        }
    }
    containers
}

/// The sources that come from the containers: HostProcess (step 5) and the images (step 6).
fn push_container_sources(
    sources: &mut Vec<Source>,
    containers: &[ContainerFacts<'_>],
    spec_path: &str,
    pod_host_process: Option<bool>,
    any_host_process: bool,
) {
    let p = |rest: &str| [spec_path, rest].concat();
    // 5. HostProcess
    if any_host_process {
        sources.push(Source {
            os: "windows",
            kind: "hostProcess",
            reason: "it has a HostProcess container (`windowsOptions.hostProcess: true`)"
                .to_string(),
            pointer: if pod_host_process == Some(true) {
                p("/securityContext/windowsOptions/hostProcess")
            } else {
                containers
                    .iter()
                    .find(|c| c.host_process)
                    .map(|c| format!("{}/securityContext/windowsOptions/hostProcess", c.path))
                    .unwrap_or_default()
            },
            from_registry: false,
        });
    }
    // 6. images
    for c in containers {
        if let Some(os) = c.of_image.os {
            sources.push(Source {
                os,
                kind: "image",
                reason: [
                    "image `",
                    c.image_text,
                    if os == "windows" {
                        "` is a Windows image (by "
                    } else {
                        "` is a Linux image (by "
                    },
                    c.of_image.os_reason.as_deref().unwrap_or(""),
                    ")",
                ]
                .concat(),
                pointer: [&c.path, "/image"].concat(),
                from_registry: c.of_image.registry.is_some(),
            });
        }
    }
}

/// The decision: the first source in RULES.md §1 order, else Linux. Images come last (step
/// 6): a Windows image decides; a recognised Linux image only explains the Linux default.
fn decide(sources: &[Source]) -> (Option<usize>, &'static str, String, &'static str) {
    let decisive = sources
        .iter()
        .position(|s| s.kind != "image")
        .or_else(|| sources.iter().position(|s| s.os == "windows"));
    let (os, reason, decided_by) = match decisive {
        Some(i) => (sources[i].os, sources[i].reason.clone(), sources[i].kind),
        None => match sources.iter().find(|s| s.kind == "image") {
            Some(linux_image) => ("linux", linux_image.reason.clone(), "default"),
            None => (
                "linux",
                "nothing selects Windows (no Windows nodeSelector, affinity, RuntimeClass, HostProcess or Windows image)".to_string(),
                "default",
            ),
        },
    };
    (decisive, os, reason, decided_by)
}
