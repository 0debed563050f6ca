//! `fn`: a KRM function, as the kustomize/kpt function specification (`config.kubernetes.io`
//! v1) defines one. A `ResourceList` comes on stdin; each RolloutManager of its `items` is
//! replaced, in place, by the objects `render` makes of it, and every other item passes through
//! with its data (and so its `config.kubernetes.io/*` and `internal.config.kubernetes.io/*`
//! annotations) unchanged. The options come from `functionConfig`, under the names of the
//! Argo CD plugin parameters, through the parser `render` uses ([`params`]).
//!
//! Diagnostics become `results` (severity, message, `resourceRef`, `field.path`, `file.path`
//! and `index`) of the ResourceList written to stdout, and are printed on stderr too, where
//! kustomize shows them; any error means exit status 1 and no items.
//!
//! Positions are not reported: the ResourceList is the orchestrator's re-serialization, and its
//! lines are not the user's file. A diagnostic names the file and index the item came from
//! (its path annotations), and the field path inside it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value as Json, json};

use super::{INVALID_INPUT, SUCCESS};
use crate::cli::FnArgs;
use crate::cli::params::{self, ConfigField, Given, Kind, Origin, Param};
use crate::diag::{Diagnostic, Diagnostics, FieldPath, Location, Severity};
use crate::emit;
use crate::input::source::{self, ReadOptions};
use crate::input::yaml::{self, Document, Node, Value};
use crate::model;
use crate::options::Options;
use crate::pipeline;
use crate::render::warnings::WarningsNote;

/// The parameters a functionConfig may give: the plugin parameters, the cluster's API
/// versions and Kubernetes version (Argo CD passes them to the plugin in `KUBE_API_VERSIONS`
/// and `KUBE_VERSION`; a KRM function can only be told), and `allow-empty`.
static FUNCTION_PARAMS: [Param; params::PARAMS.len() + 3] = {
    let mut all = [params::PARAMS[0]; params::PARAMS.len() + 3];
    let mut i = 0;
    while i < params::PARAMS.len() {
        all[i] = params::PARAMS[i];
        i += 1;
    }
    all[i] = Param {
        name: "api-versions",
        title: "API versions",
        tooltip: "API versions of the target cluster, comma-separated; monitoring.coreos.com/v1 adds a ServiceMonitor.",
        kind: Kind::Array,
        default: None,
    };
    all[i + 1] = Param {
        name: "allow-empty",
        title: "Allow no RolloutManager",
        tooltip: "Succeed when the items hold no RolloutManager.",
        kind: Kind::Bool,
        default: Some("false"),
    };
    all[i + 2] = Param {
        name: "kube-version",
        title: "Kubernetes version",
        tooltip: "Kubernetes version of the target cluster (1.34, v1.34.2); decides plugin-image-delivery auto.",
        kind: Kind::String,
        default: None,
    };
    all
};

/// The API versions of a ResourceList the specification names; the output keeps the input's.
const RESOURCE_LIST_VERSIONS: [&str; 2] =
    ["config.kubernetes.io/v1", "config.kubernetes.io/v1beta1"];
const RESOURCE_LIST_KIND: &str = "ResourceList";

/// The annotations the orchestrators read and write: the file an object comes from or goes
/// to, and its index in that file. kyaml keeps both spellings in step.
pub const PATH_ANNOTATION: &str = "internal.config.kubernetes.io/path";
pub const INDEX_ANNOTATION: &str = "internal.config.kubernetes.io/index";
pub const LEGACY_PATH_ANNOTATION: &str = "config.kubernetes.io/path";
pub const LEGACY_INDEX_ANNOTATION: &str = "config.kubernetes.io/index";

/// One run of the function as a value: exit status, the ResourceList to print, and the
/// diagnostics (already named by file and index, as stderr shows them).
#[derive(Debug)]
pub struct FnOutcome {
    pub status: u8,
    pub resource_list: Json,
    pub diagnostics: Diagnostics,
}

impl FnOutcome {
    /// The ResourceList as YAML, as the function writes it to stdout.
    pub fn stdout(&self) -> String {
        emit::yaml(&self.resource_list)
    }
}

/// Where an item came from, and how messages and results name it.
struct ItemOrigin {
    /// `internal.config.kubernetes.io/path` (or the legacy `config.kubernetes.io/path`).
    path: Option<String>,
    index: Option<String>,
    legacy_path: bool,
    legacy_index: bool,
    /// What messages call it: its file and index, or its place in the list.
    name: Arc<str>,
    resource_ref: Option<Json>,
}

/// Runs the function over a ResourceList's text.
pub fn run(text: &str) -> FnOutcome {
    let stdin: Arc<str> = Arc::from(source::STDIN_NAME);
    let mut diagnostics = Diagnostics::default();
    let list = match yaml::parse(&stdin, text, &mut diagnostics) {
        Ok(documents) => read_resource_list(&stdin, documents, &mut diagnostics),
        Err(error) => {
            diagnostics.push(error);
            None
        }
    };
    let Some(list) = list else {
        return failed(RESOURCE_LIST_VERSIONS[0], diagnostics);
    };
    if diagnostics.has_errors() {
        return failed(&list.api_version, diagnostics);
    }

    let mut items: Vec<Node> = list.items;
    let function_config = list.function_config.filter(|fc| !fc.is_null());
    let config_origin = function_config
        .as_ref()
        .map(|fc| origin_of(fc, "functionConfig".to_owned()));

    // kustomize's generator form: the functionConfig is the RolloutManager to render (kustomize
    // also hands it over as the only item; kpt's `--fn-config` does not).
    if let Some(fc) = &function_config
        && is_manager(fc)
        && !items.iter().any(|item| same_object(item, fc))
    {
        items.push(fc.clone());
    }

    let mut option_diagnostics = Vec::new();
    let options = match &function_config {
        Some(fc) => options_from(fc, &mut option_diagnostics),
        None => Some(Options::default()),
    };
    for diagnostic in option_diagnostics {
        let origin = config_origin
            .as_ref()
            .expect("only a functionConfig has options");
        diagnostics.push(diagnostic.at(Location {
            source: origin.name.clone(),
            pos: None,
        }));
    }
    let Some(options) = options else {
        return finish(
            &list.api_version,
            diagnostics,
            None,
            &[],
            config_origin.as_ref(),
        );
    };

    let mut origins = Vec::new();
    let mut documents = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let origin = origin_of(item, format!("items[{index}]"));
        let mut name = origin.name.clone();
        if origins.iter().any(|o: &ItemOrigin| o.name == name) {
            name = Arc::from(format!("{name} (items[{index}])"));
        }
        documents.push(Document {
            source: name.clone(),
            root: item.clone(),
        });
        origins.push(ItemOrigin { name, ..origin });
    }
    if !options.allow_empty && !items.iter().any(is_manager) {
        diagnostics.push(
            Diagnostic::error("no RolloutManager among the ResourceList's items")
                .hint("an empty render would prune the installation; if the items may hold none, set `allow-empty: \"true\"` in the functionConfig"),
        );
    }
    // Said above, in this function's own words.
    let options = Options {
        allow_empty: true,
        ..options
    };
    let order: Vec<Arc<str>> = origins.iter().map(|o| o.name.clone()).collect();
    let names = ["the ResourceList's items".to_owned()];
    match pipeline::render_documents(documents, &names, &order, &options, diagnostics) {
        Ok(mut rendered) => {
            let warnings = std::mem::take(&mut rendered.warnings);
            // `warnings-annotation: "true"` in the functionConfig records them, as in `render`.
            let note = rendered
                .notes_warnings()
                .then(|| WarningsNote::new(&warnings))
                .flatten();
            let outputs: Vec<Vec<Json>> =
                rendered.documents_by_input_noting(note.as_ref()).collect();
            let output = replace_in_place(&items, &origins, outputs);
            finish(
                &list.api_version,
                warnings,
                Some(output),
                &origins,
                config_origin.as_ref(),
            )
        }
        Err(diagnostics) => finish(
            &list.api_version,
            diagnostics,
            None,
            &origins,
            config_origin.as_ref(),
        ),
    }
}

struct ResourceList {
    api_version: String,
    items: Vec<Node>,
    function_config: Option<Node>,
}

fn read_resource_list(
    stdin: &Arc<str>,
    documents: Vec<Document>,
    diagnostics: &mut Diagnostics,
) -> Option<ResourceList> {
    let at = |node: &Node| Location {
        source: stdin.clone(),
        pos: Some(node.pos),
    };
    let mut documents = documents.into_iter();
    let Some(document) = documents.next() else {
        diagnostics.push(
            Diagnostic::error("no ResourceList on standard input")
                .hint("a KRM function reads one `config.kubernetes.io/v1` ResourceList; run it from kustomize or kpt"),
        );
        return None;
    };
    if let Some(extra) = documents.next() {
        diagnostics.push(
            Diagnostic::error("a KRM function reads one ResourceList; this is a second document")
                .at(at(&extra.root)),
        );
    }
    let root = document.root;
    let api_version = root.get("apiVersion").and_then(Node::scalar);
    let kind = root.get("kind").and_then(Node::scalar);
    let Some(api_version) = api_version
        .filter(|v| RESOURCE_LIST_VERSIONS.contains(v))
        .filter(|_| kind == Some(RESOURCE_LIST_KIND))
    else {
        diagnostics.push(
            Diagnostic::error(format!(
                "expected a `{RESOURCE_LIST_KIND}` of `{}`, found {}",
                RESOURCE_LIST_VERSIONS[0],
                match (api_version, kind) {
                    (Some(v), Some(k)) => format!("`{k}` of `{v}`"),
                    _ => root.describe().to_owned(),
                }
            ))
            .at(at(&root))
            .hint("`rollouts-render fn` is a KRM function: run it from kustomize or kpt; `rollouts-render render` reads manifests"),
        );
        return None;
    };
    let api_version = api_version.to_owned();
    let items = match root.get("items") {
        None => Vec::new(),
        Some(node) if node.is_null() => Vec::new(),
        Some(Node {
            value: Value::Seq(items),
            ..
        }) => items.clone(),
        Some(node) => {
            diagnostics.push(
                Diagnostic::error(format!(
                    "expected a list of objects, found {}",
                    node.describe()
                ))
                .at(at(node))
                .path(FieldPath::from("items")),
            );
            Vec::new()
        }
    };
    Some(ResourceList {
        api_version,
        items,
        function_config: root.get("functionConfig").cloned(),
    })
}

fn is_manager(node: &Node) -> bool {
    node.get("apiVersion").and_then(Node::scalar) == Some(model::API_VERSION)
        && node.get("kind").and_then(Node::scalar) == Some(model::KIND)
}

fn meta<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Node::scalar)
}

fn annotation<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(key))
        .and_then(Node::scalar)
}

fn same_object(a: &Node, b: &Node) -> bool {
    is_manager(a)
        && is_manager(b)
        && meta(a, "name") == meta(b, "name")
        && meta(a, "namespace") == meta(b, "namespace")
}

fn origin_of(node: &Node, fallback: String) -> ItemOrigin {
    let path = annotation(node, PATH_ANNOTATION).or(annotation(node, LEGACY_PATH_ANNOTATION));
    let index = annotation(node, INDEX_ANNOTATION).or(annotation(node, LEGACY_INDEX_ANNOTATION));
    let kind = node.get("kind").and_then(Node::scalar);
    let name = match (path, index, kind, meta(node, "name")) {
        (Some(path), Some(index), ..) if index != "0" => format!("{path} (index {index})"),
        (Some(path), ..) => path.to_owned(),
        // No file (kustomize's generator input, a piped ResourceList): the object's name.
        (None, _, Some(kind), Some(name)) => match meta(node, "namespace") {
            Some(namespace) => format!("{kind} {namespace}/{name}"),
            None => format!("{kind} {name}"),
        },
        (None, ..) => fallback,
    };
    let resource_ref = match (
        node.get("apiVersion").and_then(Node::scalar),
        node.get("kind").and_then(Node::scalar),
    ) {
        (Some(api_version), Some(kind)) => {
            let mut reference = json!({
                "apiVersion": api_version,
                "kind": kind,
                "name": meta(node, "name").unwrap_or_default(),
            });
            if let Some(namespace) = meta(node, "namespace") {
                reference["namespace"] = json!(namespace);
            }
            Some(reference)
        }
        _ => None,
    };
    ItemOrigin {
        path: path.map(str::to_owned),
        index: index.map(str::to_owned),
        legacy_path: annotation(node, LEGACY_PATH_ANNOTATION).is_some(),
        legacy_index: annotation(node, LEGACY_INDEX_ANNOTATION).is_some(),
        name: Arc::from(name),
        resource_ref,
    }
}

/// The options a functionConfig gives: a ConfigMap's `data` (what kpt's `fn eval -- k=v`
/// writes), or the `rollouts-render/<parameter>` annotations of a RolloutManager used as the
/// functionConfig. Each becomes `--<parameter>=<value>` for the parser `render` uses.
fn options_from(config: &Node, diagnostics: &mut Vec<Diagnostic>) -> Option<Options> {
    let mut given: Vec<(String, FieldPath, &Node, ConfigField)> = Vec::new();
    if is_manager(config) {
        let annotations = config.get("metadata").and_then(|m| m.get("annotations"));
        if let Some(Node {
            value: Value::Map(entries),
            ..
        }) = annotations
        {
            for entry in entries {
                let Some(key) = entry.key.scalar() else {
                    continue;
                };
                if let Some(name) = key.strip_prefix(params::ANNOTATION_PREFIX) {
                    let path = FieldPath::from("metadata.annotations").key(key);
                    given.push((name.to_owned(), path, &entry.value, ConfigField::Annotation));
                }
            }
        }
    } else if config.get("apiVersion").and_then(Node::scalar) == Some("v1")
        && config.get("kind").and_then(Node::scalar) == Some("ConfigMap")
    {
        match config.get("data") {
            None => {}
            Some(data) if data.is_null() => {}
            Some(Node {
                value: Value::Map(entries),
                ..
            }) => {
                for entry in entries {
                    let key = entry.key.scalar().unwrap_or_default();
                    let path = FieldPath::from("data").key(key);
                    given.push((key.to_owned(), path, &entry.value, ConfigField::Data));
                }
            }
            Some(other) => diagnostics.push(
                Diagnostic::error(format!(
                    "expected a mapping of parameters, found {}",
                    other.describe()
                ))
                .path(FieldPath::from("data")),
            ),
        }
    } else {
        diagnostics.push(
            Diagnostic::error(
                "the functionConfig must be a ConfigMap (its `data` are the options) or a RolloutManager (rendered, with options in `rollouts-render/<parameter>` annotations)",
            )
            .path(FieldPath::from("kind")),
        );
        return None;
    }

    let mut args = Vec::new();
    for (name, path, value, field) in given {
        let param = match params::find(&FUNCTION_PARAMS, &name) {
            Ok(param) => param,
            Err(error) => {
                diagnostics.push(error.path(path));
                continue;
            }
        };
        let Some(text) = value.scalar() else {
            diagnostics.push(
                Diagnostic::error(format!("expected a string, found {}", value.describe()))
                    .path(path),
            );
            continue;
        };
        let value = match param.kind {
            Kind::Array => Given::Array(params::split_list(text)),
            _ => Given::String(text.to_owned()),
        };
        params::push_given(
            param,
            &value,
            Origin::FunctionConfig(param, field),
            &mut args,
            diagnostics,
        );
    }
    params::parse(&args, diagnostics)
}

/// The output items: each RolloutManager's objects where it was, every other item as it came.
///
/// The objects of a manager go to the manager's file (its path annotation, when it has one).
/// Every object of a file, or of the stream when the manager has no file, that held a manager
/// is numbered anew in output order, so that a file written back holds them in that order
/// and no two objects share an index.
fn replace_in_place(items: &[Node], origins: &[ItemOrigin], outputs: Vec<Vec<Json>>) -> Vec<Json> {
    let mut placed: Vec<Json> = Vec::new();
    let mut renumbered: Vec<Option<String>> = Vec::new();
    for ((item, origin), objects) in items.iter().zip(origins).zip(outputs) {
        if !is_manager(item) {
            placed.extend(objects);
            continue;
        }
        if origin.path.is_some() || origin.index.is_some() {
            renumbered.push(origin.path.clone());
        }
        for mut object in objects {
            let annotations = annotations_mut(&mut object);
            if let Some(path) = &origin.path {
                annotations.insert(PATH_ANNOTATION.to_owned(), json!(path));
                if origin.legacy_path {
                    annotations.insert(LEGACY_PATH_ANNOTATION.to_owned(), json!(path));
                }
            }
            if origin.path.is_some() || origin.index.is_some() {
                annotations.insert(INDEX_ANNOTATION.to_owned(), json!("0"));
                if origin.legacy_index {
                    annotations.insert(LEGACY_INDEX_ANNOTATION.to_owned(), json!("0"));
                }
            }
            if annotations.is_empty() {
                object["metadata"]
                    .as_object_mut()
                    .expect("metadata is a mapping")
                    .remove("annotations");
            }
            placed.push(object);
        }
    }

    let mut next: BTreeMap<Option<String>, usize> = BTreeMap::new();
    for object in &mut placed {
        let annotations = &object["metadata"]["annotations"];
        let path = annotations[PATH_ANNOTATION]
            .as_str()
            .or(annotations[LEGACY_PATH_ANNOTATION].as_str())
            .map(str::to_owned);
        if !renumbered.contains(&path) {
            continue;
        }
        let counter = next.entry(path).or_default();
        let index = json!(counter.to_string());
        *counter += 1;
        let annotations = annotations_mut(object);
        let legacy = annotations.contains_key(LEGACY_INDEX_ANNOTATION);
        if annotations.contains_key(INDEX_ANNOTATION) || !legacy {
            annotations.insert(INDEX_ANNOTATION.to_owned(), index.clone());
        }
        if legacy {
            annotations.insert(LEGACY_INDEX_ANNOTATION.to_owned(), index);
        }
    }
    placed
}

fn annotations_mut(object: &mut Json) -> &mut Map<String, Json> {
    let metadata = object
        .as_object_mut()
        .expect("a Kubernetes object")
        .entry("metadata")
        .or_insert_with(|| json!({}));
    let annotations = metadata
        .as_object_mut()
        .expect("metadata is a mapping")
        .entry("annotations")
        .or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations.as_object_mut().expect("just made a mapping")
}

fn failed(api_version: &str, diagnostics: Diagnostics) -> FnOutcome {
    finish(api_version, diagnostics, None, &[], None)
}

/// The ResourceList written: the items on success, none on failure, and every diagnostic as
/// a result. Diagnostics about items lose their positions (they are positions in the
/// orchestrator's serialization) and keep the item's file, index and field path.
fn finish(
    api_version: &str,
    diagnostics: Diagnostics,
    items: Option<Vec<Json>>,
    origins: &[ItemOrigin],
    config: Option<&ItemOrigin>,
) -> FnOutcome {
    let mut shown = Diagnostics::default();
    let mut results = Vec::new();
    for mut diagnostic in diagnostics {
        let origin = diagnostic.location.as_ref().and_then(|location| {
            origins
                .iter()
                .chain(config)
                .find(|origin| origin.name == location.source)
        });
        if let (Some(origin), Some(location)) = (origin, diagnostic.location.as_mut()) {
            location.pos = None;
            results.push(result(&diagnostic, Some(origin)));
        } else {
            results.push(result(&diagnostic, None));
        }
        shown.push(diagnostic);
    }
    let failed = shown.has_errors() || items.is_none();
    let mut list = json!({
        "apiVersion": api_version,
        "kind": RESOURCE_LIST_KIND,
        "items": if failed { Vec::new() } else { items.unwrap_or_default() },
    });
    if !results.is_empty() {
        list["results"] = Json::Array(results);
    }
    FnOutcome {
        status: if failed { INVALID_INPUT } else { SUCCESS },
        resource_list: list,
        diagnostics: shown,
    }
}

fn result(diagnostic: &Diagnostic, origin: Option<&ItemOrigin>) -> Json {
    let mut message = diagnostic.message.clone();
    if let Some(hint) = &diagnostic.hint {
        message.push_str(&format!("\nhint: {hint}"));
    }
    let mut result = json!({
        "message": message,
        "severity": match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        },
    });
    let Some(origin) = origin else {
        if let Some(location) = &diagnostic.location {
            // A problem with the ResourceList itself: its position on stdin is meaningful.
            let pos = location
                .pos
                .map(|p| format!(":{}:{}", p.line, p.col))
                .unwrap_or_default();
            result["message"] = json!(format!("{}{pos}: {message}", location.source));
        }
        return result;
    };
    if let Some(reference) = &origin.resource_ref {
        result["resourceRef"] = reference.clone();
        if !diagnostic.path.is_root() {
            result["field"] = json!({"path": diagnostic.path.to_string()});
        }
    }
    if let Some(path) = &origin.path {
        let index = origin
            .index
            .as_deref()
            .and_then(|i| i.parse::<u64>().ok())
            .unwrap_or(0);
        result["file"] = json!({"path": path, "index": index});
    }
    result
}

pub(crate) fn command(args: &FnArgs) -> ExitCode {
    let options = ReadOptions {
        recursive: false,
        max_bytes: args.max_input_bytes,
        fixed_limit: false,
    };
    let inputs = match super::read_inputs(&[], &options, false) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let text = inputs
        .sources
        .first()
        .map(|s| s.text.as_str())
        .unwrap_or_default();
    let outcome = run(text);
    // stderr is what kustomize shows when the function fails: plain, like `render`'s.
    super::print_diagnostics(&outcome.diagnostics, false);
    let written = super::write_stdout(outcome.stdout().as_bytes());
    if outcome.status == SUCCESS {
        written
    } else {
        ExitCode::from(outcome.status)
    }
}
