//! CEL, the Common Expression Language, as rule files write it: parsed by the `cel` crate's
//! parser, type-checked and compiled here, evaluated over borrowed [`Value`]s.
//!
//! Rule conditions, `let`s, pointers, messages and fix conditions are CEL as the CEL spec and
//! Kubernetes (ValidatingAdmissionPolicy, CRD validation rules) define it: `has()`, the optional
//! syntax (`a.?b.orValue(x)`, `l[?0]`), the macros `all`, `exists`, `exists_one`, `map` and
//! `filter`, errors for a missing field, and the Kubernetes extension libraries that fit
//! (strings, lists, regex, quantity, semver); [`stdlib`] lists them.
//!
//! Why not the `cel` crate's interpreter too: it converts every input into its own value type,
//! a copy of every object before a rule reads any of it. The evaluator here ([`eval`]) reads the
//! input where it lies, and variables resolve to slots when an expression compiles
//! ([`compile`]), so running it looks nothing up by name.
//!
//! This module knows nothing of Kubernetes objects or Windows: hosts declare variables, records
//! (values whose fields are computed on demand, [`Record`]) and functions in a [`Registry`].

mod compile;
mod eval;
mod go_url;
mod net;
mod quantity;
pub mod semver;
pub mod stdlib;
pub mod stored;
mod types;

pub use compile::{Compiler, Program};
pub use eval::{Activation, Args, Call, EvalError, Host, Record, RecordList, Rows, Val};
pub use quantity::Quantity;
pub use types::Type;

use std::collections::HashMap;

/// A load-time error in an expression: what is wrong and the byte range of the expression text
/// it is about.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    pub message: String,
    /// Byte offset into the expression text.
    pub offset: usize,
}

/// What a function does with its arguments (the receiver first, for a method).
pub type Impl = for<'a> fn(&Call<'a>, &mut Args<'a>) -> Result<Val<'a>, EvalError>;

/// Work done once per literal argument at load (a regular expression compiled, a JSONPath
/// parsed); the result reaches the implementation as [`Call::prepared`].
pub type Prepare = fn(&str) -> Result<Box<dyn std::any::Any + Send + Sync>, String>;

/// One overload of a function: its signature and implementation.
#[derive(Clone)]
pub struct Overload {
    pub name: &'static str,
    /// Called as `receiver.name(args)` rather than `name(args)`.
    pub receiver: bool,
    pub params: Vec<Type>,
    pub result: Type,
    pub imp: Impl,
    /// The argument (counting the receiver) that must be a string literal to prepare, and how.
    pub prepare: Option<(usize, Prepare)>,
    /// The signature as written, for docs and errors.
    pub signature: &'static str,
    pub doc: &'static str,
}

/// A record type: a value with named fields, each with a type and what it means.
#[derive(Debug, Clone)]
pub struct RecordDecl {
    pub name: String,
    pub fields: Vec<(String, Type, String)>,
    /// `(fact, note)`: the field that holds a note explaining another field's value (the
    /// second names the note, the first the field it explains); hosts show the note with what
    /// depends on that field.
    pub note: Option<(String, String)>,
}

/// The functions and record types expressions may use. A host builds one, fills it (the standard
/// library, its own functions) and compiles every expression against it.
#[derive(Clone, Default)]
pub struct Registry {
    functions: HashMap<&'static str, Vec<Overload>>,
    records: Vec<RecordDecl>,
}

impl Registry {
    /// A registry with CEL's standard functions and the Kubernetes extension libraries.
    pub fn standard() -> Registry {
        let mut r = Registry::default();
        stdlib::register(&mut r);
        r
    }

    /// Adds a function overload from its signature, `name(type, …) -> type` or
    /// `type.name(type, …) -> type` (types: `bool`, `int`, `uint`, `double`, `string`, `bytes`,
    /// `null`, `dyn`, `list(T)`, `map(K, V)`, `optional(T)`, `quantity`, `semver`, a record's
    /// name, or a type parameter `A`/`B`). Panics on a malformed signature: signatures are
    /// written in the source, and a test loads every one.
    pub fn add(&mut self, signature: &'static str, doc: &'static str, imp: Impl) {
        self.add_prepared(signature, doc, imp, None);
    }

    /// [`Registry::add`] for a function whose argument `at` (receiver first) must be a string
    /// literal, prepared once at load.
    pub fn add_prepared(
        &mut self,
        signature: &'static str,
        doc: &'static str,
        imp: Impl,
        prepare: Option<(usize, Prepare)>,
    ) {
        let sig = types::parse_signature(signature, &self.records)
            .unwrap_or_else(|e| panic!("bad signature `{signature}`: {e}"));
        self.functions.entry(sig.name).or_default().push(Overload {
            name: sig.name,
            receiver: sig.receiver,
            params: sig.params,
            result: sig.result,
            imp,
            prepare,
            signature,
            doc,
        });
    }

    /// Declares a record type; its fields are `(name, type, meaning)`, the type written as in a
    /// signature (a record may name itself or an earlier one).
    pub fn add_record(&mut self, name: &str, fields: &[(&str, &str, &str)]) -> Type {
        let id = self.records.len();
        self.records.push(RecordDecl {
            name: name.to_string(),
            fields: Vec::new(),
            note: None,
        });
        let fields = fields
            .iter()
            .map(|(n, ty, doc)| {
                let ty = types::parse_type(ty, &self.records)
                    .unwrap_or_else(|e| panic!("bad type of {name}.{n}: {e}"));
                (n.to_string(), ty, doc.to_string())
            })
            .collect();
        self.records[id].fields = fields;
        Type::Record(id as u32)
    }

    /// Declares that field `note` of record `record` explains the value of field `explains`.
    pub fn set_note(&mut self, record: &Type, explains: &str, note: &str) {
        if let Type::Record(id) = record {
            self.records[*id as usize].note = Some((explains.to_string(), note.to_string()));
        }
    }

    /// A declared record type by name.
    pub fn record_type(&self, name: &str) -> Option<Type> {
        self.records
            .iter()
            .position(|r| r.name == name)
            .map(|i| Type::Record(i as u32))
    }

    pub fn record(&self, id: u32) -> &RecordDecl {
        &self.records[id as usize]
    }

    /// A declared function's name, as the registry holds it.
    pub(crate) fn function_name(&self, name: &str) -> Option<&'static str> {
        self.functions.get_key_value(name).map(|(k, _)| *k)
    }

    /// The overloads of a function.
    pub fn overloads(&self, name: &str) -> &[Overload] {
        self.functions.get(name).map_or(&[], Vec::as_slice)
    }

    /// Every overload, sorted by name and signature (for docs).
    pub fn all(&self) -> Vec<&Overload> {
        let mut all: Vec<&Overload> = self.functions.values().flatten().collect();
        all.sort_by_key(|o| (o.name, o.signature));
        all
    }

    /// The type name as users read it in errors and docs.
    pub fn type_name(&self, ty: &Type) -> String {
        ty.display(&self.records)
    }
}

#[cfg(test)]
mod tests;
