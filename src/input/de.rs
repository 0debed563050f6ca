//! Typed decoding of a YAML node tree, with located errors.
//!
//! A serde `Deserializer` over [`crate::input::yaml::Node`]: the Rust type is the schema. A plain
//! `yes` read into a `String` field is the string `yes` (no "Norway problem"); read into a
//! `bool` it is `true`, as Kubernetes would read it. Errors carry the position and field path of
//! the node that caused them. Unknown fields are not fatal: every one in the document is
//! collected, with the closest valid name, and decoding goes on, so a user sees them all at
//! once. This also covers embedded Kubernetes types, whose `Deserialize` impls announce their
//! field names through `deserialize_struct`. [`Located`](crate::input::located::Located)
//! values get their field path and position filled in.
//!
//! Hand-written because no crate does this: serde-saphyr's deserializer reads YAML text with
//! YAML 1.2 rules and stops at the first unknown field; this one reads the composer's node
//! trees (already merged, alias-expanded and checked for duplicate keys), types each plain
//! scalar by the target field as Kubernetes' YAML 1.1 reader would, and reports every unknown
//! field with its position.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};

use crate::diag::{Diagnostic, FieldPath, Pos, closest};
use crate::input::located::{self, Site};
use crate::input::yaml::{self, Document, Node, Style, Value};
use crate::input::yaml11::{self, Plain};

/// A decoding error: a message, and the node it is about once known.
#[derive(Debug)]
pub struct Error {
    message: String,
    hint: Option<String>,
    at: Option<(Pos, FieldPath)>,
    /// About the value at `at` alone (not a missing field): decoding can go on without it.
    about_the_value: bool,
}

impl Error {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
            at: None,
            about_the_value: true,
        }
    }

    /// Attaches the innermost node's location; outer nodes do not override it.
    fn locate(mut self, node: &Node, path: &FieldPath) -> Self {
        if self.at.is_none() {
            self.at = Some((node.pos, path.clone()));
        }
        self
    }
}

impl Error {
    fn diagnostic(self, document: &Document) -> Diagnostic {
        let mut diagnostic = Diagnostic::error(self.message);
        if let Some((pos, path)) = self.at {
            diagnostic = diagnostic.at(document.location(pos)).path(path);
        }
        if let Some(hint) = self.hint {
            diagnostic = diagnostic.hint(hint);
        }
        diagnostic
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::new(message.to_string())
    }

    fn invalid_type(unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        let found = match unexpected {
            de::Unexpected::Str(s) => format!("the string {}", serde_json::Value::from(s)),
            de::Unexpected::Unit => "null".to_owned(),
            de::Unexpected::Seq => "a list".to_owned(),
            de::Unexpected::Map => "a mapping".to_owned(),
            other => other.to_string(),
        };
        Self::new(format!("expected {expected}, found {found}"))
    }

    fn missing_field(field: &'static str) -> Self {
        Self {
            about_the_value: false,
            ..Self::new(format!("missing required field `{field}`"))
        }
    }
}

/// Decodes `node` as `T`. Unknown fields are appended to `diagnostics`; the first hard error
/// (wrong type, missing required field) is returned as a located diagnostic.
#[cfg(test)]
pub fn decode<T: DeserializeOwned>(
    document: &Document,
    node: &Node,
    path: FieldPath,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<T, Diagnostic> {
    let context = Context {
        document,
        unknown: RefCell::new(Vec::new()),
        lenient: false,
    };
    let result = context.decode(node, path);
    diagnostics.extend(context.unknown.into_inner());
    result.map_err(|error| error.diagnostic(document))
}

/// The most values [`decode_all`] sets aside before it gives up on a document.
const MAX_SET_ASIDE: usize = 100;

/// Decodes a whole document as `T` and reports every problem at once: a value of the wrong
/// type is reported, set aside (its key removed from a copy of the document), and decoding
/// starts over, so the unknown fields and wrong values after it are found too. Returns the
/// value decoded without what was set aside (to check the rest: the document has errors
/// anyway), and the paths of what was, so that those checks can leave them alone.
pub fn decode_all<T: DeserializeOwned>(
    document: &Document,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Option<T>, Vec<FieldPath>) {
    let mut copy: Option<Document> = None;
    let mut set_aside = Vec::new();
    loop {
        let current = copy.as_ref().unwrap_or(document);
        let context = Context {
            document: current,
            unknown: RefCell::new(Vec::new()),
            lenient: false,
        };
        let result = context.decode::<T>(&current.root, FieldPath::root());
        let unknown = context.unknown.into_inner();
        let error = match result {
            Ok(value) => {
                diagnostics.extend(unknown);
                return (Some(value), set_aside);
            }
            Err(error) => error,
        };
        let removable = error.about_the_value && set_aside.len() < MAX_SET_ASIDE;
        let path = error.at.as_ref().map(|(_, path)| path.clone());
        diagnostics.push(error.diagnostic(current));
        let copy = copy.get_or_insert_with(|| document.clone());
        match path {
            Some(path) if removable && remove_entry(&mut copy.root, path.segments()) => {
                set_aside.push(path);
            }
            // Nothing more can be known: what was found so far stands.
            _ => {
                diagnostics.extend(unknown);
                return (None, set_aside);
            }
        }
    }
}

/// Removes the mapping entry a path leads to; false when the path does not end in a key of a
/// mapping.
fn remove_entry(root: &mut Node, segments: &[crate::diag::Segment]) -> bool {
    use crate::diag::Segment;
    let Some((Segment::Key(last), parents)) = segments.split_last() else {
        return false;
    };
    let mut node = root;
    for segment in parents {
        node = match (segment, &mut node.value) {
            (Segment::Key(key), Value::Map(entries)) => {
                match entries
                    .iter_mut()
                    .find(|e| e.key.scalar() == Some(key.as_str()))
                {
                    Some(entry) => &mut entry.value,
                    None => return false,
                }
            }
            (Segment::Index(index), Value::Seq(items)) => match items.get_mut(*index) {
                Some(item) => item,
                None => return false,
            },
            _ => return false,
        };
    }
    let Value::Map(entries) = &mut node.value else {
        return false;
    };
    let before = entries.len();
    entries.retain(|e| e.key.scalar() != Some(last.as_str()));
    entries.len() < before
}

/// Decodes what `T` describes of `node` and nothing more: unknown fields are skipped without a
/// word and any error gives `None`. For reading a few fields of objects that are not ours.
pub fn decode_lenient<T: DeserializeOwned>(document: &Document, node: &Node) -> Option<T> {
    let context = Context {
        document,
        unknown: RefCell::new(Vec::new()),
        lenient: true,
    };
    context.decode(node, FieldPath::root()).ok()
}

/// What every node of one decoding shares.
struct Context<'a> {
    document: &'a Document,
    unknown: RefCell<Vec<Diagnostic>>,
    /// Unknown fields are skipped silently.
    lenient: bool,
}

impl Context<'_> {
    fn decode<T: DeserializeOwned>(&self, node: &Node, path: FieldPath) -> Result<T, Error> {
        let _decoding = located::Decoding::start();
        T::deserialize(NodeDeserializer {
            node,
            path,
            key_pos: None,
            context: self,
        })
    }
}

struct NodeDeserializer<'a> {
    node: &'a Node,
    path: FieldPath,
    /// The position of the mapping key whose value this node is.
    key_pos: Option<Pos>,
    context: &'a Context<'a>,
}

impl<'a> NodeDeserializer<'a> {
    fn child(&self, node: &'a Node, path: FieldPath, key_pos: Option<Pos>) -> Self {
        Self {
            node,
            path,
            key_pos,
            context: self.context,
        }
    }

    /// Where diagnostics about this node point (see [`Site::pos`]).
    fn site(&self) -> Site {
        let pos = match self.node.value {
            Value::Scalar { .. } => self.node.pos,
            _ => self.key_pos.unwrap_or(self.node.pos),
        };
        Site {
            path: self.path.clone(),
            pos,
        }
    }

    /// Hands a [`Located`](located::Located) value its site, then decodes the value itself.
    fn located<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let site = located::hand_over(self.site());
        visitor.visit_map(LocatedAccess {
            site: Some(site),
            value: Some(self),
        })
    }

    fn fail(&self, error: Error) -> Error {
        error.locate(self.node, &self.path)
    }

    /// What a scalar means when the target type does not say (YAML 1.1, as Kubernetes).
    fn plain(&self) -> Option<Plain> {
        match (&self.node.value, self.node.tag.as_deref()) {
            (Value::Scalar { text, style }, tag) => match (style, tag) {
                (_, Some(yaml::TAG_STR)) => Some(Plain::Str),
                (Style::Plain, _) => Some(yaml11::resolve(text)),
                _ => Some(Plain::Str),
            },
            _ => None,
        }
    }

    fn unexpected(&self) -> de::Unexpected<'a> {
        match &self.node.value {
            Value::Scalar { text, .. } => match self.plain() {
                Some(Plain::Null) => de::Unexpected::Unit,
                Some(Plain::Bool(b)) => de::Unexpected::Bool(b),
                Some(Plain::Int(i)) => de::Unexpected::Signed(i),
                Some(Plain::Uint(u)) => de::Unexpected::Unsigned(u),
                Some(Plain::Float(f)) => de::Unexpected::Float(f),
                _ => de::Unexpected::Str(text),
            },
            Value::Seq(_) => de::Unexpected::Seq,
            Value::Map(_) => de::Unexpected::Map,
        }
    }

    fn invalid_type(&self, expected: &dyn de::Expected) -> Error {
        let mut error = <Error as de::Error>::invalid_type(self.unexpected(), expected);
        if matches!(
            self.node.value,
            Value::Scalar {
                style: Style::Quoted,
                ..
            }
        ) {
            error.hint = Some("remove the quotes".to_owned());
        }
        self.fail(error)
    }

    fn check_tag(&self) -> Result<(), Error> {
        match self.node.tag.as_deref() {
            None | Some(yaml::TAG_STR | yaml::TAG_MAP | yaml::TAG_SEQ) => Ok(()),
            Some(tag @ (yaml::TAG_INT | yaml::TAG_FLOAT | yaml::TAG_BOOL | yaml::TAG_NULL)) => {
                match &self.node.value {
                    Value::Scalar { text, .. } if !yaml11::fits_tag(tag, text) => {
                        // The value is not repeated: it may be a secret.
                        Err(self.fail(Error::new(format!(
                            "the value is not a valid `{}`, and Kubernetes' YAML reader refuses the document",
                            yaml::display_tag(tag)
                        ))))
                    }
                    _ => Ok(()),
                }
            }
            Some(tag) => Err(self.fail(Error::new(yaml11::unsupported_tag(tag)))),
        }
    }

    fn text(&self) -> Option<&'a str> {
        match &self.node.value {
            Value::Scalar { text, .. } if !self.node.is_null() => Some(text),
            _ => None,
        }
    }

    fn integer<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.plain() {
            Some(Plain::Int(i)) => visitor.visit_i64(i),
            Some(Plain::Uint(u)) => visitor.visit_u64(u),
            _ => return Err(self.invalid_type(&visitor)),
        };
        result.map_err(|e| self.fail(e))
    }

    fn float<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.plain() {
            Some(Plain::Int(i)) => visitor.visit_i64(i),
            Some(Plain::Uint(u)) => visitor.visit_u64(u),
            Some(Plain::Float(f)) => visitor.visit_f64(f),
            _ => return Err(self.invalid_type(&visitor)),
        };
        result.map_err(|e| self.fail(e))
    }
}

macro_rules! forward_integer {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
            self.check_tag()?;
            self.integer(visitor)
        }
    )*};
}

impl<'a> de::Deserializer<'a> for NodeDeserializer<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        let result = match &self.node.value {
            Value::Scalar { text, .. } => match self.plain() {
                Some(Plain::Null) => visitor.visit_unit(),
                Some(Plain::Bool(b)) => visitor.visit_bool(b),
                Some(Plain::Int(i)) => visitor.visit_i64(i),
                Some(Plain::Uint(u)) => visitor.visit_u64(u),
                Some(Plain::Float(f)) => visitor.visit_f64(f),
                _ => visitor.visit_str(text),
            },
            Value::Seq(items) => visitor.visit_seq(SeqAccess::new(&self, items)),
            Value::Map(entries) => visitor.visit_map(MapAccess::new(&self, entries, None)),
        };
        result.map_err(|e| self.fail(e))
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        match self.plain() {
            Some(Plain::Bool(b)) => visitor.visit_bool(b).map_err(|e| self.fail(e)),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    forward_integer! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        self.float(visitor)
    }

    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        self.float(visitor)
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        // `!!int 5` is the number 5 to Kubernetes, never the string a field wants.
        if matches!(
            self.node.tag.as_deref(),
            Some(yaml::TAG_INT | yaml::TAG_FLOAT | yaml::TAG_BOOL)
        ) {
            return Err(self.invalid_type(&visitor));
        }
        match self.text() {
            Some(text) => visitor.visit_str(text).map_err(|e| self.fail(e)),
            None => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        Err(self.invalid_type(&visitor))
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        Err(self.invalid_type(&visitor))
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.node.is_null() {
            visitor.visit_none().map_err(|e| self.fail(e))
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.node.is_null() {
            visitor.visit_unit().map_err(|e| self.fail(e))
        } else {
            Err(self.invalid_type(&visitor))
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        match &self.node.value {
            Value::Seq(items) => visitor
                .visit_seq(SeqAccess::new(&self, items))
                .map_err(|e| self.fail(e)),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.check_tag()?;
        match &self.node.value {
            Value::Map(entries) => visitor
                .visit_map(MapAccess::new(&self, entries, None))
                .map_err(|e| self.fail(e)),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == located::NAME {
            return self.located(visitor);
        }
        self.check_tag()?;
        match &self.node.value {
            Value::Map(entries) => visitor
                .visit_map(MapAccess::new(&self, entries, Some(fields)))
                .map_err(|e| self.fail(e)),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.text() {
            Some(text) => visitor
                .visit_enum(text.into_deserializer())
                .map_err(|e: Error| self.fail(e)),
            None => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

struct SeqAccess<'a> {
    parent: NodeDeserializer<'a>,
    items: std::slice::Iter<'a, Node>,
    index: usize,
}

impl<'a> SeqAccess<'a> {
    fn new(parent: &NodeDeserializer<'a>, items: &'a [Node]) -> Self {
        Self {
            parent: parent.child(parent.node, parent.path.clone(), None),
            items: items.iter(),
            index: 0,
        }
    }
}

impl<'a> de::SeqAccess<'a> for SeqAccess<'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let path = self.parent.path.index(self.index);
        self.index += 1;
        seed.deserialize(self.parent.child(item, path, None))
            .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// Walks a mapping. For structs (`fields` known), keys that are not fields are recorded as
/// unknown-field diagnostics and skipped, so decoding continues past them.
struct MapAccess<'a> {
    parent: NodeDeserializer<'a>,
    entries: std::slice::Iter<'a, yaml::Entry>,
    fields: Option<&'static [&'static str]>,
    /// The value of the key just read, its path and the key's position.
    value: Option<(&'a Node, FieldPath, Pos)>,
}

impl<'a> MapAccess<'a> {
    fn new(
        parent: &NodeDeserializer<'a>,
        entries: &'a [yaml::Entry],
        fields: Option<&'static [&'static str]>,
    ) -> Self {
        Self {
            parent: parent.child(parent.node, parent.path.clone(), None),
            entries: entries.iter(),
            fields,
            value: None,
        }
    }

    fn report_unknown(&self, key: &Node, name: &str, fields: &[&str]) {
        let context = self.parent.context;
        if context.lenient {
            return;
        }
        let mut diagnostic = Diagnostic::error("unknown field")
            .at(context.document.location(key.pos))
            .path(self.parent.path.key(name));
        diagnostic = match closest(name, fields.iter().copied()) {
            Some(suggestion) => diagnostic.hint(format!("did you mean `{suggestion}`?")),
            None if fields.is_empty() => diagnostic,
            None => diagnostic.hint(format!("valid fields here: {}", fields.join(", "))),
        };
        context.unknown.borrow_mut().push(diagnostic);
    }
}

impl<'a> de::MapAccess<'a> for MapAccess<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        while let Some(entry) = self.entries.next() {
            let Some(name) = entry.key.scalar().filter(|_| !entry.key.is_null()) else {
                return Err(Error::new(format!(
                    "mapping keys must be strings, found {}",
                    entry.key.describe()
                ))
                .locate(&entry.key, &self.parent.path));
            };
            if let Some(fields) = self.fields
                && !fields.contains(&name)
            {
                self.report_unknown(&entry.key, name, fields);
                continue;
            }
            let path = self.parent.path.key(name);
            let key_de = self
                .parent
                .child(&entry.key, path.clone(), Some(entry.key.pos));
            self.value = Some((&entry.value, path, entry.key.pos));
            return seed.deserialize(key_de).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (node, path, key_pos) = self
            .value
            .take()
            .ok_or_else(|| Error::new("a value was requested before its key"))?;
        seed.deserialize(self.parent.child(node, path, Some(key_pos)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// The two entries a [`Located`](located::Located) value is decoded from: the index of its
/// site, then the value.
struct LocatedAccess<'a> {
    site: Option<u64>,
    value: Option<NodeDeserializer<'a>>,
}

impl<'a> de::MapAccess<'a> for LocatedAccess<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let field = if self.site.is_some() {
            located::SITE_FIELD
        } else if self.value.is_some() {
            located::VALUE_FIELD
        } else {
            return Ok(None);
        };
        seed.deserialize(field.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        if let Some(site) = self.site.take() {
            return seed.deserialize(site.into_deserializer());
        }
        let value = self
            .value
            .take()
            .ok_or_else(|| Error::new("a value was requested before its key"))?;
        seed.deserialize(value)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::EnvVar;
    use serde::Deserialize;

    use super::*;
    use crate::diag::Diagnostics;

    fn document(text: &str) -> Document {
        let mut diagnostics = Diagnostics::default();
        let mut docs = yaml::parse(&Arc::from("t.yaml"), text, &mut diagnostics).unwrap();
        docs.remove(0)
    }

    fn decode_str<T: DeserializeOwned>(text: &str) -> (Result<T, String>, Vec<String>) {
        let doc = document(text);
        let mut unknown = Vec::new();
        let result = decode::<T>(&doc, &doc.root, FieldPath::root(), &mut unknown)
            .map_err(|d| d.to_string());
        (result, unknown.iter().map(ToString::to_string).collect())
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Sample {
        name: String,
        enabled: Option<bool>,
        count: Option<u32>,
        env: Option<Vec<EnvVar>>,
        labels: Option<BTreeMap<String, String>>,
    }

    #[test]
    fn strings_are_strings_whatever_they_look_like() {
        let (result, unknown) =
            decode_str::<Sample>("name: yes\nlabels: {a: on, b: 0755, c: ~x}\n");
        assert!(unknown.is_empty());
        let sample = result.unwrap();
        assert_eq!(sample.name, "yes");
        let labels = sample.labels.unwrap();
        assert_eq!(labels["a"], "on");
        assert_eq!(labels["b"], "0755");
    }

    #[test]
    fn booleans_and_numbers_follow_kubernetes() {
        let (result, _) = decode_str::<Sample>("name: x\nenabled: yes\ncount: 0x10\n");
        let sample = result.unwrap();
        assert_eq!(sample.enabled, Some(true));
        assert_eq!(sample.count, Some(16));
    }

    #[test]
    fn wrong_types_are_located() {
        let (result, _) = decode_str::<Sample>("name: x\nenabled: \"true\"\n");
        assert_eq!(
            result.unwrap_err(),
            "t.yaml:2:10: error: enabled: expected a boolean, found the string \"true\"\n  hint: remove the quotes"
        );
        let (result, _) = decode_str::<Sample>("name: x\nenv:\n- name: A\n  value: [1]\n");
        assert_eq!(
            result.unwrap_err(),
            "t.yaml:4:10: error: env[0].value: expected a string, found a list"
        );
    }

    #[test]
    fn missing_fields_point_at_their_mapping() {
        let (result, _) = decode_str::<Sample>("enabled: true\n");
        assert_eq!(
            result.unwrap_err(),
            "t.yaml:1:1: error: missing required field `name`"
        );
    }

    #[test]
    fn every_unknown_field_is_reported_with_a_suggestion() {
        let (result, unknown) = decode_str::<Sample>(
            "name: x\nenabeld: true\nenv:\n- name: A\n  valueFrom:\n    secretKeyRef: {nmae: s, key: k}\n",
        );
        assert!(result.is_ok());
        assert_eq!(
            unknown,
            [
                "t.yaml:2:1: error: enabeld: unknown field\n  hint: did you mean `enabled`?",
                "t.yaml:6:20: error: env[0].valueFrom.secretKeyRef.nmae: unknown field\n  hint: did you mean `name`?",
            ]
        );
    }

    #[test]
    fn non_string_keys_are_errors() {
        // The reader refuses the key before decoding sees it, and decoding sees no entry.
        let mut diagnostics = Diagnostics::default();
        let docs = yaml::parse(&Arc::from("t.yaml"), "? [a]\n: b\n", &mut diagnostics).unwrap();
        let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "t.yaml:1:3: error: a list as a key: Kubernetes' YAML reader refuses the document\n  hint: keys are strings"
            ]
        );
        let mut unknown = Vec::new();
        let decoded = decode::<BTreeMap<String, String>>(
            &docs[0],
            &docs[0].root,
            FieldPath::root(),
            &mut unknown,
        );
        assert!(decoded.unwrap().is_empty());
    }

    #[test]
    fn custom_tags_are_refused() {
        let (result, _) = decode_str::<Sample>("name: !Ref x\n");
        assert!(result.unwrap_err().contains("unsupported YAML tag `!Ref`"));
    }
}
