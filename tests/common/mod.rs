//! Helpers shared by the CLI tests: run the real `winguard` binary.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn winguard() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_winguard"));
    c.current_dir(root()).env_remove("NO_COLOR");
    c
}

pub fn run_cmd(mut cmd: Command, stdin: Option<&[u8]>) -> Run {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => panic!("{}", missing_tool(cmd.get_program(), &e)),
    };
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    if let Some(module) = missing_python_module(&run.stderr) {
        panic!("the Python module `{module}` is not installed: {SET_UP}");
    }
    run
}

/// What to do when a test tool is missing, said by every test that needs one.
pub const SET_UP: &str =
    "run `python3 tests/run.py` once (it installs the pinned test tools into target/test-tools)";

/// Where `tests/run.py` installs the test tools: a virtual environment and real helm and kubectl.
pub fn test_tools() -> PathBuf {
    std::env::var_os("WINGUARD_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/test-tools"))
}

/// A test tool's executable: from target/test-tools (the virtual environment's scripts, then
/// helm and kubectl), else from PATH; a tool found nowhere fails the test saying how to get it.
pub fn tool(name: &str) -> PathBuf {
    let tools = test_tools();
    let installed = [
        tools.join("venv/bin").join(name),
        tools.join("bin").join(name),
    ];
    if let Some(found) = installed.into_iter().find(|p| p.is_file()) {
        return found;
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not installed: {SET_UP}"))
}

/// The Python the tests run their snippets with: the test tools' virtual environment, which
/// has the pinned packages, else `python3` from PATH.
pub fn python_exe() -> PathBuf {
    let venv = test_tools().join("venv/bin/python");
    if venv.is_file() {
        venv
    } else {
        tool("python3")
    }
}

fn missing_tool(program: &std::ffi::OsStr, e: &std::io::Error) -> String {
    let name = Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_string_lossy();
    if e.kind() == std::io::ErrorKind::NotFound {
        format!("`{name}` is not installed: {SET_UP}")
    } else {
        format!("cannot run `{name}`: {e}")
    }
}

/// The module a Python traceback says is missing.
fn missing_python_module(stderr: &str) -> Option<&str> {
    let rest = stderr
        .split("ModuleNotFoundError: No module named '")
        .nth(1)?;
    rest.split('\'').next()
}

pub fn run(args: &[&str]) -> Run {
    let mut c = winguard();
    c.args(args);
    run_cmd(c, None)
}

pub fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let r = run(&all);
    let v = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    (r.code, v)
}

pub fn rules_of(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

/// The files a JSON report's findings are in.
pub fn files_of(report: &serde_json::Value) -> std::collections::BTreeSet<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect()
}

/// Runs a Python snippet (the tests use real Python tools: jsonschema, pre-commit).
pub fn python(code: &str, args: &[&Path]) -> Run {
    let mut c = Command::new(python_exe());
    c.arg("-c").arg(code).args(args);
    run_cmd(c, None)
}

/// Copies the directory tree `from` to `to` (a chart, to change it in a test).
#[allow(dead_code)]
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
