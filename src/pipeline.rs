//! The whole transformation, as one pure function: sources in, documents out.
//!
//! input ([`crate::input::yaml`]) → model ([`crate::input::de`], [`crate::model`]) → validate
//! ([`crate::validate`]) → render ([`mod@crate::render`]); the caller emits ([`crate::emit`]).
//! Every document is read and checked before anything is rendered, and any error means no
//! documents at all.

use serde_json::Value as Json;

use crate::diag::{Diagnostic, Diagnostics, FieldPath, closest};
use crate::input::de;
use crate::input::source::Inputs;
use crate::input::yaml::{self, Document, Node, Value};
use crate::input::yaml11;
use crate::model::{self, RolloutManager};
use crate::options::Options;
use crate::render::{self, Extras};
use crate::spec::Manager;
use crate::validate::stream::{self, Site};
use crate::validate::{self, Checker};

/// The result of a successful run: what to write, and warnings.
///
/// Everything is validated; the objects themselves are built while they are written
/// ([`Rendered::documents`]), so memory stays proportional to the input, not to the output.
#[derive(Debug)]
pub struct Rendered {
    items: Vec<Item>,
    service_monitor: bool,
    aggregate_roles: bool,
    pub warnings: Diagnostics,
}

impl Rendered {
    /// Every output document, in order: each manager's objects in place of its RolloutManager
    /// (the aggregate ClusterRoles with the first one), other objects as they came.
    pub fn documents(&self) -> impl Iterator<Item = Json> + '_ {
        let mut first_manager = true;
        self.items.iter().flat_map(move |item| match item {
            Item::Manager(manager) => {
                let extras = Extras {
                    aggregate_roles: self.aggregate_roles && first_manager,
                    service_monitor: self.service_monitor,
                };
                first_manager = false;
                render::manager(manager, extras)
            }
            Item::Passthrough(object) => vec![object.clone()],
        })
    }
}

/// A document of the input, classified.
#[derive(Debug)]
enum Item {
    Manager(Box<Manager>),
    Passthrough(Json),
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
    let mut documents = Vec::new();
    for source in sources {
        match yaml::parse(&source.name, &source.text, &mut diagnostics) {
            Ok(parsed) => documents.extend(parsed.into_iter().flat_map(list_items)),
            Err(error) => diagnostics.push(error),
        }
    }

    let mut items = Vec::new();
    for document in &documents {
        if let Some(item) = classify(document, options, &mut diagnostics) {
            items.push((item, document));
        }
    }

    let sites: Vec<Site<'_>> = items
        .iter()
        .filter_map(|(item, document)| match item {
            Item::Manager(manager) => Some(Site { manager, document }),
            Item::Passthrough(_) => None,
        })
        .collect();
    stream::check_managers(&sites, &mut diagnostics);
    let references: Vec<_> = items
        .iter()
        .filter(|(item, _)| matches!(item, Item::Passthrough(_)))
        .flat_map(|(_, document)| stream::references(document))
        .collect();
    let managers: Vec<&Manager> = sites.iter().map(|site| site.manager).collect();
    stream::check_references(&managers, &references, &mut diagnostics);

    if managers.is_empty() && !options.allow_empty && !diagnostics.has_errors() {
        diagnostics.push(
            Diagnostic::error(format!(
                "no RolloutManager found in {}",
                inputs.names.join(", ")
            ))
            .hint("an empty render would make Argo CD prune the installation; pass --allow-empty if that is really meant"),
        );
    }

    if options.strict {
        diagnostics.escalate_warnings();
    }
    let order: Vec<_> = sources.iter().map(|s| s.name.clone()).collect();
    let diagnostics = diagnostics.sorted(&order);
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }

    Ok(Rendered {
        items: items.into_iter().map(|(item, _)| item).collect(),
        service_monitor: options.has_api_version("monitoring.coreos.com/v1"),
        aggregate_roles: options.aggregate_roles,
        warnings: diagnostics,
    })
}

/// A `v1` `List` (what `kubectl get … -o yaml` prints for several objects) stands for its
/// items; any other document for itself.
fn list_items(document: Document) -> Vec<Document> {
    let root = &document.root;
    let is_list = root.get("apiVersion").and_then(Node::scalar) == Some("v1")
        && root.get("kind").and_then(Node::scalar) == Some("List");
    match root.get("items") {
        Some(Node {
            value: Value::Seq(items),
            ..
        }) if is_list => items
            .iter()
            .map(|item| Document {
                source: document.source.clone(),
                root: item.clone(),
            })
            .collect(),
        _ => vec![document],
    }
}

/// Reads `apiVersion` and `kind` of a document and handles it accordingly.
fn classify(document: &Document, options: &Options, diagnostics: &mut Diagnostics) -> Option<Item> {
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
    let field = |name: &str| {
        root.get(name)
            .and_then(Node::scalar)
            .filter(|s| !s.is_empty())
    };
    let (Some(api_version), Some(kind)) = (field("apiVersion"), field("kind")) else {
        diagnostics.push(
            Diagnostic::error("not a Kubernetes object: `apiVersion` and `kind` are required")
                .at(document.location(root.pos)),
        );
        return None;
    };

    let is_manager = kind == model::KIND && api_version == model::API_VERSION;
    if !is_manager {
        if let Some(problem) = misnamed_manager(api_version, kind) {
            let path = FieldPath::root().key(problem.field);
            diagnostics.push(
                Diagnostic::error(problem.message)
                    .at(document.location(root.locate(&path)))
                    .path(path)
                    .hint(problem.hint),
            );
            return None;
        }
        return yaml11::to_json(document, diagnostics).map(Item::Passthrough);
    }

    let mut found = Vec::new();
    let decoded = de::decode::<RolloutManager>(document, root, FieldPath::root(), &mut found);
    diagnostics.extend(found);
    let raw = match decoded {
        Ok(raw) => raw,
        Err(error) => {
            diagnostics.push(error);
            return None;
        }
    };
    let mut checker = Checker::new(document);
    let manager = validate::manager(&mut checker, raw, options);
    diagnostics.extend(checker.diagnostics);
    manager.map(|manager| Item::Manager(Box::new(manager)))
}

struct Misnamed {
    field: &'static str,
    message: String,
    hint: String,
}

/// A RolloutManager with the wrong apiVersion, or an argoproj.io kind that looks like a typo
/// of RolloutManager, would otherwise pass through silently and never be rendered.
fn misnamed_manager(api_version: &str, kind: &str) -> Option<Misnamed> {
    if kind == model::KIND {
        return Some(Misnamed {
            field: "apiVersion",
            message: format!(
                "RolloutManager is served as `{}`, not `{api_version}`",
                model::API_VERSION
            ),
            hint: format!("write `apiVersion: {}`", model::API_VERSION),
        });
    }
    let group = api_version.split('/').next().unwrap_or_default();
    if group == "argoproj.io"
        && !ARGOPROJ_KINDS.contains(&kind)
        && closest(kind, [model::KIND]).is_some()
    {
        return Some(Misnamed {
            field: "kind",
            message: format!("unknown kind `{kind}` in argoproj.io"),
            hint: format!("did you mean `{}`?", model::KIND),
        });
    }
    None
}
