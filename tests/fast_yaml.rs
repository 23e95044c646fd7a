//! The fast block-YAML reader against the full parser (saphyr-parser): wherever the fast reader
//! accepts a document, its values and positions must be exactly the full parser's.

#[path = "../benches/corpus.rs"]
#[allow(dead_code)]
mod corpus;

// The check itself is the fuzz target's (`yaml_readers`), so fuzzing and these tests hold the
// reader to one definition of agreeing.
#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::Path;

use harness::fast_reader_agrees as check_text;
use winguard::manifest::split_documents;
use winguard::value::block::read_document_go_yaml_v2;

fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            out.push(path);
        }
    }
}

#[test]
fn agrees_with_the_full_parser_on_every_fixture() {
    let mut files = Vec::new();
    yaml_files(Path::new("testdata"), &mut files);
    yaml_files(Path::new("rules"), &mut files);
    let (mut docs, mut fast) = (0, 0);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue; // invalid UTF-8 fixtures
        };
        let (d, f) = check_text(&path.display().to_string(), &text);
        docs += d;
        fast += f;
    }
    assert!(docs > 100, "{docs} documents");
    // Most fixtures are plain block YAML; if the fast reader stopped taking them, the
    // differential test would be testing nothing.
    assert!(fast * 10 > docs * 7, "fast reader took {fast} of {docs}");
}

/// Helm's values files are read the v2 way; the fast reader takes most of them (each one's
/// agreement with the full parser is checked with every fixture above).
#[test]
fn the_v2_reading_takes_most_values_files() {
    let mut files = Vec::new();
    yaml_files(Path::new("testdata"), &mut files);
    let values: Vec<String> = files
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "values.yaml"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let taken = values
        .iter()
        .filter(|text| read_document_go_yaml_v2(text, 0).is_some())
        .count();
    assert!(values.len() > 20, "{} values files", values.len());
    assert!(
        taken * 10 > values.len() * 7,
        "the v2 reading took {taken} of {} values files",
        values.len()
    );
    // Its own cases: one-letter booleans, typed keys.
    for text in [
        "a: y\nb: N\n",
        "8080: http\ny: 1\n",
        "ports: {80: http, y: n}\n",
    ] {
        assert!(read_document_go_yaml_v2(text, 0).is_some(), "{text:?}");
    }
}

#[test]
fn takes_the_whole_benchmark_corpus_and_agrees() {
    let files = corpus::corpus(2 * 1024 * 1024, 256 * 1024);
    for (i, text) in files.iter().enumerate() {
        let (docs, fast) = check_text(&format!("corpus-{i}"), text);
        assert_eq!(
            fast, docs,
            "corpus file {i}: every document is plain block YAML"
        );
    }
}

/// Edge cases: each either goes to the full parser or is read exactly as it reads it.
const CASES: &[(&str, bool)] = &[
    // (text, the fast reader must take it)
    ("a: 1\nb: two\nc: 'three'\nd: \"four\"\n", true),
    ("a:\n  b:\n    c: d\n", true),
    ("a:\n- 1\n- 2\nb: x\n", true),
    ("a:\n  - 1\n  -   2\n", true),
    ("- a\n- b: 1\n  c: 2\n- - x\n  - y\n", true),
    ("a:\nb: ~\nc:\n", true),
    ("a:   # comment\n  b: 1\n", true),
    ("a: 1 # comment\n# full line\nb: 2\n", true),
    ("a: |\n  line 1\n\n  line 3\nb: x\n", true),
    ("a: |-\n  x\n  y\n\n\nb: 1\n", true),
    ("a: |+\n  x\n\n\nb: 1\n", true),
    ("a: >\n  folded\n  text\n\n  para\nb: 1\n", true),
    ("a: >-\n  x\n", true),
    ("a: |\nb: 1\n", true),
    ("- |\n  x\n- y\n", true),
    ("a: |\n    indented more\n      and more\n    back\n", true),
    (
        "a: [1, two, \"3\", '4']\nb: {x: 1, 'y': [a, b], z: {}}\nc: []\n",
        true,
    ),
    ("a: {\"k\":1}\n", true),
    ("a: [a: b]\n", false),
    ("a: [1, 2,]\n", false),
    (
        "a: \"esc \\\" \\\\ \\n \\t \\u00e9 \\x41\"\nb: 'it''s'\n",
        true,
    ),
    ("\"quoted key\": 1\n'single': 2\n", true),
    (
        "a: yes\nb: 0755\nc: 0x1F\nd: 1.5\ne: -3\nf: .inf\ng: 1_000\n",
        true,
    ),
    ("url: http://x:80/y\nb: a#b\nc: 'a: b'\n", true),
    ("é: ü\nx: [é, ü]\n", true),
    ("---\na: 1\n", true),
    ("--- # c\na: 1\n", true),
    ("a: &x 1\nb: *x\n", false),
    ("a: !!str 1\n", false),
    ("a: b: c\n", false),
    ("a: plain\n  continued\n", true),
    // Plain scalars over several lines, as Go's YAML writer wraps long strings.
    ("a: one\n  two\n\n  three\n\n\nb: 1\n", true),
    ("- one\n  two\n- x\n", true),
    ("a:\n  one\n  two\n", true),
    ("x:\n  a: one\n    two   \n  b: 1\n", true),
    ("a: one\n  two\n  \n", true),
    ("a: 1\n  2\n", true),
    ("a: y\n  n\n", true),
    ("a: one\n  two # c\n", false),
    ("a: one\n  two: x\n", false),
    ("a: one\n  - two\n", false),
    ("a: one\n  # c\n  two\n", false),
    (
        "a: one\n      # a comment, more indented\nb: two\n    # c\n",
        true,
    ),
    ("a: one # c\n  two\n", false),
    // Single-quoted scalars closed on a later line (CRDs' validation rules).
    ("rule: '!(a == ''b'') ||\n  !has(c)'\nx: 1\n", true),
    ("a: 'one\n\n  two  \n   three'\n", true),
    ("a: '\n  x'\n", true),
    ("a: 'one\n  two' # c\nb: 1\n", true),
    ("- 'one\n  two'\n- x\n", true),
    ("x:\n  a: 'it''s\n    ok'\n  b: 1\n", true),
    ("a: 'one\n  two' x\n", false),
    ("a: 'one\ntwo'\n", false),
    ("a: 'one\n", false),
    ("a: \"one\n  two\"\n", false),
    ("a: \"multi\n  line\"\n", false),
    ("a: 1\na: 2\n", false),
    ("? a\n: b\n", false),
    ("a:\n\tb: 1\n", false),
    ("a: |2\n   x\n", false),
    ("%YAML 1.2\n---\na: 1\n", false),
    ("a\n", true),
    ("[1, 2]\n", true),
    ("a: 1\n  b: 2\n", false),
    ("a:\n  - x\n  y: 1\n", false),
    ("key: value with [brackets], and commas\n", true),
    ("a: -1\nb: -x\nc: ?x\nd: :x\n", true),
    ("a: - x\n", false),
    ("a:\n-\n- x\n", true),
    ("- \n  a: 1\n", true),
    ("a:\n-  \n- x\n", true),
    ("a:\n- # c\n- x\n", false),
    ("b: 1\nc:   \nd:\n", true),
    ("a:  # c\nb: 1\n", true),
    ("x:\n  a: # c\ny: 1\n", true),
    ("x:\n  a: # c\n  # d\n  b:\n", true),
    ("a: # c\n", true),
    ("a: # c\n- x\n", true),
    ("a: 'x' # c\nb: \"y\"#c\n", false),
    (
        "spec:\n  containers:\n  - name: a\n    command: [\"powershell\", \"-Command\", \"C:\\\\x\"]\n",
        true,
    ),
    ("a: { b: 1 , c: [ x , y ] }\n", true),
    ("key  : value\n'q' : 1\n", true),
    ("a: b\n\n\n", true),
    ("- a\n-\n  - b\n", true),
    ("a: >+\n  x\n\nb: 1\n", true),
    ("a: |-\n\n  x\n", true),
    ("\u{feff}a: 1\n", false),
    ("a: x\u{85}y\n", true),
    ("a: x\u{2028}y\n", true),
    ("a: x\u{7}y\n", false),
    ("a: \"x\u{7}y\"\n", false),
    ("a: x\u{0}y\n", false),
    ("a: |\n  x\u{1b}y\n", false),
    ("a: x\u{9f}y\n", false),
    ("a: x\u{fffe}y\n", false),
    ("a: 'x\u{1F600}y'\n", true),
    ("a: |\n  # not a comment\n  x\n# a comment\nb: 1\n", true),
    ("a:\n  b: 1\n\n\n  c: 2\n", true),
    ("a: >\n  x\n   more indented\n  y\n", false),
    ("a: |\n  x\n  \n  y\n", true),
    ("a: |\n  x\n   \n  y\n", false),
    ("- a\n  - b\n", false),
    ("a:\n  - b\n - c\n", false),
    // Values as go-yaml v2 reads them (Helm's values files): one-letter booleans, plain keys
    // as their typed values' text, quoted ones as written.
    ("a: y\nb: N\nc: 'y'\nd: [y, n, Y, yes]\ne: {f: n}\n", true),
    ("y: 1\nN: 2\n8080: http\nnull: z\n0x1F: h\n1_000: u\n", true),
    ("y: 1\ntrue: 2\n", true),
    (
        "\"y\": 1\n'8080': 2\n{n: 1, 07: 2, \"true\": 3}: x\n",
        false,
    ),
    ("ports: {80: http, y: n, 'n': y}\n", true),
    ("# only a comment\n", false),
    ("a: 1\nA: 2\ny: 1\n'true': 2\n", true),
];

#[test]
fn edge_cases_are_read_exactly_or_left_to_the_full_parser() {
    for (text, must_take) in CASES {
        let (_, fast) = check_text(&format!("{text:?}"), text);
        if *must_take {
            assert_eq!(fast, 1, "the fast reader should take {text:?}");
        }
        if !must_take {
            assert_eq!(
                fast, 0,
                "the fast reader should leave {text:?} to the full parser"
            );
        }
    }
}

/// Mutations of real documents (deterministic): whatever the fast reader still accepts after one
/// to four characters are inserted, deleted or replaced must read exactly as the full parser
/// reads it (or be rejected by both).
#[test]
fn agrees_on_mutated_documents() {
    const ALPHABET: &[u8] = b" :-#'\"|>[]{},&*!?\n\tab1\r\x00\x07\x7f";
    let mut seed: u64 = 0x5555_aaaa_3333_cccc;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut texts: Vec<String> = corpus::corpus(64 * 1024, 64 * 1024);
    texts.extend(CASES.iter().map(|(t, _)| t.to_string()));
    let mut files = Vec::new();
    yaml_files(Path::new("testdata/rules"), &mut files);
    texts.extend(files.iter().filter_map(|f| std::fs::read_to_string(f).ok()));
    let (mut checked, mut taken) = (0, 0);
    for text in &texts {
        for span in split_documents(text) {
            let doc = &text.as_bytes()[span.start..span.end];
            for _ in 0..60 {
                let mut m = doc.to_vec();
                for _ in 0..next(4) + 1 {
                    if m.is_empty() {
                        break;
                    }
                    let at = next(m.len());
                    match next(3) {
                        0 => m.insert(at, ALPHABET[next(ALPHABET.len())]),
                        1 => {
                            m.remove(at);
                        }
                        _ => m[at] = ALPHABET[next(ALPHABET.len())],
                    }
                }
                let Ok(m) = String::from_utf8(m) else {
                    continue;
                };
                let (_, fast) = check_text("mutated", &m);
                checked += 1;
                taken += fast;
            }
        }
    }
    // Most single mutations keep the document readable by the fast path; the point is that
    // both paths were exercised.
    assert!(
        checked > 1000 && taken > checked / 4,
        "{taken} of {checked}"
    );
}

/// Random documents from a small grammar of the constructs rendered manifests use, with the
/// characters that make YAML subtle (deterministic): wherever the fast reader takes one, it must
/// read it exactly as the full parser does.
#[test]
fn agrees_on_generated_documents() {
    struct Gen(u64);
    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn scalar(&mut self) -> String {
            const WORDS: &[&str] = &[
                "a",
                "web",
                "8080",
                "0755",
                "yes",
                "~",
                "null",
                "1.5",
                "-x",
                "a:b",
                "a b",
                "C:\\x",
                "é",
                "'q'",
                "\"d\"",
                "a #b",
                "x#y",
                "[a]",
                "{b}",
                "-",
                ":",
                "?",
                "",
                "a: b",
                "it's",
                "tab\there",
                "true",
                "0x1F",
                ".inf",
                "--port=80",
                "x\u{feff}y",
                "\u{85}",
                "b\u{7}",
                "\u{2028}",
                "\u{1F600}",
            ];
            let w = WORDS[self.next(WORDS.len())];
            match self.next(4) {
                0 => format!("'{}'", w.replace('\'', "''")),
                1 => format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\"")),
                _ => w.to_string(),
            }
        }
        fn key(&mut self) -> String {
            const KEYS: &[&str] = &["name", "image", "kubernetes.io/os", "a b", "8080", "x-y"];
            let k = KEYS[self.next(KEYS.len())];
            if self.next(5) == 0 {
                format!("\"{k}\"")
            } else {
                k.to_string()
            }
        }
        fn flow(&mut self, depth: usize) -> String {
            if depth > 2 || self.next(3) == 0 {
                return self.scalar();
            }
            let n = self.next(3);
            if self.next(2) == 0 {
                let items: Vec<String> = (0..n).map(|_| self.flow(depth + 1)).collect();
                format!("[{}]", items.join(", "))
            } else {
                let items: Vec<String> = (0..n)
                    .map(|i| format!("k{i}: {}", self.flow(depth + 1)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        }
        /// A block node as lines at `indent`; `inline` when it follows `key:` or `- `.
        fn block(&mut self, indent: usize, depth: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            let n = 1 + self.next(3);
            if self.next(2) == 0 || depth > 3 {
                for _ in 0..n {
                    let key = self.key();
                    match self.next(6) {
                        0 if depth < 4 => {
                            // A comment after the colon, as values files have (`image:  # …`).
                            let comment = ["", "  # c", " #c"][self.next(3)];
                            out.push_str(&format!("{pad}{key}:{comment}\n"));
                            let child = if self.next(3) == 0 {
                                indent
                            } else {
                                indent + 2
                            };
                            if child == indent {
                                self.seq(indent, depth + 1, out);
                            } else {
                                self.block(child, depth + 1, out);
                            }
                        }
                        1 => {
                            let chomp = ["", "-", "+"][self.next(3)];
                            let style = ["|", ">"][self.next(2)];
                            out.push_str(&format!("{pad}{key}: {style}{chomp}\n"));
                            for _ in 0..1 + self.next(3) {
                                if self.next(4) == 0 {
                                    out.push('\n');
                                }
                                out.push_str(&format!("{pad}  {}\n", self.scalar()));
                            }
                        }
                        2 => out.push_str(&format!("{pad}{key}: {}\n", self.flow(0))),
                        3 => out.push_str(&format!(
                            "{pad}# comment\n{pad}{key}: {} # c\n",
                            self.scalar()
                        )),
                        // An empty value with a comment after its colon.
                        4 if self.next(2) == 0 => out.push_str(&format!("{pad}{key}:  # c\n")),
                        // A plain or single-quoted scalar wrapped over lines, a blank line
                        // between some.
                        4 => {
                            let quoted = self.next(3) == 0;
                            let open = if quoted { "'" } else { "" };
                            out.push_str(&format!("{pad}{key}: {open}{}", self.scalar()));
                            for _ in 0..1 + self.next(3) {
                                out.push('\n');
                                if self.next(4) == 0 {
                                    out.push('\n');
                                }
                                let more = " ".repeat(1 + self.next(3));
                                out.push_str(&format!("{pad}{more}{}", self.scalar()));
                            }
                            out.push_str(open);
                            out.push('\n');
                        }
                        _ => out.push_str(&format!("{pad}{key}: {}\n", self.scalar())),
                    }
                }
            } else {
                self.seq(indent, depth, out);
            }
        }
        fn seq(&mut self, indent: usize, depth: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            for _ in 0..1 + self.next(3) {
                match self.next(4) {
                    0 if depth < 4 => {
                        // A compact nested mapping or sequence after the dash.
                        let mut inner = String::new();
                        self.block(indent + 2, depth + 1, &mut inner);
                        let inner = inner.trim_start_matches(' ');
                        out.push_str(&format!("{pad}- {inner}"));
                    }
                    1 => out.push_str(&format!("{pad}- {}\n", self.flow(0))),
                    _ => out.push_str(&format!("{pad}- {}\n", self.scalar())),
                }
            }
        }
    }
    let mut g = Gen(0x2545_f491_4f6c_dd1d);
    let (mut checked, mut taken) = (0, 0);
    for _ in 0..4000 {
        let mut doc = String::new();
        g.block(0, 0, &mut doc);
        let (_, fast) = check_text("generated", &doc);
        checked += 1;
        taken += fast;
    }
    assert!(
        taken > checked / 5,
        "the fast reader took {taken} of {checked}"
    );
}
