//! Globs as the Go libraries charts meet match them.

/// The two glob dialects charts meet.
#[derive(Clone, Copy, PartialEq)]
pub enum Glob {
    /// Go's `filepath.Match` (`.helmignore`): `*` and `?` stay within one path part.
    FilepathMatch,
    /// gobwas/glob with `/` as separator (`.Files.Glob`): also `**` across parts and `{a,b}`.
    Gobwas,
}

/// A glob as an anchored regex. Written here because the `glob`-style crates match paths on
/// disk or follow shell rules, not these two Go libraries.
pub fn glob_regex(pattern: &str, dialect: Glob) -> String {
    let mut re = String::from("^");
    let mut chars = pattern.chars().peekable();
    let mut braces = 0;
    while let Some(c) = chars.next() {
        match c {
            '*' if dialect == Glob::Gobwas && chars.peek() == Some(&'*') => {
                chars.next();
                re.push_str(".*");
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                re.push('[');
                if matches!(chars.peek(), Some('!' | '^')) {
                    chars.next();
                    re.push('^');
                }
                for c in chars.by_ref() {
                    match c {
                        ']' => break,
                        // Ranges (`a-z`) stay; what the regex crate reads as class syntax is
                        // escaped.
                        '\\' | '[' | '&' | '~' => {
                            re.push('\\');
                            re.push(c);
                        }
                        c => re.push(c),
                    }
                }
                re.push(']');
            }
            '{' if dialect == Glob::Gobwas => {
                braces += 1;
                re.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                re.push(')');
            }
            ',' if braces > 0 => re.push('|'),
            '\\' => {
                if let Some(n) = chars.next() {
                    re.push_str(&regex::escape(&n.to_string()));
                }
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    re
}

#[cfg(test)]
mod tests {
    use super::{Glob, glob_regex};

    #[test]
    fn globs_in_both_dialects() {
        let m =
            |p: &str, d: Glob, s: &str| regex::Regex::new(&glob_regex(p, d)).unwrap().is_match(s);
        assert!(m("config/[a-c]*.conf", Glob::Gobwas, "config/app.conf"));
        assert!(!m("config/[!a]*.conf", Glob::Gobwas, "config/app.conf"));
        assert!(m("config/**", Glob::Gobwas, "config/nested/deep.txt"));
        assert!(!m("config/*", Glob::Gobwas, "config/nested/deep.txt"));
        assert!(m("*.{yaml,json}", Glob::Gobwas, "a.json"));
        assert!(m("*.tmp", Glob::FilepathMatch, "a.tmp"));
        assert!(!m("a,b", Glob::FilepathMatch, "a"));
    }
}
