//! The command line: `winguard lint`, `winguard rules`, `winguard explain`.

pub mod args;
mod fix;
pub mod render;

use crate::error::ErrorKind;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use crate::pipeline::{lint_sources, lint_text};
pub use crate::policy::{Policy, load_rule_set};
use args::{RuleSource, SetupArgs};

use crate::report::Format;
use crate::rules::{RuleSet, docs};

/// Exit code: no findings at or above `--fail-on`, no input errors.
pub const EXIT_CLEAN: u8 = 0;
/// Exit code: findings at or above `--fail-on`.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: an input, config or usage error (the other inputs are still linted).
pub const EXIT_ERROR: u8 = 2;

#[derive(Debug, Parser)]
#[command(name = "winguard", version, about = "Keeps Windows workloads on Kubernetes from failing", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour the output: `auto` colours a terminal unless NO_COLOR is set (FORCE_COLOR
    /// or CLICOLOR_FORCE colour any output), `always`, `never`.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Print findings and errors only: no summary, no notes.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How the command's own output looks (`--color`, `--quiet`).
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub color: ColorChoice,
    pub quiet: bool,
}

impl Output {
    /// Whether to colour what goes to stdout: `--color`, then the NO_COLOR and FORCE_COLOR /
    /// CLICOLOR_FORCE conventions (no-color.org, force-color.org, bixense.com/clicolors), then
    /// whether stdout is a terminal.
    pub fn color_stdout(self) -> bool {
        self.color_for(std::io::stdout().is_terminal())
    }

    /// [`Output::color_stdout`] for stderr.
    pub fn color_stderr(self) -> bool {
        self.color_for(std::io::stderr().is_terminal())
    }

    fn color_for(self, terminal: bool) -> bool {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => {
                false
            }
            ColorChoice::Auto if set("FORCE_COLOR") || set("CLICOLOR_FORCE") => true,
            ColorChoice::Auto => terminal,
        }
    }

    /// The images whose platforms the run could not read (`--resolve-images`), on stderr: a
    /// warning, whatever `--quiet` says, since those images were judged by their names only.
    pub fn image_warnings(self, setup: &crate::policy::Policy) {
        for warning in setup.images.iter().flat_map(|r| r.take_warnings()) {
            eprintln!("warning: {warning}");
        }
    }

    /// A note on stderr, unless `--quiet`.
    pub fn note(self, note: &str) {
        if !self.quiet {
            eprintln!("note: {note}");
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint manifests: files, directories (recursively) or `-` for stdin.
    Lint(LintArgs),
    /// List the rules.
    Rules(RulesArgs),
    /// Apply the safe fixes to files in place (atomically); documents no fix touches keep
    /// their bytes.
    Fix(FixArgs),
    /// Read manifests on stdin, write them with the safe fixes applied to stdout (a Helm
    /// post-renderer).
    Mutate(MutateArgs),
    /// Render a Helm chart as `helm template` does (`[RELEASE] CHART`), natively.
    Render(render::RenderArgs),
    /// Serve the rules as a validating and mutating admission webhook over HTTPS.
    Serve(args::ServeArgs),
    /// The config file: `winguard config schema` prints its JSON Schema (for editors).
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Print a shell completion script: `winguard completions bash > …`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Test the rules of a directory, as `kyverno test` does: each rule's `docs.bad` must fire
    /// it and `docs.good` must not; fixtures in `FIXTURES/NAME/` (`fail-*`, `pass-*`, `fixed-*`).
    TestRules {
        /// The directory of rule files (`*.yaml`).
        dir: std::path::PathBuf,
        /// Where each rule's fixtures are, in a directory named after it (default: DIR).
        #[arg(long, value_name = "DIR")]
        fixtures: Option<std::path::PathBuf>,
        /// `text` (default) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        format: DocFormat,
    },
    /// Explain a rule: what it checks, why, an example and the fix.
    Explain {
        /// The rule's name, e.g. `windows-os-selector-missing`.
        rule: String,
        /// `text` (default) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        format: DocFormat,
        #[command(flatten)]
        rules: RuleSource,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the JSON Schema of `winguard.yaml`, rule names included (for editors:
    /// `# yaml-language-server: $schema=winguard.schema.json`).
    Schema {
        #[command(flatten)]
        rules: RuleSource,
    },
    /// Print the reference of every key as a Markdown table (docs/configuration.md's).
    Reference,
}

#[derive(Debug, clap::Args)]
pub struct FixArgs {
    /// Files or directories (recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Also apply the fixes marked unsafe (they may change behaviour: review the result).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Show the changes as a unified diff instead of writing them (exit 1 if there are any).
    #[arg(long)]
    pub diff: bool,
    #[command(flatten)]
    pub setup: SetupArgs,
    /// For charts: how to render them (the values files fixes go into are these `-f` files
    /// and the chart's `values.yaml`).
    #[command(flatten)]
    pub chart: render::ChartArgs,
    /// Release name for charts (`.Release.Name`).
    #[arg(long, value_name = "NAME", default_value = "release-name")]
    pub release_name: String,
    /// Exit with 1 when a finding at or above this severity remains after fixing.
    #[arg(long, value_enum, default_value = "error")]
    pub fail_on: FailOn,
    /// Largest input file read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::manifest::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
}

#[derive(Debug, clap::Args)]
pub struct MutateArgs {
    /// Also apply the fixes marked unsafe.
    #[arg(long)]
    pub unsafe_fixes: bool,
    #[command(flatten)]
    pub setup: SetupArgs,
    /// Largest input read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::manifest::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
}

#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Print docs/rules.md's Markdown rule table instead.
    #[arg(long)]
    pub markdown: bool,
    /// Print the facts rules can read (`pod.…`, `container.…`) as rules/README.md's Markdown tables.
    #[arg(long, conflicts_with = "markdown")]
    pub facts: bool,
    /// `text` (default) or `json`.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DocFormat,
    #[command(flatten)]
    pub rules: RuleSource,
}

/// How `rules` and `explain` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DocFormat {
    Text,
    Json,
}

/// When to exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    /// The lowest severity that fails the run, if any does.
    pub fn threshold(self) -> Option<crate::rules::Severity> {
        match self {
            FailOn::Error => Some(crate::rules::Severity::Error),
            FailOn::Warning => Some(crate::rules::Severity::Warning),
            FailOn::Info => Some(crate::rules::Severity::Info),
            FailOn::Never => None,
        }
    }

    /// Whether `report` has a finding at or above the threshold.
    pub fn fails(self, report: &crate::report::Report) -> bool {
        self.threshold()
            .is_some_and(|t| report.findings.iter().any(|f| f.finding.severity >= t))
    }
}

#[derive(Debug, clap::Args, Clone)]
pub struct LintArgs {
    /// Files, directories or `-` (stdin).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub setup: SetupArgs,
    #[command(flatten)]
    pub chart: render::ChartArgs,
    /// Release name for charts (`.Release.Name`).
    #[arg(long, value_name = "NAME", default_value = "release-name")]
    pub release_name: String,
    /// Exit with 1 when a finding is at or above this severity.
    #[arg(long, value_enum, default_value = "error")]
    pub fail_on: FailOn,
    /// Output format (repeatable; pair each with an `--output`, in order); default `text`.
    #[arg(long, value_enum)]
    pub format: Vec<Format>,
    /// Where the format at the same position goes (`-` for stdout); an unpaired format goes to
    /// stdout, an unpaired file takes the format its extension names (`.sarif`, `.json`, `.xml`).
    #[arg(long, value_name = "FILE")]
    pub output: Vec<PathBuf>,
    /// The name to give what `-` reads (the file an editor or hook pipes in): findings and
    /// errors point at it.
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// Leave out paths matching these globs (repeatable; replaces the config's `exclude`).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Option<Vec<String>>,
    /// Leave these out too (repeatable; adds to `exclude`).
    #[arg(long, value_name = "GLOB")]
    pub extend_exclude: Vec<String>,
    /// Largest input file read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::manifest::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
    /// What builds kustomize overlays (directories with a kustomization file).
    #[arg(long, value_enum, default_value = "auto")]
    pub kustomize_renderer: crate::kustomize::KustomizeRenderer,
    /// Let kustomize fetch what overlays name remotely (http(s) URLs, git repositories, Helm
    /// chart repositories); without it such an overlay is an error and kustomize is not run.
    #[arg(long)]
    pub kustomize_allow_remote: bool,
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_CLEAN
            });
        }
    };
    ExitCode::from(run(cli))
}

/// Loads the discovered or given config and the rules, as a command does: a failure is
/// printed and becomes the usage-error exit code.
pub(crate) fn load_reporting(args: &SetupArgs) -> Result<Policy, u8> {
    let source = args.source();
    source.load(source.config_path().as_deref()).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_ERROR
    })
}

fn load_rules(src: &RuleSource) -> Result<RuleSet, u8> {
    load_rule_set(&src.rule_dirs).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_ERROR
    })
}

/// The title of `rule`'s fix on its own bad example, with the config its docs give: what
/// `explain` shows for the fix, values filled in.
fn example_fix_title(source: &RuleSource, rule: &crate::rules::Rule) -> Option<String> {
    rule.fix.as_ref()?;
    let config = match &rule.docs.config {
        Some(text) => crate::config::Config::parse(text, "docs.config").ok()?,
        None => crate::config::Config::default(),
    };
    let setup = Policy::new(load_rule_set(&source.rule_dirs).ok()?, config).ok()?;
    let report = lint_text(&setup, "example.yaml", &rule.docs.bad);
    report
        .findings
        .into_iter()
        .filter(|f| f.finding.rule == rule.name)
        .find_map(|f| f.finding.fix.map(|fix| fix.title))
}

/// `winguard test-rules`: a line per case (`PASS`/`FAIL`), then the totals; exit 1 when a case
/// fails, 2 when the rules don't load.
fn test_rules(dir: &std::path::Path, fixtures: &std::path::Path, format: DocFormat) -> u8 {
    let cases = match crate::policy::rule_tests::test_rules(dir, fixtures) {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_ERROR;
        }
    };
    let failed = cases.iter().filter(|c| c.failure.is_some()).count();
    if format == DocFormat::Json {
        out(&format!(
            "{:#}\n",
            serde_json::json!({"cases": cases, "passed": cases.len() - failed, "failed": failed})
        ));
    } else {
        let mut text = String::new();
        for c in &cases {
            match &c.failure {
                None => text.push_str(&format!("PASS {}: {}\n", c.rule, c.case)),
                Some(why) => text.push_str(&format!("FAIL {}: {}: {why}\n", c.rule, c.case)),
            }
        }
        text.push_str(&format!(
            "\n{} cases: {} passed, {failed} failed\n",
            cases.len(),
            cases.len() - failed
        ));
        out(&text);
    }
    if failed == 0 {
        EXIT_CLEAN
    } else {
        EXIT_FINDINGS
    }
}

pub fn run(cli: Cli) -> u8 {
    let output = Output {
        color: cli.color,
        quiet: cli.quiet,
    };
    match cli.command {
        Command::Rules(args) => {
            let rules = match load_rules(&args.rules) {
                Ok(r) => r,
                Err(code) => return code,
            };
            if args.facts {
                out(&crate::rules::reference_markdown(crate::policy::registry()));
            } else if args.markdown {
                out(&docs::reference_table(&rules));
            } else if args.format == DocFormat::Json {
                out(&format!("{:#}\n", docs::rules_json(&rules)));
            } else {
                let width = rules.rules.iter().map(|r| r.name.len()).max().unwrap_or(0);
                for r in &rules.rules {
                    out(&format!(
                        "{:width$}  {:7}  {:6}  {}\n",
                        r.name,
                        r.default_level(),
                        docs::fix_summary(r),
                        r.summary
                    ));
                }
            }
            EXIT_CLEAN
        }
        Command::Serve(args) => match crate::serve::run(args.options()) {
            Ok(()) => EXIT_CLEAN,
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_ERROR
            }
        },
        Command::Render(args) => render::run(&args),
        Command::Fix(args) => fix::run_fix(args, output),
        Command::Mutate(args) => fix::run_mutate(args, output),
        Command::Config {
            command: ConfigCommand::Schema { rules },
        } => {
            let rules = match load_rules(&rules) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let names: Vec<&str> = rules.rules.iter().map(|r| r.name.as_str()).collect();
            out(&format!(
                "{:#}\n",
                crate::config::Config::json_schema_for(&names)
            ));
            EXIT_CLEAN
        }
        Command::Config {
            command: ConfigCommand::Reference,
        } => {
            out(&crate::config::Config::reference_markdown());
            EXIT_CLEAN
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "winguard", &mut script);
            out(&String::from_utf8_lossy(&script));
            EXIT_CLEAN
        }
        Command::TestRules {
            dir,
            fixtures,
            format,
        } => test_rules(&dir, fixtures.as_deref().unwrap_or(&dir), format),
        Command::Explain {
            rule,
            format,
            rules: source,
        } => {
            let rules = match load_rules(&source) {
                Ok(r) => r,
                Err(code) => return code,
            };
            match rules.get(&rule) {
                Some(r) => {
                    let example_fix = example_fix_title(&source, r);
                    match format {
                        DocFormat::Text => out(&docs::explain(r, example_fix.as_deref())),
                        DocFormat::Json => out(&format!(
                            "{:#}\n",
                            docs::explain_json(r, example_fix.as_deref())
                        )),
                    }
                    EXIT_CLEAN
                }
                None => {
                    let hint = crate::error::did_you_mean(
                        &rule,
                        rules.rules.iter().map(|r| r.name.as_str()),
                    );
                    eprintln!("error: no rule named `{rule}`{hint}; `winguard rules` lists them");
                    EXIT_ERROR
                }
            }
        }
        Command::Lint(args) => {
            let plan = match output_plan(&args.format, &args.output) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_ERROR;
                }
            };
            // Each input takes the config nearest to it (`--config` forces one for all):
            // inputs that share a config are linted together, as one input set.
            let mut report = crate::report::Report::default();
            let source = args.setup.source();
            // The rules are compiled once and handed from one group's policy to the next.
            let mut rules = match crate::policy::load_rule_set(&source.rule_dirs) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_ERROR;
                }
            };
            let groups = config_groups(&args);
            let mut config_file = None;
            let mut linted = 0;
            for (config, paths) in &groups {
                let setup = match source.load_with(rules, config.as_deref()) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_ERROR;
                    }
                };
                let exclude = match exclusions(&args, &setup) {
                    Ok(e) => e,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_ERROR;
                    }
                };
                // What a hook passes may all be excluded: nothing to lint, by choice.
                let all_excluded = paths
                    .iter()
                    .all(|p| p.as_os_str() != "-" && exclude.excludes(p));
                if !all_excluded {
                    let (mut sources, charts) = read_lint_inputs(&args, paths, &setup, &exclude);
                    for note in &sources.notes {
                        output.note(note);
                    }
                    // Each chart or overlay winguard rendered is a release of its own: its
                    // objects form an input set apart (a Service of one overlay never counts
                    // another's pods); the files given are one set together.
                    let (rendered, given): (Vec<_>, Vec<_>) = std::mem::take(&mut sources.texts)
                        .into_iter()
                        .partition(|t| charts.contains(&t.name));
                    sources.texts = given;
                    sources.files -= rendered.len();
                    let mut parts = vec![sources];
                    parts.extend(rendered.into_iter().map(|text| crate::manifest::Sources {
                        texts: vec![text],
                        files: 1,
                        ..Default::default()
                    }));
                    for part in parts {
                        report.merge(lint_sources(&setup, part));
                        linted += 1;
                    }
                    report.charts.extend(charts);
                }
                output.image_warnings(&setup);
                config_file = setup.config.path.clone();
                rules = setup.into_rules();
            }
            if linted == 0 {
                output.note("every input is excluded (`exclude`): nothing linted");
            }
            // Each input set's report is sorted; several are merged, sorted again.
            if linted > 1 {
                report.sort();
            }
            let config_file = if groups.len() == 1 { config_file } else { None };
            let mut code = EXIT_CLEAN;
            if let Err(e) = write_outputs(
                &plan,
                &report,
                &rules,
                config_file.as_deref(),
                output,
                args.fail_on.threshold(),
            ) {
                eprintln!("error: {e}");
                code = EXIT_ERROR;
            }
            let code = if !report.errors.is_empty() || code == EXIT_ERROR {
                EXIT_ERROR
            } else if args.fail_on.fails(&report) {
                EXIT_FINDINGS
            } else {
                EXIT_CLEAN
            };
            // The process ends here: freeing tens of thousands of findings one by one would only
            // delay the exit (the operating system takes the memory back at once).
            std::mem::forget(report);
            code
        }
    }
}

/// The inputs of a `lint` grouped by the config each takes (`--config` for all, else the one
/// nearest each input), in the order the inputs came (`paths` is never empty).
fn config_groups(args: &LintArgs) -> Vec<(Option<PathBuf>, Vec<PathBuf>)> {
    if let Some(config) = &args.setup.config {
        return vec![(Some(config.clone()), args.paths.clone())];
    }
    let mut groups: Vec<(Option<PathBuf>, Vec<PathBuf>)> = Vec::new();
    for path in &args.paths {
        let config = crate::config::Config::discover_for(path);
        match groups.iter_mut().find(|(c, _)| *c == config) {
            Some((_, paths)) => paths.push(path.clone()),
            None => groups.push((config, vec![path.clone()])),
        }
    }
    groups
}

/// What `lint` leaves out: the config's `exclude` (from its directory) unless `--exclude`
/// replaces it (from the working directory), and `--extend-exclude`.
fn exclusions(args: &LintArgs, setup: &Policy) -> Result<crate::manifest::Exclusions, String> {
    let mut exclude = crate::manifest::Exclusions::default();
    let here = Path::new(".");
    match &args.exclude {
        Some(patterns) => exclude.add(patterns, here)?,
        None => {
            let dir = setup
                .config
                .path
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(here);
            exclude
                .add(&setup.config.exclude, dir)
                .map_err(|e| match &setup.config.path {
                    Some(p) => format!("{}: {e}", p.display()),
                    None => e,
                })?;
        }
    }
    exclude.add(&args.extend_exclude, here)?;
    Ok(exclude)
}

/// The inputs of `lint`: charts are rendered (with the effective Kubernetes version, the same
/// one the rules use) and read as their `helm template` output; the rest is read as files.
fn read_lint_inputs(
    args: &LintArgs,
    paths: &[PathBuf],
    setup: &Policy,
    exclude: &crate::manifest::Exclusions,
) -> (crate::manifest::Sources, Vec<String>) {
    // A chart given as such, or one a file given belongs to (a template, its values, its
    // Chart.yaml: what pre-commit passes when one of them changes), is rendered once.
    let mut charts: Vec<PathBuf> = Vec::new();
    // A kustomization, or a file one builds from, is linted through the overlays above it
    // (each once): what a cluster gets, never a base on its own nor a patch as an object.
    let mut overlays: Vec<PathBuf> = Vec::new();
    let mut trees = crate::kustomize::Trees::new(exclude, paths);
    let mut notes = Vec::new();
    let mut add_overlays = |overlays: &mut Vec<PathBuf>, given: &Path, found: Vec<PathBuf>| {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if found.len() != 1 || real(&found[0]) != real(given) {
            let shown: Vec<String> = found.iter().map(|o| o.display().to_string()).collect();
            notes.push(format!(
                "{}: linted through the overlays that use it: {}",
                given.display(),
                shown.join(", ")
            ));
        }
        for overlay in found {
            if !overlays.iter().any(|o| real(o) == real(&overlay)) {
                overlays.push(overlay);
            }
        }
    };
    let mut files = Vec::new();
    // A path excluded is left out even when given by name (pre-commit passes every file).
    for p in paths
        .iter()
        .filter(|p| p.as_os_str() == "-" || !exclude.excludes(p))
    {
        // A kustomization file given on its own (what pre-commit passes) builds its overlay.
        let kustomization_dir = p
            .file_name()
            .filter(|n| {
                crate::manifest::KUSTOMIZATION_FILES
                    .iter()
                    .any(|k| n.to_str() == Some(*k))
            })
            .and_then(|_| p.parent())
            .map(|d| {
                if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                }
            });
        if let Some(dir) = kustomization_dir.filter(|d| crate::manifest::is_kustomization(d)) {
            let found = trees.overlays_of_dir(dir);
            add_overlays(&mut overlays, dir, found);
            continue;
        }
        let chart = if p.as_os_str() == "-" {
            None
        } else if helm_engine::is_chart(p) {
            Some(p.clone())
        } else {
            helm_engine::chart_of_file(p)
        };
        match chart {
            Some(c) if !charts.contains(&c) => charts.push(c),
            Some(_) => {}
            None => match trees.overlays_of_file(p) {
                Some(found) => add_overlays(&mut overlays, p, found),
                None => files.push(p.clone()),
            },
        }
    }
    let stdin_name = args
        .stdin_filename
        .as_ref()
        .map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
    let mut sources = crate::manifest::read_inputs_with(
        &files,
        args.max_file_size,
        crate::manifest::Overlays::Build,
        &stdin_name,
        exclude,
    );
    for found in std::mem::take(&mut sources.charts) {
        if !charts.contains(&found) {
            charts.push(found);
        }
    }
    for dir in std::mem::take(&mut sources.kustomizations) {
        let found = trees.overlays_of_dir(&dir);
        add_overlays(&mut overlays, &dir, found);
    }
    sources.notes.extend(notes);
    let mut rendered = Vec::new();
    let allow_remote = args.kustomize_allow_remote || setup.config.kustomize.allow_remote;
    for dir in &overlays {
        match crate::kustomize::build(dir, args.kustomize_renderer, allow_remote) {
            Ok(built) => {
                let name = crate::kustomize::kustomization_file(dir)
                    .display()
                    .to_string();
                crate::manifest::read_rendered(
                    &name,
                    built.text,
                    Default::default(),
                    built.origins,
                    &mut sources,
                );
                rendered.push(name);
            }
            Err(e) => sources.errors.extend(e.0),
        }
    }
    for chart in charts {
        let shown = chart.display().to_string();
        match args.chart.render_located(
            &chart,
            &args.release_name,
            Some(&setup.config.kubernetes_version),
        ) {
            Ok(r) => {
                crate::manifest::read_rendered(
                    &shown,
                    r.text,
                    r.locations,
                    r.origins,
                    &mut sources,
                );
                rendered.push(shown);
            }
            // A chart that fails is one input that fails; the others are still linted.
            Err(e) => sources.errors.push(crate::error::Error {
                kind: ErrorKind::Input,
                ..e
            }),
        }
    }
    if sources.files == 0 && sources.errors.is_empty() {
        // Nothing was read: linting nothing must not look like a clean run.
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        sources.errors.push(crate::error::Error {
            kind: ErrorKind::Input,
            file: shown.join(", "),
            line: None,
            column: None,
            message: "no YAML or JSON file to lint here (directories are searched for *.yaml, \
                      *.yml and *.json, charts and kustomize overlays)"
                .to_string(),
        });
    }
    (sources, rendered)
}

/// Where each report goes: `--format`s paired with `--output`s in order. An `--output` with no
/// `--format` takes the format its extension names; a `--format` with no `--output` goes to
/// stdout; with neither, text goes to stdout. Two reports on stdout would be one unreadable
/// stream, so that is a usage error, as is a file whose format can't be told.
pub fn output_plan(
    formats: &[Format],
    outputs: &[PathBuf],
) -> Result<Vec<(Format, Option<PathBuf>)>, String> {
    let mut plan = Vec::new();
    for i in 0..formats.len().max(outputs.len()).max(1) {
        let target = outputs.get(i).filter(|p| p.as_os_str() != "-").cloned();
        let format = match (formats.get(i), &target) {
            (Some(f), _) => *f,
            (None, Some(path)) => format_of_extension(path).ok_or_else(|| {
                format!(
                    "--output {}: can't tell the format from the file name; add a --format \
                     for it (text, json, sarif, junit, github) or name it .sarif, .json or .xml",
                    path.display()
                )
            })?,
            (None, None) => Format::Text,
        };
        plan.push((format, target));
    }
    let to_stdout = plan.iter().filter(|(_, t)| t.is_none()).count();
    if to_stdout > 1 {
        return Err(format!(
            "{to_stdout} reports would go to stdout together; give all but one an --output FILE"
        ));
    }
    Ok(plan)
}

fn format_of_extension(path: &std::path::Path) -> Option<Format> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "sarif" => Some(Format::Sarif),
        "json" => Some(Format::Json),
        "xml" => Some(Format::Junit),
        "txt" => Some(Format::Text),
        _ => None,
    }
}

fn write_outputs(
    plan: &[(Format, Option<PathBuf>)],
    report: &crate::report::Report,
    rules: &RuleSet,
    config_file: Option<&std::path::Path>,
    output: Output,
    fail_on: Option<crate::rules::Severity>,
) -> Result<(), String> {
    let working_dir = std::env::current_dir().ok();
    // What could not be read is said on stderr when the report takes stdout, in every format
    // (a JSON or SARIF document still holds them too): a pipe gets the report, the terminal
    // the problems.
    if plan.iter().any(|(_, target)| target.is_none()) && !report.errors.is_empty() {
        let color = output.color_stderr();
        eprint!("{}", crate::report::input_errors_text(report, color));
    }
    for (format, target) in plan {
        let opts = crate::report::RenderOptions {
            color: target.is_none() && output.color_stdout(),
            rules,
            working_dir: working_dir.as_deref(),
            config_file,
            quiet: output.quiet,
            fail_on,
            // Input errors go to stderr whenever the report goes to stdout (below).
            list_input_errors: target.is_some(),
        };
        match target {
            None => {
                let mut out = std::io::stdout().lock();
                crate::report::render_to(*format, report, &opts, &mut out)
                    .map_err(|e| format!("cannot write to stdout: {e}"))?;
            }
            Some(path) => {
                let text = crate::report::render(*format, report, &opts);
                crate::write::write_file(path, text.as_bytes()).map_err(|e| e.to_string())?
            }
        }
    }
    Ok(())
}

/// Writes to stdout. A closed pipe (`winguard rules | head`) only means the reader has what it
/// wanted, so write errors are ignored rather than panicking as `print!` does.
pub(crate) fn out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
