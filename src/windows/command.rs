//! Reading what a container's entrypoint does: which steps run, whether IIS's `ServiceMonitor.exe
//! w3svc` is the last, foreground step, and what is copied before it (§6 of the domain notes).
//!
//! Written by hand because no crate parses "a PowerShell or cmd script as Kubernetes passes it":
//! the command and args arrays are joined as the container runtime would, the script argument of
//! a known shell is split into steps at `;`, `&&`, `||`, `&`, `|` and newlines (outside quotes),
//! and each step into words. It is a reader for the patterns real charts use, not a shell.

use std::borrow::Cow;

use crate::value::{Doc, Value};

use super::CommandTables;

// Words are compared with the catalog's (lower-case, ASCII) names ignoring ASCII case, and kept
// as slices of the manifest's strings where they can be: every container with a command is
// analysed, and this spares copying and lower-casing each of its words.

/// A program's file name: quotes trimmed, directories dropped (`C:\ServiceMonitor.exe`).
fn basename(word: &str) -> &str {
    let w = word.trim_matches(['"', '\'']);
    w.rsplit(['\\', '/']).next().unwrap_or(w)
}

/// The Windows shell a command starts (`cmd`, `powershell.exe`, `C:\\Windows\\…\\pwsh.exe`),
/// as the catalog names it: evidence that the container is a Windows container.
pub(super) fn windows_shell<'t>(
    tables: &'t CommandTables,
    command: Option<&Doc<'_>>,
) -> Option<&'t str> {
    let first = command?.as_array()?.first()?.as_str()?;
    let name = basename(first);
    tables
        .shells
        .iter()
        .filter(|s| s.windows)
        .flat_map(|s| &s.names)
        .find(|n| n.eq_ignore_ascii_case(name))
        .map(String::as_str)
}

fn is_one_of(names: &[String], word: &str) -> bool {
    names.iter().any(|n| n.eq_ignore_ascii_case(word))
}

/// A script's steps, split at `;`, `&`, `|` and line breaks outside quotes, trimmed.
fn split_steps(script: &str) -> Vec<&str> {
    let mut steps = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    for (i, c) in script.char_indices() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                ';' | '&' | '|' | '\n' | '\r' => {
                    let step = script[start..i].trim();
                    if !step.is_empty() {
                        steps.push(step);
                    }
                    start = i + c.len_utf8();
                }
                _ => {}
            },
        }
    }
    let step = script[start..].trim();
    if !step.is_empty() {
        steps.push(step);
    }
    steps
}

/// A step's words, split at whitespace outside quotes, quotes removed.
fn split_words(step: &str) -> Vec<Cow<'_, str>> {
    let mut words = Vec::new();
    // The current word: borrowed while it has no quotes, built once it has.
    let mut start: Option<usize> = None;
    let mut built: Option<String> = None;
    let mut quote: Option<char> = None;
    let finish = |start: &mut Option<usize>, built: &mut Option<String>, end: usize| {
        let word = match (built.take(), start.take()) {
            (Some(b), _) => Some(Cow::Owned(b)),
            (None, Some(s)) => Some(Cow::Borrowed(&step[s..end])),
            (None, None) => None,
        };
        word.filter(|w| !w.is_empty())
    };
    for (i, c) in step.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => built.get_or_insert_with(String::new).push(c),
            None if c == '\'' || c == '"' => {
                // From here the word differs from the text: copy what it has so far.
                let so_far = start.map_or("", |s| &step[s..i]);
                built.get_or_insert_with(|| so_far.to_string());
                start.get_or_insert(i);
                quote = Some(c);
            }
            None if c.is_whitespace() => {
                if let Some(w) = finish(&mut start, &mut built, i) {
                    words.push(w);
                }
            }
            None => {
                start.get_or_insert(i);
                if let Some(b) = built.as_mut() {
                    b.push(c);
                }
            }
        }
    }
    if let Some(w) = finish(&mut start, &mut built, step.len()) {
        words.push(w);
    }
    words
}

fn is_flag(word: &str) -> bool {
    // `-Force`, `-r`; cmd's `/Y` `/E` (a short switch with no further slash or dot, unlike `/config`).
    word.starts_with('-')
        || (word.starts_with('/') && word.len() <= 4 && !word[1..].contains(['/', '.', '\\']))
}

/// The source path of a copy step, if the step is a copy.
fn copy_source<S: AsRef<str>>(tables: &CommandTables, words: &[S]) -> Option<String> {
    let verb = basename(words.first()?.as_ref());
    let verb = match verb.len().checked_sub(4) {
        Some(n) if verb.is_char_boundary(n) && verb[n..].eq_ignore_ascii_case(".exe") => &verb[..n],
        _ => verb,
    };
    if !is_one_of(&tables.copy, verb) {
        return None;
    }
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_ref();
        if let Some((name, value)) = w.split_once(':').filter(|(n, _)| n.starts_with('-'))
            && is_one_of(&tables.source_parameters, name)
        {
            return Some(value.to_string()).filter(|_| !value.is_empty());
        }
        if is_one_of(&tables.source_parameters, w) {
            return words.get(i + 1).map(|w| w.as_ref().to_string());
        }
        if is_one_of(&tables.value_parameters, w) {
            i += 2;
            continue;
        }
        if is_flag(w) {
            i += 1;
            continue;
        }
        return Some(w.to_string());
    }
    None
}

fn is_service_monitor<S: AsRef<str>>(tables: &CommandTables, words: &[S]) -> bool {
    let mut rest = words;
    while let Some(first) = rest.first() {
        if is_one_of(&tables.wrappers, basename(first.as_ref())) {
            rest = &rest[1..];
        } else {
            break;
        }
    }
    match rest.first() {
        Some(first) if is_one_of(&tables.service_monitor, basename(first.as_ref())) => {
            rest[1..].iter().any(|w| {
                w.as_ref()
                    .trim_matches(['"', '\''])
                    .eq_ignore_ascii_case(&tables.service_monitor_argument)
            })
        }
        _ => false,
    }
}

/// Analyses `command` + `args` (either may be absent). Returns `null` when neither is set.
pub(crate) fn analyse_command(
    tables: &CommandTables,
    command: Option<&Doc<'_>>,
    args: Option<&Doc<'_>>,
) -> Value {
    if command.is_none() && args.is_none() {
        return Doc::Null;
    }
    let words: Vec<Cow<'_, str>> = command
        .into_iter()
        .chain(args)
        .filter_map(Doc::as_array)
        .flatten()
        .map(|w| match w {
            Doc::String(s) => Cow::Borrowed(s.as_str()),
            other => Cow::Owned(other.to_string()),
        })
        .collect();
    let first = words.first().map(|w| basename(w)).unwrap_or_default();
    let shell = tables.shells.iter().find(|s| is_one_of(&s.names, first));
    let script: String;
    let (shell_name, steps): (Value, Vec<Vec<Cow<'_, str>>>) = match shell {
        Some(sh) => {
            // The script is everything after the script flag (PowerShell joins its remaining
            // arguments with spaces; so does cmd's `/c`).
            let flag_at = words
                .iter()
                .skip(1)
                .position(|w| is_one_of(&sh.script_flags, w));
            let script_words = match flag_at {
                Some(i) => {
                    let mut j = i + 2;
                    // `cmd /s /c "…"`: skip further flags.
                    while j < words.len() && is_one_of(&sh.script_flags, &words[j]) {
                        j += 1;
                    }
                    &words[j.min(words.len())..]
                }
                // `powershell -File x.ps1`, `powershell -NoProfile script…`: take the non-flag rest.
                None => {
                    let j = words
                        .iter()
                        .skip(1)
                        .position(|w| !w.starts_with('-'))
                        .map_or(words.len(), |i| i + 1);
                    &words[j..]
                }
            };
            script = script_words.join(" ");
            (
                Doc::from(first.to_lowercase()),
                split_steps(&script).into_iter().map(split_words).collect(),
            )
        }
        None => (Doc::Null, vec![words.clone()]),
    };
    let steps: Vec<Vec<Cow<'_, str>>> = steps.into_iter().filter(|s| !s.is_empty()).collect();
    let monitor_at = steps.iter().position(|s| is_service_monitor(tables, s));
    let copies: Vec<Value> = steps[..monitor_at.unwrap_or(steps.len())]
        .iter()
        .filter_map(|s| {
            copy_source(tables, s).map(|src| {
                Doc::object([("source", Doc::from(src)), ("step", Doc::from(s.join(" ")))])
            })
        })
        .collect();
    Doc::object([
        ("shell", shell_name),
        ("steps", steps.iter().map(|s| s.join(" ")).collect()),
        ("serviceMonitor", Doc::from(monitor_at.is_some())),
        (
            "serviceMonitorLast",
            Doc::from(monitor_at.is_some_and(|i| i + 1 == steps.len())),
        ),
        ("lastStep", Doc::from(steps.last().map(|s| s.join(" ")))),
        ("copies", Doc::Array(copies)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use crate::windows::{Catalog, EMBEDDED_CATALOG, ImagePatterns};

    fn analyse(command: Value, args: Option<Value>) -> Value {
        let catalog = Catalog::load(EMBEDDED_CATALOG, &ImagePatterns::default()).unwrap();
        analyse_command(&catalog.commands, Some(&command), args.as_ref())
    }

    #[test]
    fn words_and_steps_split_outside_quotes() {
        assert_eq!(
            split_words(r#"Copy-Item "C:\a b\web.config"  x a"b c"d '' "#),
            vec!["Copy-Item", "C:\\a b\\web.config", "x", "ab cd"]
        );
        assert_eq!(
            split_steps("a; b 'c;d' && e | \"f&g\"\nh"),
            vec!["a", "b 'c;d'", "e", "\"f&g\"", "h"]
        );
    }

    #[test]
    fn seed_article_entrypoint() {
        let s = analyse(
            json!([
                "powershell.exe",
                "-Command",
                "cp c:\\app\\secret-volume\\web.config Web.config",
                ";mkdir c:\\cert",
                ";cp c:\\app\\secret-volume\\*.cer c:\\cert\\",
                ";C:\\ServiceMonitor.exe",
                "w3svc"
            ]),
            None,
        );
        assert_eq!(s["serviceMonitorLast"], true);
        assert_eq!(
            s["copies"][0]["source"],
            "c:\\app\\secret-volume\\web.config"
        );
        assert_eq!(s["copies"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn copy_item_parameters_and_logmonitor() {
        let s = analyse(
            json!([
                "powershell",
                "-NoProfile",
                "-Command",
                "Copy-Item -Destination C:\\inetpub\\wwwroot\\web.config -Path C:\\config\\web.config -Force; & C:\\LogMonitor\\LogMonitor.exe C:\\ServiceMonitor.exe w3svc"
            ]),
            None,
        );
        assert_eq!(s["copies"][0]["source"], "C:\\config\\web.config");
        assert_eq!(s["serviceMonitorLast"], true);
    }

    #[test]
    fn service_monitor_not_last_and_exec_form() {
        let s = analyse(
            json!(["cmd", "/c", "C:\\ServiceMonitor.exe w3svc && echo done"]),
            None,
        );
        assert_eq!(
            (s["serviceMonitor"].clone(), s["serviceMonitorLast"].clone()),
            (json!(true), json!(false))
        );
        let s = analyse(json!(["C:\\ServiceMonitor.exe", "w3svc"]), None);
        assert_eq!(s["serviceMonitorLast"], true);
        let s = analyse(json!(["powershell", "-Command", "Start-Sleep 10"]), None);
        assert_eq!(s["serviceMonitor"], false);
    }
}
