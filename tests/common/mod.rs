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

/// The binary, run from the checkout, with a cache of its own under `target/` (the tests read
/// the built-in rules back from it, as users' runs do; `tests/cache.rs` tests the cache itself).
pub fn winguard() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_winguard"));
    c.current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("WINGUARD_NO_CACHE")
        .env("WINGUARD_CACHE_DIR", root().join("target/test-cache"));
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
/// Each finding's rule and object name, in report order.
pub fn rules_and_objects(report: &serde_json::Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["object"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

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

/// Writes a packaged chart (`.tgz`) whose large files are zeros without compressing them, so a
/// test can make one that unpacks to gigabytes in a moment. A run of zeros is one compressed
/// MiB of zeros repeated: each piece of the deflate stream is compressed on its own and ends in
/// a full flush, which makes it independent of what came before; the gzip trailer's CRC is
/// combined from the pieces' CRCs. Entries are added in order; [`Tgz::finish`] ends the tar.
pub struct Tgz {
    deflate: Vec<u8>,
    crc: flate2::Crc,
    len: u64,
    /// One MiB of zeros, compressed on its own, and its CRC.
    zero_mib: (Vec<u8>, flate2::Crc),
}

const MIB: usize = 1024 * 1024;

impl Default for Tgz {
    fn default() -> Self {
        let mut crc = flate2::Crc::new();
        crc.update(&vec![0; MIB]);
        Tgz {
            deflate: Vec::new(),
            crc: flate2::Crc::new(),
            len: 0,
            zero_mib: (deflate_piece(&vec![0; MIB]), crc),
        }
    }
}

impl Tgz {
    /// A regular file `path` (the chart's top directory first: `mychart/Chart.yaml`).
    pub fn file(mut self, path: &str, data: &[u8]) -> Self {
        self.header(path, data.len() as u64, tar::EntryType::Regular);
        self.bytes(data);
        self.zeros(padding(data.len() as u64));
        self
    }

    /// An entry of type `kind` holding `size` zeros.
    pub fn zeros_entry(mut self, path: &str, size: u64, kind: tar::EntryType) -> Self {
        self.header(path, size, kind);
        self.zeros(size + padding(size));
        self
    }

    /// The archive: the tar's two end blocks, then the gzip trailer.
    pub fn finish(mut self) -> Vec<u8> {
        self.zeros(1024);
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        out.append(&mut self.deflate);
        out.extend(deflate_end());
        out.extend(self.crc.sum().to_le_bytes());
        out.extend((self.len as u32).to_le_bytes());
        out
    }

    fn header(&mut self, path: &str, size: u64, kind: tar::EntryType) {
        let mut header = tar::Header::new_gnu();
        header.set_path(path).unwrap();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_entry_type(kind);
        header.set_cksum();
        self.bytes(header.as_bytes());
    }

    fn bytes(&mut self, data: &[u8]) {
        self.deflate.extend(deflate_piece(data));
        self.crc.update(data);
        self.len += data.len() as u64;
    }

    fn zeros(&mut self, n: u64) {
        for _ in 0..n / MIB as u64 {
            self.deflate.extend_from_slice(&self.zero_mib.0);
            self.crc.combine(&self.zero_mib.1);
        }
        self.len += n - n % MIB as u64;
        let rest = (n % MIB as u64) as usize;
        if rest > 0 {
            self.bytes(&vec![0; rest]);
        }
    }
}

fn padding(size: u64) -> u64 {
    (512 - size % 512) % 512
}

/// `input` as raw deflate blocks that need nothing before them, ending in a full flush.
fn deflate_piece(input: &[u8]) -> Vec<u8> {
    deflate_with(input, flate2::FlushCompress::Full)
}

/// The last (empty) block of a deflate stream.
fn deflate_end() -> Vec<u8> {
    deflate_with(&[], flate2::FlushCompress::Finish)
}

fn deflate_with(input: &[u8], flush: flate2::FlushCompress) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut out = Vec::with_capacity(input.len() / 64 + 1024);
    loop {
        let done = c.total_in() as usize;
        c.compress_vec(&input[done..], &mut out, flush).unwrap();
        // The flush is complete when all input is in and the output had room to spare.
        if c.total_in() as usize == input.len() && out.len() < out.capacity() {
            return out;
        }
        out.reserve(out.capacity());
    }
}
