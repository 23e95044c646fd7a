//! Reading what a container's entrypoint does: which steps run, whether IIS's `ServiceMonitor.exe
//! w3svc` is the last, foreground step, and what is copied before it (§6 of the domain notes).
//!
//! Written by hand because no crate parses "a PowerShell or cmd script as Kubernetes passes it":
//! the command and args arrays are joined as the container runtime would, the script argument of
//! a known shell is split into steps at `;`, `&&`, `||`, `&`, `|` and newlines (outside quotes),
//! and each step into words. It is a reader for the patterns real charts use, not a shell.

use serde_json::{Value, json};

use super::CommandTables;

fn basename(word: &str) -> String {
    let w = word.trim_matches(['"', '\'']);
    w.rsplit(['\\', '/']).next().unwrap_or(w).to_lowercase()
}

fn split_steps(script: &str) -> Vec<String> {
    let mut steps = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in script.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                ';' | '&' | '|' | '\n' | '\r' => {
                    if !cur.trim().is_empty() {
                        steps.push(cur.trim().to_string());
                    }
                    cur.clear();
                }
                _ => cur.push(c),
            },
        }
    }
    if !cur.trim().is_empty() {
        steps.push(cur.trim().to_string());
    }
    steps
}

fn split_words(step: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in step.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            None => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn is_flag(word: &str) -> bool {
    // `-Force`, `-r`; cmd's `/Y` `/E` (a short switch with no further slash or dot, unlike `/config`).
    word.starts_with('-')
        || (word.starts_with('/') && word.len() <= 4 && !word[1..].contains(['/', '.', '\\']))
}

/// The source path of a copy step, if the step is a copy.
fn copy_source(tables: &CommandTables, words: &[String]) -> Option<String> {
    let verb = basename(words.first()?);
    let verb = verb.strip_suffix(".exe").unwrap_or(&verb);
    if !tables.copy.iter().any(|c| c == verb) {
        return None;
    }
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let lower = w.to_lowercase();
        if let Some((name, value)) = lower.split_once(':').filter(|(n, _)| n.starts_with('-'))
            && tables.source_parameters.iter().any(|p| p == name)
        {
            return Some(w[name.len() + 1..].to_string()).filter(|_| !value.is_empty());
        }
        if tables.source_parameters.contains(&lower) {
            return words.get(i + 1).cloned();
        }
        if tables.value_parameters.contains(&lower) {
            i += 2;
            continue;
        }
        if is_flag(w) {
            i += 1;
            continue;
        }
        return Some(w.clone());
    }
    None
}

fn is_service_monitor(tables: &CommandTables, words: &[String]) -> bool {
    let mut rest = words;
    while let Some(first) = rest.first() {
        if tables.wrappers.contains(&basename(first)) {
            rest = &rest[1..];
        } else {
            break;
        }
    }
    match rest.first() {
        Some(first) if tables.service_monitor.contains(&basename(first)) => {
            rest[1..].iter().any(|w| {
                w.trim_matches(['"', '\''])
                    .eq_ignore_ascii_case(&tables.service_monitor_argument)
            })
        }
        _ => false,
    }
}

/// Analyses `command` + `args` (either may be absent). Returns `null` when neither is set.
pub fn analyse_command(
    tables: &CommandTables,
    command: Option<&Value>,
    args: Option<&Value>,
) -> Value {
    if command.is_none() && args.is_none() {
        return Value::Null;
    }
    let words: Vec<String> = command
        .into_iter()
        .chain(args)
        .filter_map(Value::as_array)
        .flatten()
        .map(|w| match w {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let first = words.first().map(|w| basename(w)).unwrap_or_default();
    let shell = tables.shells.iter().find(|s| s.names.contains(&first));
    let (shell_name, steps): (Value, Vec<Vec<String>>) = match shell {
        Some(sh) => {
            // The script is everything after the script flag (PowerShell joins its remaining
            // arguments with spaces; so does cmd's `/c`).
            let flag_at = words
                .iter()
                .skip(1)
                .position(|w| sh.script_flags.contains(&w.to_lowercase()));
            let script_words = match flag_at {
                Some(i) => {
                    let mut j = i + 2;
                    // `cmd /s /c "…"`: skip further flags.
                    while j < words.len() && sh.script_flags.contains(&words[j].to_lowercase()) {
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
            let script = script_words.join(" ");
            (
                json!(first),
                split_steps(&script)
                    .iter()
                    .map(|s| split_words(s))
                    .collect(),
            )
        }
        None => (Value::Null, vec![words.clone()]),
    };
    let steps: Vec<Vec<String>> = steps.into_iter().filter(|s| !s.is_empty()).collect();
    let monitor_at = steps.iter().position(|s| is_service_monitor(tables, s));
    let copies: Vec<Value> = steps[..monitor_at.unwrap_or(steps.len())]
        .iter()
        .filter_map(|s| {
            copy_source(tables, s).map(|src| json!({"source": src, "step": s.join(" ")}))
        })
        .collect();
    json!({
        "shell": shell_name,
        "steps": steps.iter().map(|s| s.join(" ")).collect::<Vec<_>>(),
        "serviceMonitor": monitor_at.is_some(),
        "serviceMonitorLast": monitor_at.is_some_and(|i| i + 1 == steps.len()),
        "lastStep": steps.last().map(|s| s.join(" ")),
        "copies": copies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::model::{Catalog, EMBEDDED_CATALOG};

    fn analyse(command: Value, args: Option<Value>) -> Value {
        let catalog = Catalog::load(EMBEDDED_CATALOG, &Config::default()).unwrap();
        analyse_command(&catalog.commands, Some(&command), args.as_ref())
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
