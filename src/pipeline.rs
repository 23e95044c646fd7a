//! The one pipeline every input goes through on its way to findings, whichever command reads
//! it: `lint` (files, rendered charts, overlays), `fix` and `mutate` (files), and the admission
//! review (one object). Each stage is here once:
//!
//! 1. **admit**: an object the rules can read, or the shape problems that stop it ([`admit`]);
//! 2. **namespace**: an object without one takes its request's ([`default_namespace`]);
//! 3. **input set**: the objects evaluated together and the context the rules read them in
//!    ([`InputSet`]): all of a run's inputs (`lint`, `fix`), or a review's one object beside the
//!    cluster profile;
//! 4. **evaluate**: the policy's rules on each admitted object ([`InputSet::findings`]);
//! 5. **report**: `lint` places findings and errors in a [`Report`] ([`lint_sources`]); `fix`
//!    turns the findings into edits (`crate::fix`), the review into an answer
//!    (`crate::admission`).

use crate::error::{Error, ErrorKind};
use crate::value::{Doc, Value};

use crate::engine::{Context, Finding, evaluate, evaluate_batch};
use crate::k8s::shape::{self, ShapeError};
use crate::manifest::{DocSpan, Object, Sources, Templates, parse_document, split_source};
use crate::policy::Policy;
use crate::report::{Located, Report};

/// Stage 1: whether the rules can read `object` (the fields the rules and the Windows model
/// read have the shapes the API server gives them), or the problems that stop it.
pub fn admit(object: &Doc<'_>) -> Result<(), Vec<ShapeError>> {
    let problems = shape::check(object);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Stage 2: an object that names no namespace takes `namespace`, its request's. On CREATE the
/// API server fills the namespace in only after admission; exemptions and messages need it.
pub fn default_namespace(object: &mut Doc<'_>, namespace: &str) {
    if let Some(meta) = object.get_mut("metadata").and_then(Doc::as_object_mut)
        && !meta.contains_key("namespace")
        && !namespace.is_empty()
    {
        meta.insert("namespace", Doc::from(namespace));
    }
}

/// Why a review evaluates its object: the webhook's two endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewPurpose {
    /// `/validate`: every rule; no patch is built per finding.
    Validate,
    /// `/mutate`: only the rules with a safe fix, whose patch is the answer.
    Mutate,
}

/// Stage 3: the objects evaluated together, and the context the rules read them in.
pub struct InputSet<'a> {
    policy: &'a Policy,
    ctx: Context<'a>,
}

impl<'a> InputSet<'a> {
    /// Every object of a run: cross-object rules see each other's objects (`fix`).
    pub fn of_objects(policy: &'a Policy, objects: &[&'a Doc<'a>]) -> Self {
        InputSet {
            policy,
            ctx: Context::new(policy.basis(), objects),
        }
    }

    /// The objects of a run other rules consult, grouped by kind: `lists[i]` holds those of
    /// kind `kinds[i]` (`lint`).
    fn of_lists(policy: &'a Policy, kinds: &'a [String], lists: &'a [Vec<Value>]) -> Self {
        InputSet {
            policy,
            ctx: Context::from_lists(policy.basis(), kinds, lists),
        }
    }

    /// One object under review, seen alone: cross-object rules see only the cluster profile
    /// (configured RuntimeClasses), as the webhook has no view of the rest of the cluster.
    pub fn of_review(policy: &'a Policy, purpose: ReviewPurpose) -> Self {
        let mut ctx = Context::for_single_object(policy.basis());
        match purpose {
            ReviewPurpose::Validate => ctx.fixes = false,
            ReviewPurpose::Mutate => ctx.only_safe_fixes(),
        }
        InputSet { policy, ctx }
    }

    /// Stage 4: the findings of the policy's rules on an admitted object.
    pub fn findings(&self, object: &Doc<'_>) -> Vec<Finding> {
        evaluate(&self.policy.rules, &self.ctx, object)
    }

    /// The findings of each of `objects`, evaluated together.
    pub fn findings_batch(&self, objects: &[&Doc<'_>]) -> Vec<Vec<Finding>> {
        evaluate_batch(&self.policy.rules, &self.ctx, objects)
    }
}

/// Lints the inputs of a run.
///
/// Documents are parsed in two waves so memory stays near the size of the input: first the ones
/// other objects' rules may consult (RuntimeClasses, and the kinds rules read through
/// `objects(…)`, found by each document's `kind:` line) or whose kind can't be told without
/// parsing; then every other document is parsed, checked and evaluated, and dropped, keeping only
/// its findings.
pub fn lint_sources(setup: &Policy, sources: Sources) -> Report {
    use rayon::prelude::*;
    let Sources {
        texts,
        errors,
        files,
        ..
    } = sources;
    let context_kinds: Option<Vec<String>> =
        crate::engine::referenced_kinds(&setup.rules).map(|mut k| {
            k.push("RuntimeClass".to_string());
            k
        });
    let documents = Documents::triage(&texts, context_kinds.as_deref());
    let mut all_errors: Vec<(usize, Error)> = errors.into_iter().map(|e| (0, e)).collect();

    // Wave 1: parse what the context needs, and check its shapes before the values move into
    // the context (the checks place their errors with the objects' values).
    let mut kept = documents.parse_early(&mut all_errors);
    let (kept_ok, kept_errors): (Vec<bool>, Vec<Vec<(usize, Error)>>) = kept
        .par_iter()
        .map(|(i, o)| {
            let mut errors = Vec::new();
            (admit_located(*i, o, &mut errors), errors)
        })
        .unzip();
    all_errors.extend(kept_errors.into_iter().flatten());
    let lent = LentValues::take(&mut kept, context_kinds.as_deref());
    let set = InputSet::of_lists(setup, &lent.kinds, &lent.lists);

    // Wave 2: evaluate everything; parse, check and evaluate the rest on the way.
    let from_kept = kept
        .par_iter()
        .zip(&lent.slots)
        .zip(&kept_ok)
        .enumerate()
        .map(|(k, (((_, o), slot), ok))| {
            let mut out = Outcome::default();
            if *ok {
                let value = match slot {
                    Some((kind, j)) => &lent.lists[*kind][*j],
                    None => &o.value,
                };
                out.objects += 1;
                let findings = set.findings(value);
                if !findings.is_empty() {
                    out.kept_findings.push((k, findings));
                }
            }
            out
        });
    // Documents go in small batches, each parsed whole and then evaluated whole: alternating
    // between the parser and the rules per document would have them evict each other's code
    // from the instruction cache.
    let from_late = documents
        .late
        .par_chunks(LATE_BATCH)
        .map(|batch| documents.evaluate_late(&set, batch));
    // Split fine enough for the threads to share the last of the work: left to its own
    // splitting, rayon cuts the run into a few large pieces, and one thread can be left
    // evaluating the last of them alone while the others wait.
    let outcomes: Vec<Outcome> = from_kept
        .with_max_len(KEPT_PER_TASK)
        .chain(from_late.with_max_len(1))
        .collect();
    drop(set);
    lent.give_back(&mut kept);
    let report = assemble(files, outcomes, &kept, all_errors);
    // The kept objects are freed on all threads, not one.
    kept.into_par_iter().for_each(drop);
    report
}

/// The documents of a run's texts, sorted into the two waves of [`lint_sources`].
struct Documents<'t> {
    texts: &'t [std::sync::Arc<crate::manifest::SourceText>],
    /// Each text's Helm templates (its `# Source:` comments).
    templates: Vec<Templates>,
    /// (text, document) of the documents other objects' rules may consult.
    early: Vec<(usize, DocSpan)>,
    /// The rest.
    late: Vec<(usize, DocSpan)>,
}

impl<'t> Documents<'t> {
    fn triage(
        texts: &'t [std::sync::Arc<crate::manifest::SourceText>],
        context_kinds: Option<&[String]>,
    ) -> Self {
        use rayon::prelude::*;
        let needs_context = |hint: Option<&str>| match (hint, context_kinds) {
            (_, None) | (None, _) => true,
            (Some(kind), Some(kinds)) => kind.ends_with("List") || kinds.iter().any(|k| k == kind),
        };
        // Each text's templates and documents, found in parallel (a line scan of every input).
        let (templates, spans): (Vec<Templates>, Vec<Vec<DocSpan>>) =
            texts.par_iter().map(|t| split_source(&t.text)).unzip();
        let documents: usize = spans.iter().map(Vec::len).sum();
        let mut early = Vec::new();
        let mut late = Vec::with_capacity(documents);
        for (i, text_spans) in spans.into_iter().enumerate() {
            for span in text_spans {
                if needs_context(span.kind_hint(&texts[i].text)) {
                    early.push((i, span));
                } else {
                    late.push((i, span));
                }
            }
        }
        Documents {
            texts,
            templates,
            early,
            late,
        }
    }

    /// Wave 1's objects, each with its text's index; their parse errors go to `errors`.
    fn parse_early(&self, errors: &mut Vec<(usize, Error)>) -> Vec<(usize, Object)> {
        use rayon::prelude::*;
        let parsed: Vec<(usize, Vec<Object>, Vec<Error>)> = self
            .early
            .par_iter()
            .map(|(i, span)| {
                let (objects, errors) = parse_document(&self.texts[*i], &self.templates[*i], span);
                (*i, objects, errors)
            })
            .collect();
        // Sized once: grown by doubling, moving tens of thousands of objects each time, serially.
        let mut kept = Vec::with_capacity(parsed.iter().map(|(_, objects, _)| objects.len()).sum());
        for (i, objects, errs) in parsed {
            errors.extend(errs.into_iter().map(|e| (i, e)));
            kept.extend(objects.into_iter().map(|o| (i, o)));
        }
        kept
    }

    /// One batch of wave 2: parsed, admitted and evaluated.
    fn evaluate_late(&self, set: &InputSet<'_>, batch: &[(usize, DocSpan)]) -> Outcome {
        let mut out = Outcome::default();
        let parsed: Vec<(usize, Vec<Object>)> = batch
            .iter()
            .map(|(i, span)| {
                let (objects, errs) = parse_document(&self.texts[*i], &self.templates[*i], span);
                out.errors.extend(errs.into_iter().map(|e| (*i, e)));
                (*i, objects)
            })
            .collect();
        let mut checked: Vec<&Object> = Vec::new();
        for (i, objects) in &parsed {
            for o in objects {
                if admit_located(*i, o, &mut out.errors) {
                    checked.push(o);
                }
            }
        }
        out.objects += checked.len();
        let values: Vec<&Doc<'_>> = checked.iter().map(|o| &o.value).collect();
        let results = set.findings_batch(&values);
        for (o, findings) in checked.into_iter().zip(results) {
            out.findings.extend(Located::all(findings, o));
        }
        out
    }
}

/// [`admit`] for an object of text `i`: its shape problems become errors placed at their
/// values; false when there were any.
fn admit_located(i: usize, o: &Object, errors: &mut Vec<(usize, Error)>) -> bool {
    let Err(problems) = admit(&o.value) else {
        return true;
    };
    for p in &problems {
        let pos = o.value_position(&p.pointer);
        errors.push((
            i,
            Error {
                kind: ErrorKind::Input,
                file: o.file.to_string(),
                line: Some(pos.line),
                column: Some(pos.column),
                message: format!("{} {}: {}", o.kind(), o.name(), p.message),
            },
        ));
    }
    false
}

/// The kept objects' values, lent to the context as its lists of objects by kind: moved rather
/// than copied (a large input has thousands of Services, each of which would be copied whole),
/// and given back to their objects once evaluation is done, to place the findings.
struct LentValues {
    kinds: Vec<String>,
    lists: Vec<Vec<Value>>,
    /// A kept object's place: its kind's index in `kinds` and its index in that kind's list (no
    /// kind name copied or hashed per object: there are tens of thousands in a cluster dump).
    slots: Vec<Option<(usize, usize)>>,
}

impl LentValues {
    fn take(kept: &mut [(usize, Object)], context_kinds: Option<&[String]>) -> Self {
        let mut lent = LentValues {
            kinds: Vec::new(),
            lists: Vec::new(),
            slots: Vec::with_capacity(kept.len()),
        };
        for (_, o) in kept.iter_mut() {
            let kind = o.kind();
            if context_kinds.is_none_or(|k| k.iter().any(|c| c == kind)) {
                let at = match lent.kinds.iter().position(|k| k == kind) {
                    Some(at) => at,
                    None => {
                        lent.kinds.push(kind.to_string());
                        lent.lists.push(Vec::new());
                        lent.kinds.len() - 1
                    }
                };
                lent.slots.push(Some((at, lent.lists[at].len())));
                lent.lists[at].push(std::mem::take(&mut o.value));
            } else {
                lent.slots.push(None);
            }
        }
        lent
    }

    fn give_back(mut self, kept: &mut [(usize, Object)]) {
        for ((_, o), slot) in kept.iter_mut().zip(self.slots) {
            if let Some((kind, j)) = slot {
                o.value = std::mem::take(&mut self.lists[kind][j]);
            }
        }
    }
}

/// The report of a run: every outcome's findings (a kept object's placed with it), and the
/// errors in input order (by source, then line).
fn assemble(
    files: usize,
    outcomes: Vec<Outcome>,
    kept: &[(usize, Object)],
    mut all_errors: Vec<(usize, Error)>,
) -> Report {
    let mut report = Report {
        files,
        ..Report::default()
    };
    report.findings.reserve_exact(
        outcomes
            .iter()
            .map(|o| o.findings.len() + o.kept_findings.iter().map(|(_, f)| f.len()).sum::<usize>())
            .sum(),
    );
    for out in outcomes {
        report.objects += out.objects;
        report.findings.extend(out.findings);
        for (k, findings) in out.kept_findings {
            let o = &kept[k].1;
            report.findings.extend(Located::all(findings, o));
        }
        all_errors.extend(out.errors);
    }
    all_errors.sort_by_key(|(i, e)| (*i, e.line.unwrap_or(0)));
    report.errors = all_errors.into_iter().map(|(_, e)| e).collect();
    report.sort();
    report
}

/// Documents parsed before their batch is evaluated (see `lint_sources`); small enough that a
/// batch's objects stay a few hundred kilobytes.
const LATE_BATCH: usize = 16;

/// How many kept objects (each evaluated alone) one task of the evaluation takes at most.
const KEPT_PER_TASK: usize = 32;

#[derive(Default)]
struct Outcome {
    objects: usize,
    findings: Vec<Located>,
    /// Findings of a kept object (by index), placed once its value is back in it.
    kept_findings: Vec<(usize, Vec<crate::engine::Finding>)>,
    errors: Vec<(usize, Error)>,
}

/// Lints one text as if it were a file named `name` (tests, docs examples, benches).
pub fn lint_text(setup: &Policy, name: &str, text: &str) -> Report {
    lint_sources(setup, Sources::from_text(name, text))
}
