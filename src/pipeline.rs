//! The whole transformation, as one pure function: sources in, documents out.
//!
//! input ([`crate::input::yaml`]) → model ([`crate::input::de`], [`crate::model`]) → validate
//! ([`crate::validate`]) → render ([`mod@crate::render`]); the caller emits ([`crate::emit`]).
//! Every document is read and checked before anything is rendered, and any error means no
//! documents at all.

use serde::Deserialize;
use serde_json::Value as Json;

use crate::diag::{Diagnostic, Diagnostics, FieldPath, closest};
use crate::input::de;
use crate::input::located::Located;
use crate::input::source::Inputs;
use crate::input::yaml::{self, Document, Node, Value};
use crate::input::yaml11;
use crate::model::{self, RolloutManager, uses};
use crate::options::Options;
use crate::render::warnings::WarningsNote;
use crate::render::{self, Extras, SharedMetadata};
use crate::spec::Manager;
use crate::validate::{self, Checked, Checker, stream};

/// The result of a successful run: what to write, and warnings.
///
/// Everything is validated; the objects themselves are built while they are written
/// ([`Rendered::documents`]), one at a time, so memory stays proportional to the input, not
/// to the output (and the input is held once, as the YAML tree).
#[derive(Debug)]
pub struct Rendered {
    items: Vec<Item>,
    service_monitor: bool,
    /// The aggregate ClusterRoles' metadata, when they are rendered.
    aggregate_roles: Option<SharedMetadata>,
    warnings_annotation: bool,
    pub warnings: Diagnostics,
}

impl Rendered {
    /// Every output document, in order: each manager's objects in place of its RolloutManager
    /// (the aggregate ClusterRoles with the first one), other objects as they came.
    pub fn documents(&self) -> impl Iterator<Item = Json> + '_ {
        self.documents_noting(None)
    }

    /// Whether the run asked for its warnings in the output (`--warnings-annotation`).
    pub fn notes_warnings(&self) -> bool {
        self.warnings_annotation
    }

    /// [`Self::documents`], with `warnings` recorded on the first manager's ConfigMap. The
    /// caller passes them because it may hold more than the pipeline found (`generate` adds
    /// the warnings about its parameters).
    pub fn documents_noting<'a>(
        &'a self,
        warnings: Option<&'a WarningsNote>,
    ) -> impl Iterator<Item = Json> + 'a {
        self.documents_by_input_noting(warnings).flatten()
    }

    /// The output documents of each input document, in input order: a RolloutManager's
    /// objects, or the passthrough object alone (the KRM function replaces items in place);
    /// `warnings` as for [`Self::documents_noting`].
    pub fn documents_by_input_noting<'a>(
        &'a self,
        warnings: Option<&'a WarningsNote>,
    ) -> impl Iterator<Item = Vec<Json>> + 'a {
        let mut first_manager = true;
        self.items.iter().map(move |item| match item {
            Item::Manager(manager) => {
                let extras = Extras {
                    aggregate_roles: self.aggregate_roles.as_ref().filter(|_| first_manager),
                    service_monitor: self.service_monitor,
                    warnings: warnings.filter(|_| first_manager),
                };
                first_manager = false;
                render::manager(manager, extras)
            }
            // Converted a second time, here, so that only one document's JSON is ever held;
            // its problems were reported by the first conversion, during validation.
            Item::Passthrough(document) => vec![
                yaml11::to_json(document, &mut Diagnostics::default())
                    .expect("the conversion is deterministic and succeeded during validation"),
            ],
        })
    }
}

/// A document of the input, classified.
#[derive(Debug)]
enum Item {
    Manager(Box<Manager>),
    Passthrough(Document),
}

/// A document of the input while it is checked.
enum Checking {
    Manager(Box<Checked>),
    Passthrough(Document),
}

/// Kinds of the argoproj.io group that are not typos of RolloutManager.
const ARGOPROJ_KINDS: [&str; 7] = [
    "Rollout",
    "AnalysisTemplate",
    "ClusterAnalysisTemplate",
    "AnalysisRun",
    "Experiment",
    "Application",
    "AppProject",
];

/// Renders every RolloutManager of the sources; other objects pass through in place.
pub fn render(inputs: &Inputs, options: &Options) -> Result<Rendered, Diagnostics> {
    let sources = &inputs.sources;
    let mut diagnostics = Diagnostics::default();
    diagnostics.extend(inputs.skipped.iter().cloned());
    let mut documents = Vec::new();
    // One budget for the whole run, so that many files cannot add up past it.
    let mut budget = yaml::Budget::default();
    for source in sources {
        let (parsed, error) =
            yaml::parse_within(&source.name, &source.text, &mut diagnostics, &mut budget);
        // Documents before a syntax error are still checked, so their problems are reported
        // with it.
        documents.extend(parsed.into_iter().flat_map(list_items));
        if let Some(error) = error {
            diagnostics.push(error);
            if budget.exhausted() {
                break;
            }
        }
    }
    let order: Vec<_> = sources.iter().map(|s| s.name.clone()).collect();
    render_documents(documents, &inputs.names, &order, options, diagnostics)
}

/// Renders parsed documents (each one input document: the KRM function hands over the items
/// of a ResourceList this way). `names` name the whole input in messages; `order` is the
/// order of the sources, by which diagnostics are sorted; `diagnostics` holds what parsing
/// found.
pub(crate) fn render_documents(
    documents: Vec<Document>,
    names: &[String],
    order: &[std::sync::Arc<str>],
    options: &Options,
    mut diagnostics: Diagnostics,
) -> Result<Rendered, Diagnostics> {
    let mut items = Vec::new();
    for document in documents {
        if let Some(item) = classify(document, options, &mut diagnostics) {
            items.push(item);
        }
    }

    let checked: Vec<&Checked> = items
        .iter()
        .filter_map(|item| match item {
            Checking::Manager(checked) => Some(&**checked),
            Checking::Passthrough(_) => None,
        })
        .collect();
    stream::check_managers(&checked, &mut diagnostics);
    let managers: Vec<&Manager> = checked.iter().map(|c| &c.manager).collect();
    for item in &items {
        if let Checking::Passthrough(document) = item {
            let uses = uses::plugin_uses(document);
            stream::check_uses(&managers, &document.source, &uses, &mut diagnostics);
        }
    }

    if managers.is_empty() && !options.allow_empty && !diagnostics.has_errors() {
        diagnostics.push(
            Diagnostic::error(format!(
                "no RolloutManager found in {}",
                names.join(", ")
            ))
            .hint("an empty render would make Argo CD prune the installation; pass --allow-empty if that is really meant"),
        );
    }

    if options.strict {
        diagnostics.escalate_warnings();
    }
    let diagnostics = diagnostics.sorted(order);
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }

    let shared = SharedMetadata::of(items.iter().filter_map(|item| match item {
        Checking::Manager(checked) => Some(&checked.manager),
        Checking::Passthrough(_) => None,
    }));
    Ok(Rendered {
        items: items
            .into_iter()
            .map(|item| match item {
                Checking::Manager(checked) => Item::Manager(Box::new(checked.manager)),
                Checking::Passthrough(document) => Item::Passthrough(document),
            })
            .collect(),
        service_monitor: options.has_api_version("monitoring.coreos.com/v1"),
        aggregate_roles: options.aggregate_roles.then_some(shared),
        warnings_annotation: options.warnings_annotation,
        warnings: diagnostics,
    })
}

/// A `v1` `List` (what `kubectl get … -o yaml` prints for several objects) stands for its
/// items; any other document for itself.
fn list_items(document: Document) -> Vec<Document> {
    let root = &document.root;
    let is_list = root.get("apiVersion").and_then(Node::scalar) == Some("v1")
        && root.get("kind").and_then(Node::scalar) == Some("List")
        && matches!(
            root.get("items"),
            Some(Node {
                value: Value::Seq(_),
                ..
            })
        );
    if !is_list {
        return vec![document];
    }
    let Document { source, root } = document;
    let Value::Map(entries) = root.value else {
        unreachable!("a List is a mapping")
    };
    // Moved out, not copied: a large List is held once.
    entries
        .into_iter()
        .find(|entry| entry.key.scalar() == Some("items"))
        .map(|entry| match entry.value.value {
            Value::Seq(items) => items,
            _ => Vec::new(),
        })
        .unwrap_or_default()
        .into_iter()
        .map(|root| Document {
            source: source.clone(),
            root,
        })
        .collect()
}

/// `apiVersion` and `kind`, as far as they are strings.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypeMeta {
    api_version: Option<Located<String>>,
    kind: Option<Located<String>>,
}

/// Reads `apiVersion` and `kind` of a document and handles it accordingly.
fn classify(
    document: Document,
    options: &Options,
    diagnostics: &mut Diagnostics,
) -> Option<Checking> {
    let root = &document.root;
    if !matches!(root.value, Value::Map(_)) {
        diagnostics.push(
            Diagnostic::error(format!(
                "expected a Kubernetes object (a mapping with `apiVersion` and `kind`), found {}",
                root.describe()
            ))
            .at(document.location(root.pos)),
        );
        return None;
    }
    let meta = de::decode_lenient::<TypeMeta>(&document, root);
    let field = |field: fn(&TypeMeta) -> &Option<Located<String>>| {
        meta.as_ref()
            .and_then(|meta| field(meta).as_ref())
            .filter(|value| !value.is_empty())
    };
    let (Some(api_version), Some(kind)) = (field(|m| &m.api_version), field(|m| &m.kind)) else {
        diagnostics.push(
            Diagnostic::error("not a Kubernetes object: `apiVersion` and `kind` are required")
                .at(document.location(root.pos)),
        );
        return None;
    };

    let is_manager = kind.as_str() == model::KIND && api_version.as_str() == model::API_VERSION;
    if !is_manager {
        if let Some(problem) = misnamed_manager(api_version, kind) {
            diagnostics.push(
                Diagnostic::error(problem.message)
                    .at(document.location(problem.at.site.pos))
                    .path(problem.at.site.path.clone())
                    .hint(problem.hint),
            );
            return None;
        }
        // Converted here for its problems only; the JSON is built again, one document at a
        // time, when it is written.
        return yaml11::to_json(&document, diagnostics)
            .is_some()
            .then_some(Checking::Passthrough(document));
    }

    let mut found = Vec::new();
    let (decoded, set_aside) = de::decode_all::<Located<RolloutManager>>(&document, &mut found);
    diagnostics.extend(found);
    let raw = decoded?;
    let mut checker = Checker::new(document.source.clone());
    let checked = validate::manager(&mut checker, raw, options);
    if set_aside.is_empty() {
        diagnostics.extend(checker.diagnostics);
        return checked.map(|checked| Checking::Manager(Box::new(checked)));
    }
    // The rest of the document is checked as well, but not what a value set aside would have
    // decided (`a plugin needs a location` for a location of the wrong type).
    let touches = |path: &FieldPath| {
        set_aside.iter().any(|aside| {
            path.segments().starts_with(aside.segments())
                || aside.segments().split_last().map(|(_, parent)| parent) == Some(path.segments())
        })
    };
    diagnostics.extend(
        checker
            .diagnostics
            .into_iter()
            .filter(|diagnostic| !touches(&diagnostic.path)),
    );
    None
}

struct Misnamed<'a> {
    at: &'a Located<String>,
    message: String,
    hint: String,
}

/// A RolloutManager with the wrong apiVersion, or an argoproj.io kind that looks like a typo
/// of RolloutManager, would otherwise pass through silently and never be rendered.
fn misnamed_manager<'a>(
    api_version: &'a Located<String>,
    kind: &'a Located<String>,
) -> Option<Misnamed<'a>> {
    if kind.as_str() == model::KIND {
        return Some(Misnamed {
            at: api_version,
            message: format!(
                "RolloutManager is served as `{}`, not `{}`",
                model::API_VERSION,
                api_version.inner
            ),
            hint: format!("write `apiVersion: {}`", model::API_VERSION),
        });
    }
    let group = api_version.split('/').next().unwrap_or_default();
    if group == "argoproj.io"
        && !ARGOPROJ_KINDS.contains(&kind.as_str())
        && closest(kind, [model::KIND]).is_some()
    {
        return Some(Misnamed {
            at: kind,
            message: format!("unknown kind `{}` in argoproj.io", kind.inner),
            hint: format!("did you mean `{}`?", model::KIND),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::cli::Cli;
    use crate::diag::{Pos, Segment};
    use crate::input::source::Source;
    use clap::Parser;

    /// The options of a testdata file's `# args:` line.
    fn case_options(text: &str) -> Options {
        let mut argv = vec!["rollouts-render".to_owned(), "render".to_owned()];
        if let Some(args) = text.lines().next().and_then(|l| l.strip_prefix("# args:")) {
            argv.extend(args.split_whitespace().map(str::to_owned));
        }
        match Cli::try_parse_from(argv).expect("valid args").command {
            crate::cli::Command::Render(args) => args.options.options(),
            _ => unreachable!("render was parsed"),
        }
    }

    /// The node a path leads to, walked independently of the decoder: its own position and,
    /// when it is the value of a mapping key, the key's.
    fn walk<'a>(root: &'a Node, segments: &[Segment]) -> Option<(&'a Node, Option<Pos>)> {
        let mut node = root;
        let mut key = None;
        for segment in segments {
            (node, key) = match (segment, &node.value) {
                (Segment::Key(name), Value::Map(entries)) => entries
                    .iter()
                    .find(|entry| entry.key.scalar() == Some(name))
                    .map(|entry| (&entry.value, Some(entry.key.pos)))?,
                (Segment::Index(index), Value::Seq(items)) => (items.get(*index)?, None),
                _ => return None,
            };
        }
        Some((node, key))
    }

    /// Every diagnostic with a field path points at the node that path names in its document:
    /// a scalar value itself, the key that introduces a mapping or list (or a list item's own
    /// first token), or, for diagnostics about a key, the key. A path that names no node, or a
    /// position elsewhere (a parent's, say), fails.
    #[test]
    fn every_diagnostic_points_at_the_value_its_path_names() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for dir in ["testdata", "testdata/invalid"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
                .collect();
            files.sort();
            for file in files {
                let text = std::fs::read_to_string(&file).unwrap();
                let name = format!("{dir}/{}", file.file_name().unwrap().to_string_lossy());
                let inputs = Inputs::from(vec![Source::new(&name, text.clone())]);
                let diagnostics = match render(&inputs, &case_options(&text)) {
                    Ok(rendered) => rendered.warnings,
                    Err(diagnostics) => diagnostics,
                };
                let mut ignored = Diagnostics::default();
                let Ok(documents) = yaml::parse(&Arc::from(name.as_str()), &text, &mut ignored)
                else {
                    continue;
                };
                for diagnostic in diagnostics.iter() {
                    let Some(pos) = diagnostic.location.as_ref().and_then(|l| l.pos) else {
                        continue;
                    };
                    if diagnostic.path.is_root() {
                        continue;
                    }
                    // The document the diagnostic is in: the last one starting before it.
                    let document = documents
                        .iter()
                        .rev()
                        .find(|d| d.root.pos <= pos)
                        .expect("a document before the diagnostic");
                    let Some((node, key)) = walk(&document.root, diagnostic.path.segments()) else {
                        panic!("{name}: `{}` names no node: {diagnostic}", diagnostic.path);
                    };
                    let value = match node.value {
                        Value::Scalar { .. } => node.pos,
                        _ => key.unwrap_or(node.pos),
                    };
                    // A key that cannot be named (a list as a key) is pointed at itself.
                    let one_of_its_keys = match &node.value {
                        Value::Map(entries) => entries.iter().any(|e| e.key.pos == pos),
                        _ => false,
                    };
                    assert!(
                        pos == value || Some(pos) == key || one_of_its_keys,
                        "{name}: points at {}:{}, but `{}` is at {}:{}: {diagnostic}",
                        pos.line,
                        pos.col,
                        diagnostic.path,
                        value.line,
                        value.col
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 60, "only {checked} diagnostics checked");
    }
}
