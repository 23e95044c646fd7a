//! Static types for the load-time checks.
//!
//! Gradual, as Kubernetes' CEL is for unstructured objects: whatever comes from an input object
//! is `dyn`, which matches every parameter; a check fails only where both sides are known and
//! differ (`'a' + 1`, `size(true)`, a field a record does not have).

use super::RecordDecl;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Type {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    Optional(Box<Type>),
    Quantity,
    Semver,
    /// Kubernetes' `net.IP` and `net.CIDR` (`ip()`, `cidr()`).
    Ip,
    Cidr,
    /// Kubernetes' `kubernetes.URL` (`url()`).
    Url,
    /// A type value (`type(x)`).
    Type,
    /// A declared record: index into the registry's records.
    Record(u32),
    /// A signature's type parameter (`A`, `B`).
    Param(u8),
}

impl Type {
    pub fn list(of: Type) -> Type {
        Type::List(Box::new(of))
    }

    pub fn display(&self, records: &[RecordDecl]) -> String {
        match self {
            Type::Dyn => "dyn".into(),
            Type::Null => "null_type".into(),
            Type::Bool => "bool".into(),
            Type::Int => "int".into(),
            Type::Uint => "uint".into(),
            Type::Double => "double".into(),
            Type::String => "string".into(),
            Type::Bytes => "bytes".into(),
            Type::List(t) => format!("list({})", t.display(records)),
            Type::Map(k, v) => format!("map({}, {})", k.display(records), v.display(records)),
            Type::Optional(t) => format!("optional_type({})", t.display(records)),
            Type::Quantity => "quantity".into(),
            Type::Semver => "semver".into(),
            Type::Ip => "net.IP".into(),
            Type::Cidr => "net.CIDR".into(),
            Type::Url => "kubernetes.URL".into(),
            Type::Type => "type".into(),
            Type::Record(i) => records
                .get(*i as usize)
                .map_or_else(|| "record".into(), |r| r.name.clone()),
            Type::Param(p) => ((b'A' + p) as char).to_string(),
        }
    }

    /// Whether a value of this type may be a value of `other` at run time (either is `dyn`, or
    /// they agree part by part).
    pub fn may_be(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::Dyn, _) | (_, Type::Dyn) | (Type::Param(_), _) | (_, Type::Param(_)) => true,
            (Type::List(a), Type::List(b)) | (Type::Optional(a), Type::Optional(b)) => a.may_be(b),
            (Type::Map(ak, av), Type::Map(bk, bv)) => ak.may_be(bk) && av.may_be(bv),
            (a, b) => a == b,
        }
    }

    /// Matches a parameter against an argument's type, binding type parameters.
    pub fn bind(&self, arg: &Type, bound: &mut [Option<Type>; 2]) -> bool {
        match (self, arg) {
            (Type::Param(p), t) => match &bound[*p as usize] {
                Some(b) if *b != Type::Dyn && *t != Type::Dyn => b.may_be(t),
                Some(_) => true,
                None => {
                    bound[*p as usize] = Some(t.clone());
                    true
                }
            },
            (Type::List(a), Type::List(b)) | (Type::Optional(a), Type::Optional(b)) => {
                a.bind(b, bound)
            }
            (Type::List(a) | Type::Optional(a), Type::Dyn) => a.bind(&Type::Dyn, bound),
            (Type::Map(ak, av), Type::Map(bk, bv)) => ak.bind(bk, bound) && av.bind(bv, bound),
            (Type::Map(ak, av), Type::Dyn) => {
                ak.bind(&Type::Dyn, bound) && av.bind(&Type::Dyn, bound)
            }
            (p, a) => p.may_be(a),
        }
    }

    /// The type with its parameters replaced by what they were bound to (`dyn` if unbound).
    pub fn substitute(&self, bound: &[Option<Type>; 2]) -> Type {
        match self {
            Type::Param(p) => bound[*p as usize].clone().unwrap_or(Type::Dyn),
            Type::List(t) => Type::list(t.substitute(bound)),
            Type::Optional(t) => Type::Optional(Box::new(t.substitute(bound))),
            Type::Map(k, v) => {
                Type::Map(Box::new(k.substitute(bound)), Box::new(v.substitute(bound)))
            }
            t => t.clone(),
        }
    }
}

/// A parsed function signature.
pub(super) struct Signature {
    pub name: &'static str,
    pub receiver: bool,
    pub params: Vec<Type>,
    pub result: Type,
}

/// Parses `name(T, …) -> R` or `T.name(T, …) -> R` (the receiver is the first parameter).
pub(super) fn parse_signature(
    text: &'static str,
    records: &[RecordDecl],
) -> Result<Signature, String> {
    let (call, result) = text.split_once("->").ok_or("no `->`")?;
    let call = call.trim();
    // The parameters' `(` is the one matching the final `)`.
    let mut depth = 0;
    let mut open = None;
    for (i, ch) in call.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open.ok_or("no `(`")?;
    let head = &call[..open];
    let args = call[open + 1..].strip_suffix(')').ok_or("no `)`")?;
    let mut params = Vec::new();
    // The receiver type may itself contain dots only inside parentheses (`list(A).max`).
    // `optional.of(…)` is a function of a namespace, not a method of a type.
    let (receiver, name) = match top_level_rfind(head, '.') {
        Some(dot) => match parse_type(&head[..dot], records) {
            Ok(t) => {
                params.push(t);
                (true, &head[dot + 1..])
            }
            Err(_) if head[..dot].bytes().all(|b| b.is_ascii_lowercase()) => (false, head),
            Err(e) => return Err(e),
        },
        None => (false, head),
    };
    for a in split_top_level(args) {
        params.push(parse_type(a, records)?);
    }
    Ok(Signature {
        name,
        receiver,
        params,
        result: parse_type(result.trim(), records)?,
    })
}

fn top_level_rfind(text: &str, c: char) -> Option<usize> {
    let mut depth = 0;
    let mut found = None;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if ch == c && depth == 0 => found = Some(i),
            _ => {}
        }
    }
    found
}

fn split_top_level(text: &str) -> Vec<&str> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out
}

/// Parses a type as signatures write it.
pub(super) fn parse_type(text: &str, records: &[RecordDecl]) -> Result<Type, String> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix("list(").and_then(|t| t.strip_suffix(')')) {
        return Ok(Type::list(parse_type(inner, records)?));
    }
    if let Some(inner) = text
        .strip_prefix("optional(")
        .and_then(|t| t.strip_suffix(')'))
    {
        return Ok(Type::Optional(Box::new(parse_type(inner, records)?)));
    }
    if let Some(inner) = text.strip_prefix("map(").and_then(|t| t.strip_suffix(')')) {
        let parts = split_top_level(inner);
        let [k, v] = parts.as_slice() else {
            return Err(format!("`{text}` needs a key and a value type"));
        };
        return Ok(Type::Map(
            Box::new(parse_type(k, records)?),
            Box::new(parse_type(v, records)?),
        ));
    }
    Ok(match text {
        "dyn" => Type::Dyn,
        "null" => Type::Null,
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "quantity" => Type::Quantity,
        "semver" => Type::Semver,
        "net.IP" => Type::Ip,
        "net.CIDR" => Type::Cidr,
        "kubernetes.URL" => Type::Url,
        "type" => Type::Type,
        "A" => Type::Param(0),
        "B" => Type::Param(1),
        name => match records.iter().position(|r| r.name == name) {
            Some(i) => Type::Record(i as u32),
            None => return Err(format!("unknown type `{name}`")),
        },
    })
}
