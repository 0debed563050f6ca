//! YAML input: a stream of documents composed into trees of located, uninterpreted nodes.
//!
//! Scalars keep their text and whether they were plain, so each consumer resolves them as it
//! must: RolloutManager fields by their Rust type ([`crate::input::de`]), passthrough objects
//! with the YAML 1.1 rules Kubernetes applies ([`crate::input::yaml11`]). Every node keeps its
//! position, so any diagnostic can point at the offending value. Aliases are expanded here
//! under a budget, merge keys (`<<`) are applied as Kubernetes' YAML reader does, and
//! duplicate keys are reported.
//!
//! Composed here from granit-parser's events (the parser serde-saphyr itself uses) because no
//! crate offers this tree: serde-saphyr goes from text straight to typed values by YAML 1.2
//! rules, and YAML DOM crates resolve scalars on the way in, losing the style that decides
//! what a plain `yes` or `0755` means to Kubernetes.

use std::collections::HashMap;
use std::sync::Arc;

use granit_parser::{Event, Parser, ScalarStyle, Span, StructureStyle, Tag};

use crate::diag::{Diagnostic, Diagnostics, FieldPath, Location, Pos, Segment};

/// The most one run may compose, over all its sources, aliases expanded, in bytes of
/// [`weight`]: a "billion laughs" document, or many files of them, is refused long before it
/// can exhaust memory, and so is a tree of many tiny nodes (README, "Reading YAML", has the
/// measured bound: peak memory stays a small multiple of this).
pub const MAX_WEIGHT: usize = 32 * 1024 * 1024;

/// What one node counts in the budget, next to its text: about what its parts take in the
/// tree and in the JSON built from it, measured (README, "Reading YAML"), so that many tiny nodes
/// weigh what they cost.
pub const NODE_WEIGHT: usize = 48;

/// Deepest collection nesting accepted; deeper input is refused by the parser with a location.
/// No Kubernetes object comes close, and it bounds every recursive walk over the tree.
pub const MAX_DEPTH: usize = 200;

pub const TAG_STR: &str = "tag:yaml.org,2002:str";
pub const TAG_NULL: &str = "tag:yaml.org,2002:null";
pub const TAG_BOOL: &str = "tag:yaml.org,2002:bool";
pub const TAG_INT: &str = "tag:yaml.org,2002:int";
pub const TAG_FLOAT: &str = "tag:yaml.org,2002:float";
pub const TAG_MAP: &str = "tag:yaml.org,2002:map";
pub const TAG_SEQ: &str = "tag:yaml.org,2002:seq";
const TAG_MERGE: &str = "tag:yaml.org,2002:merge";

/// A tag as users write it: `!!int` for the YAML core tags.
pub fn display_tag(tag: &str) -> String {
    match tag.strip_prefix("tag:yaml.org,2002:") {
        Some(core) => format!("!!{core}"),
        None => tag.to_owned(),
    }
}

/// How a scalar was written. Only plain scalars are subject to implicit typing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Quoted,
    Block,
}

/// A YAML node with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub pos: Pos,
    /// The resolved tag, when one was written (`!!str` is `tag:yaml.org,2002:str`).
    pub tag: Option<Box<str>>,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar { text: String, style: Style },
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Node {
    /// The text of a scalar node.
    pub fn scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// True for the plain (untagged or `!!null`) spellings of null: empty, `~`, `null`.
    pub fn is_null(&self) -> bool {
        match &self.value {
            Value::Scalar {
                text,
                style: Style::Plain,
            } => match self.tag.as_deref() {
                None => matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"),
                Some(tag) => tag == TAG_NULL,
            },
            _ => false,
        }
    }

    /// The value of `key` in a mapping node.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|entry| &entry.value)
    }

    /// The entry for `key` in a mapping node (its key node carries the key's position).
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .rev()
                .find(|entry| entry.key.scalar() == Some(key)),
            _ => None,
        }
    }

    /// Follows `segments` as far as they exist: the deepest node reached, the position of the
    /// key that led to it (none after a list index), and whether the whole path exists.
    fn follow(&self, segments: &[Segment]) -> (&Node, Option<Pos>, bool) {
        let mut node = self;
        let mut key_pos = None;
        for segment in segments {
            let next = match (segment, &node.value) {
                (Segment::Key(key), Value::Map(_)) => {
                    node.entry(key).map(|e| (Some(e.key.pos), &e.value))
                }
                (Segment::Index(index), Value::Seq(items)) => items.get(*index).map(|n| (None, n)),
                _ => None,
            };
            match next {
                Some((key, next)) => {
                    key_pos = key;
                    node = next;
                }
                None => return (node, key_pos, false),
            }
        }
        (node, key_pos, true)
    }

    /// Where a diagnostic about `path` should point: the value itself when it is a scalar;
    /// for a mapping or list (or a field that is missing from one), the key that introduces it,
    /// since block collections only start on the next line.
    pub fn locate(&self, path: &FieldPath) -> Pos {
        let (node, key_pos, _) = self.follow(path.segments());
        match node.value {
            Value::Scalar { .. } => node.pos,
            _ => key_pos.unwrap_or(node.pos),
        }
    }

    /// The position of the key named by the last segment of `path`, for diagnostics about a
    /// map key itself (a label name); falls back to [`Node::locate`].
    pub fn locate_key(&self, path: &FieldPath) -> Pos {
        if let Some((Segment::Key(key), parent)) = path.segments().split_last()
            && let (node, _, true) = self.follow(parent)
            && let Some(entry) = node.entry(key)
        {
            return entry.key.pos;
        }
        self.locate(path)
    }

    /// A short description of what kind of node this is, for messages.
    pub fn describe(&self) -> &'static str {
        match &self.value {
            Value::Scalar { .. } if self.is_null() => "null",
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// One non-empty document of a source.
#[derive(Clone, Debug)]
pub struct Document {
    pub source: Arc<str>,
    pub root: Node,
}

impl Document {
    pub fn location(&self, pos: Pos) -> Location {
        Location {
            source: self.source.clone(),
            pos: Some(pos),
        }
    }
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: u32::try_from(span.start.line()).unwrap_or(u32::MAX),
        col: u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
    }
}

fn tag_name(tag: Option<&Tag>) -> Option<Box<str>> {
    tag.map(|tag| tag.to_string().into_boxed_str())
}

enum Frame {
    Seq {
        pos: Pos,
        tag: Option<Box<str>>,
        anchor: usize,
        flow: bool,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        tag: Option<Box<str>>,
        anchor: usize,
        flow: bool,
        entries: Vec<Entry>,
        key: Option<Node>,
    },
}

impl Frame {
    fn is_flow(&self) -> bool {
        match self {
            Frame::Seq { flow, .. } | Frame::Map { flow, .. } => *flow,
        }
    }
}

/// Limits that hold for a whole run, over every source: the weight of what is composed
/// (aliases expanded) bounds the memory the trees take.
#[derive(Debug)]
pub struct Budget {
    weight_left: usize,
    exhausted: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(MAX_WEIGHT)
    }
}

impl Budget {
    pub fn new(weight: usize) -> Self {
        Budget {
            weight_left: weight,
            exhausted: false,
        }
    }

    /// Whether a source was refused for the budget: every later one would be too.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }
}

/// Builds documents from parser events.
struct Composer<'a> {
    source: &'a Arc<str>,
    text: &'a str,
    diagnostics: &'a mut Diagnostics,
    anchors: HashMap<usize, Node>,
    budget: &'a mut Budget,
    stack: Vec<Frame>,
    root: Option<Node>,
    documents: Vec<Document>,
}

/// Parses a whole source into its non-empty documents, with a budget of its own. A syntax
/// error is returned; problems that leave the structure intact (duplicate keys) are added to
/// `diagnostics` and composition goes on.
pub fn parse(
    source: &Arc<str>,
    text: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Vec<Document>, Diagnostic> {
    let (documents, error) = parse_within(source, text, diagnostics, &mut Budget::default());
    match error {
        Some(error) => Err(error),
        None => Ok(documents),
    }
}

/// Parses a source under a run's budget: the documents completed before a syntax error
/// (so their problems can still be reported), and the error that ended the source.
pub fn parse_within(
    source: &Arc<str>,
    text: &str,
    diagnostics: &mut Diagnostics,
    budget: &mut Budget,
) -> (Vec<Document>, Option<Diagnostic>) {
    let options = granit_parser::options! {
        // Kubernetes reads YAML with a libyaml port: a block scalar ending the input without
        // a line break gets no trailing line break there either.
        block_scalar_eof_without_line_feed: true,
        emit_comments: false,
        block_nesting_limit: MAX_DEPTH,
        flow_nesting_limit: MAX_DEPTH,
    };
    let mut composer = Composer {
        source,
        text,
        diagnostics,
        anchors: HashMap::new(),
        budget,
        stack: Vec::new(),
        root: None,
        documents: Vec::new(),
    };
    for event in Parser::new_from_str_with_options(text, options) {
        let result = match event {
            Ok((event, span)) => composer.event(event, &span),
            Err(error) => {
                let marker = error.marker();
                let pos = Pos {
                    line: u32::try_from(marker.line()).unwrap_or(u32::MAX),
                    col: u32::try_from(marker.col() + 1).unwrap_or(u32::MAX),
                };
                Err(
                    Diagnostic::error(format!("invalid YAML: {}", error.info())).at(Location {
                        source: source.clone(),
                        pos: Some(pos),
                    }),
                )
            }
        };
        if let Err(error) = result {
            return (composer.documents, Some(error));
        }
    }
    (composer.documents, None)
}

impl Composer<'_> {
    fn location(&self, pos: Pos) -> Location {
        Location {
            source: self.source.clone(),
            pos: Some(pos),
        }
    }

    fn event(&mut self, event: Event<'_>, span: &Span) -> Result<(), Diagnostic> {
        match event {
            Event::DocumentStart(..) => {
                self.anchors.clear();
                self.root = None;
            }
            Event::DocumentEnd => {
                if let Some(root) = self.root.take() {
                    // `---` alone, `~` or `null` is an empty document, as in kubectl and Argo CD.
                    if !root.is_null() {
                        self.documents.push(Document {
                            source: self.source.clone(),
                            root,
                        });
                    }
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
                    _ => Style::Block,
                };
                self.spend(NODE_WEIGHT + text.len(), span)?;
                self.check_separation(span);
                if style == Style::Plain {
                    self.check_flow_colon(&text, span);
                }
                let node = Node {
                    pos: pos_of(span),
                    tag: tag_name(tag.as_deref()),
                    value: Value::Scalar {
                        text: text.into_owned(),
                        style,
                    },
                };
                self.complete(node, anchor)?;
            }
            Event::Alias(anchor) => {
                self.check_separation(span);
                let pos = pos_of(span);
                let Some(target) = self.anchors.get(&anchor) else {
                    return Err(Diagnostic::error(
                        "an alias refers to a node that contains it (recursive alias)",
                    )
                    .at(self.location(pos)));
                };
                let size = weight(target, self.budget.weight_left);
                if size > self.budget.weight_left {
                    self.budget.exhausted = true;
                    return Err(Diagnostic::error(format!(
                        "the input expands to more than {} MiB of YAML (aliases counted as often as they are used); refusing to read further",
                        MAX_WEIGHT >> 20
                    ))
                    .at(self.location(pos))
                    .hint("this looks like an alias bomb; write the values out instead of nesting aliases, or render fewer files at once"));
                }
                self.budget.weight_left -= size;
                let mut node = target.clone();
                node.pos = pos;
                self.complete(node, 0)?;
            }
            Event::SequenceStart(style, anchor, tag) => {
                self.spend(NODE_WEIGHT, span)?;
                self.check_separation(span);
                self.stack.push(Frame::Seq {
                    pos: pos_of(span),
                    tag: tag_name(tag.as_deref()),
                    anchor,
                    flow: style == StructureStyle::Flow,
                    items: Vec::new(),
                });
            }
            Event::MappingStart(style, anchor, tag) => {
                self.spend(NODE_WEIGHT, span)?;
                self.check_separation(span);
                self.stack.push(Frame::Map {
                    pos: pos_of(span),
                    tag: tag_name(tag.as_deref()),
                    anchor,
                    flow: style == StructureStyle::Flow,
                    entries: Vec::new(),
                    key: None,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Seq {
                        pos,
                        tag,
                        anchor,
                        mut items,
                        ..
                    }) => (
                        Node {
                            pos,
                            tag,
                            value: Value::Seq({
                                shrink(&mut items);
                                items
                            }),
                        },
                        anchor,
                    ),
                    Some(Frame::Map {
                        pos,
                        tag,
                        anchor,
                        entries,
                        ..
                    }) => {
                        let entries = self.finish_mapping(entries)?;
                        (
                            Node {
                                pos,
                                tag,
                                value: Value::Map(entries),
                            },
                            anchor,
                        )
                    }
                    None => return Ok(()),
                };
                self.complete(node, anchor)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Registers an anchor and attaches a finished node to its parent (or makes it the root).
    fn complete(&mut self, node: Node, anchor: usize) -> Result<(), Diagnostic> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(key) => entries.push(Entry { key, value: node }),
            },
        }
        Ok(())
    }

    /// Takes `weight` from the run's budget.
    fn spend(&mut self, weight: usize, span: &Span) -> Result<(), Diagnostic> {
        if weight > self.budget.weight_left {
            self.budget.exhausted = true;
            return Err(Diagnostic::error(format!(
                "the input is more than {} MiB of YAML, counting {NODE_WEIGHT} bytes for each node; refusing to read further",
                MAX_WEIGHT >> 20
            ))
            .at(self.location(pos_of(span)))
            .hint("render fewer or smaller files at once"));
        }
        self.budget.weight_left -= weight;
        Ok(())
    }

    /// yaml.v2 (Kubernetes' reader) refuses a tab right after the `-` of a block list item
    /// (it allows one after a key's `:`); YAML 1.2 allows both.
    fn check_separation(&mut self, span: &Span) {
        if !matches!(self.stack.last(), Some(Frame::Seq { flow: false, .. })) {
            return;
        }
        let indicator = '-';
        let Some(start) = span.start.byte_offset() else {
            return;
        };
        let Some(line) = self.text.get(..start) else {
            return;
        };
        let line = &line[line.rfind('\n').map_or(0, |i| i + 1)..];
        // Back over the node's properties (`&anchor`, `!tag`) to the indicator.
        let mut rest = line.trim_end_matches([' ', '\t']);
        let mut separation = &line[rest.len()..];
        loop {
            if rest.ends_with(indicator) {
                break;
            }
            let word = rest.rfind([' ', '\t']).map_or(0, |i| i + 1);
            if !matches!(rest[word..].chars().next(), Some('&' | '!')) {
                return;
            }
            let before = rest[..word].trim_end_matches([' ', '\t']);
            separation = &rest[before.len()..word];
            rest = before;
        }
        if separation.contains('\t') {
            let pos = pos_of(span);
            self.diagnostics.push(
                Diagnostic::error(
                    "a tab after a list item's `-`: Kubernetes' YAML reader refuses the document (\"found character that cannot start any token\")",
                )
                .at(self.location(pos))
                .hint("separate with spaces"),
            );
        }
    }

    /// In a flow collection, yaml.v2 keeps a `:` that is followed by `,`, `[`, `]`, `{` or
    /// `}` in the plain scalar before it: `{replicas:, paused: true}` has the key `replicas:`
    /// there, while YAML 1.2 reads `replicas` with no value.
    fn check_flow_colon(&mut self, text: &str, span: &Span) {
        if !self.stack.last().is_some_and(Frame::is_flow) {
            return;
        }
        let (Some(start), Some(end)) = (span.start.byte_offset(), span.end.byte_offset()) else {
            return;
        };
        // An empty value (`{a:, b: 1}` has one after `a:`) is not written text.
        if start == end {
            return;
        }
        let after = self.text.get(end..).unwrap_or("").as_bytes();
        if let [b':', next, ..] = after
            && matches!(next, b',' | b'[' | b']' | b'{' | b'}')
        {
            self.diagnostics.push(
                Diagnostic::error(format!(
                    "Kubernetes' YAML reader takes this as the string `{text}:`, colon included, where YAML 1.2 reads `{text}` and an empty value"
                ))
                .at(self.location(pos_of(span)))
                .hint(format!("write `{text}: ` with a space after the colon, or quote the text")),
            );
        }
    }

    /// Applies merge keys as yaml.v2 does and reports duplicate and null keys.
    ///
    /// yaml.v2 (non-strict, as `sigs.k8s.io/yaml` uses it) sets the keys in the order they
    /// are written: a merge sets every merged key, over keys written before it, and keys
    /// written after it set theirs over the merged ones. Of the mappings of a list merged at
    /// once, the earlier ones win. An explicit key written twice is an error here (yaml.v2
    /// would silently keep the last).
    fn finish_mapping(&mut self, entries: Vec<Entry>) -> Result<Vec<Entry>, Diagnostic> {
        let is_merge = |entry: &Entry| match &entry.key.value {
            Value::Scalar {
                text,
                style: Style::Plain,
            } => text == "<<" && entry.key.tag.as_deref().is_none_or(|tag| tag == TAG_MERGE),
            _ => false,
        };
        if !entries.iter().any(is_merge) {
            return Ok(self.check_keys(entries));
        }
        let mut result: Vec<Entry> = Vec::with_capacity(entries.len());
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut explicit: HashMap<String, Pos> = HashMap::new();
        let set =
            |result: &mut Vec<Entry>, index: &mut HashMap<String, usize>, entry: Entry| match entry
                .key
                .scalar()
                .map(str::to_owned)
            {
                Some(text) => match index.get(&text) {
                    Some(&at) => result[at] = entry,
                    None => {
                        index.insert(text, result.len());
                        result.push(entry);
                    }
                },
                None => result.push(entry),
            };
        for entry in entries {
            if is_merge(&entry) {
                let source = entry.value;
                let source_pos = entry.key.pos;
                let maps = match source.value {
                    Value::Map(_) => vec![source],
                    Value::Seq(items) if items.iter().all(|i| matches!(i.value, Value::Map(_))) => {
                        items.into_iter().rev().collect()
                    }
                    _ => {
                        return Err(Diagnostic::error(
                            "the value of a merge key `<<` must be a mapping or a list of mappings",
                        )
                        .at(self.location(source.pos)));
                    }
                };
                for map in maps {
                    if let Value::Map(merged) = map.value {
                        for entry in merged {
                            if let Some(text) = entry.key.scalar()
                                && let Some(first) = explicit.get(text)
                            {
                                // yaml.v2 would take the merged value over the one written
                                // before `<<`, which YAML's merge rules (and most readers)
                                // keep: too surprising to reproduce silently.
                                self.diagnostics.push(
                                    Diagnostic::error(format!(
                                        "the merge key `<<` replaces `{text}`, written before it on line {}: Kubernetes' YAML reader takes the merged value",
                                        first.line
                                    ))
                                    .at(self.location(source_pos))
                                    .hint(format!("write `{text}` after `<<` to keep your value, or remove it")),
                                );
                                continue;
                            }
                            set(&mut result, &mut index, entry);
                        }
                    }
                }
                continue;
            }
            let earlier = entry
                .key
                .scalar()
                .and_then(|text| explicit.get(text).copied());
            if let Some(problem) = self.key_problem(&entry.key, earlier) {
                self.diagnostics.push(problem);
                continue;
            }
            if let Some(text) = entry.key.scalar() {
                explicit.insert(text.to_owned(), entry.key.pos);
            }
            set(&mut result, &mut index, entry);
        }
        Ok(result)
    }

    /// Why a key cannot stay in its mapping, if it cannot: a list or a mapping, null, or a key
    /// already written at `earlier` in the same mapping.
    fn key_problem(&self, key: &Node, earlier: Option<Pos>) -> Option<Diagnostic> {
        let problem = if let Value::Seq(_) | Value::Map(_) = key.value {
            let what = if matches!(key.value, Value::Seq(_)) {
                "a list"
            } else {
                "a mapping"
            };
            Diagnostic::error(format!(
                "{what} as a key: Kubernetes' YAML reader refuses the document"
            ))
            .hint("keys are strings")
        } else if key.is_null() {
            Diagnostic::error("a null key: Kubernetes' YAML reader refuses the document")
                .hint("write the key as a string, in quotes if it must read `null` or `~`")
        } else {
            let earlier = earlier?;
            Diagnostic::error(format!(
                "duplicate key `{}` (first defined on line {})",
                key.scalar().unwrap_or_default(),
                earlier.line
            ))
            .hint("a key may appear only once in a mapping; remove one of them")
        };
        Some(problem.at(self.location(key.pos)))
    }

    /// [`Self::finish_mapping`] for a mapping without merge keys (nearly all of them): the same
    /// key checks, without copying the entries or their keys, so that a large mapping costs
    /// little more than its tree.
    fn check_keys(&mut self, mut entries: Vec<Entry>) -> Vec<Entry> {
        let mut first: HashMap<&str, Pos> = HashMap::with_capacity(entries.len());
        let mut keep = Vec::with_capacity(entries.len());
        for entry in &entries {
            let earlier = entry.key.scalar().and_then(|text| first.get(text).copied());
            let problem = self.key_problem(&entry.key, earlier);
            if problem.is_none()
                && let Some(text) = entry.key.scalar()
            {
                first.insert(text, entry.key.pos);
            }
            keep.push(problem.is_none());
            if let Some(problem) = problem {
                self.diagnostics.push(problem);
            }
        }
        drop(first);
        let mut keep = keep.into_iter();
        entries.retain(|_| keep.next().unwrap_or(false));
        shrink(&mut entries);
        entries
    }
}

/// Gives back the room a collection's vector grew by pushing (four entries for a mapping of
/// one: deep, narrow documents would take four times their size). Large vectors are left
/// alone: reallocating one would briefly hold it twice, and their spare room is relatively
/// small.
fn shrink<T>(items: &mut Vec<T>) {
    if items.len() < 4096 {
        items.shrink_to_fit();
    }
}

/// What a node weighs in the budget (its nodes and their text), counted until `limit` is
/// passed.
fn weight(node: &Node, limit: usize) -> usize {
    let mut total = 0;
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        total += NODE_WEIGHT;
        match &node.value {
            Value::Scalar { text, .. } => total += text.len(),
            Value::Seq(items) => pending.extend(items),
            Value::Map(entries) => {
                pending.extend(entries.iter().flat_map(|e| [&e.key, &e.value]));
            }
        }
        if total > limit {
            break;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vec<Document> {
        let mut diagnostics = Diagnostics::default();
        let docs = parse(&Arc::from("t.yaml"), text, &mut diagnostics).expect("valid YAML");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        docs
    }

    fn parse_err(text: &str) -> String {
        let mut diagnostics = Diagnostics::default();
        match parse(&Arc::from("t.yaml"), text, &mut diagnostics) {
            Err(diagnostic) => diagnostic.to_string(),
            Ok(_) => diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    #[test]
    fn empty_and_null_documents_are_skipped() {
        let docs = parse_ok("# only a comment\n---\n---\n~\n---\na: 1\n---\n");
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].root.get("a").and_then(Node::scalar), Some("1"));
    }

    #[test]
    fn scalars_keep_text_style_and_position() {
        let docs = parse_ok("a: yes\nb: \"yes\"\nc: |\n  x\n");
        let root = &docs[0].root;
        let a = root.get("a").unwrap();
        assert_eq!(
            a.value,
            Value::Scalar {
                text: "yes".into(),
                style: Style::Plain
            }
        );
        assert_eq!(a.pos, Pos { line: 1, col: 4 });
        assert!(matches!(
            root.get("b").unwrap().value,
            Value::Scalar {
                style: Style::Quoted,
                ..
            }
        ));
        assert_eq!(root.get("c").and_then(Node::scalar), Some("x\n"));
    }

    #[test]
    fn merge_keys_apply_with_explicit_keys_winning() {
        let docs = parse_ok("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n");
        let merged = docs[0].root.get("use").unwrap();
        assert_eq!(merged.get("x").and_then(Node::scalar), Some("1"));
        assert_eq!(merged.get("y").and_then(Node::scalar), Some("3"));
        assert!(merged.get("<<").is_none());
    }

    #[test]
    fn duplicate_keys_are_located_errors() {
        assert_eq!(
            parse_err("a: 1\nb: 2\na: 3\n"),
            "t.yaml:3:1: error: duplicate key `a` (first defined on line 1)\n  hint: a key may appear only once in a mapping; remove one of them"
        );
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        let message = parse_err(&text);
        assert!(message.contains("alias bomb"), "{message}");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = "[".repeat(100_000);
        assert!(parse_err(&text).contains("error: invalid YAML"));
        let text = (0..300)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect::<String>();
        assert!(parse_err(&text).contains("error: invalid YAML"));
    }

    #[test]
    fn syntax_errors_are_located() {
        assert!(parse_err("a: [1, 2\n").starts_with("t.yaml:"));
        assert!(parse_err("a:\n\t- b\n").starts_with("t.yaml:2:"));
    }
}
