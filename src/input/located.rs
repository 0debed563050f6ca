//! Values that know where they were written.
//!
//! [`Located<T>`] is a decoded value with its [`Site`]: the field path that leads to it and the
//! position a diagnostic about it points at. [`crate::input::de`] fills the site in while it
//! decodes, so validation reports a problem at the value it is about without walking the
//! YAML tree again, and a path can only name a field that was actually decoded.
//!
//! Serde's data model has no room for a position, so the decoder hands each site over through
//! a per-thread table for the duration of one decoding (as serde-saphyr's `Spanned` does with
//! magic field names): the decoder stores the site and passes its index, the value's
//! `Deserialize` takes it back. Outside such a decoding (a `Located` read from JSON, say) the
//! site is empty.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use crate::diag::{FieldPath, Pos};

/// Where a decoded value is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Site {
    /// The field path to the value (`spec.plugins.metric[0].sha256`).
    pub path: FieldPath,
    /// Where diagnostics about the value point: the value itself when it is a scalar; for a
    /// mapping or a list, the key that introduces it (block collections start on the next
    /// line), or its first token when it has no key (a list item).
    pub pos: Pos,
}

/// A decoded value and its [`Site`]. Comparisons look at the value only, so a `Located<String>`
/// works as a map key.
#[derive(Clone, Debug, Default)]
pub struct Located<T> {
    /// The value itself (`inner`, so as not to hide the `value` fields of Kubernetes types
    /// behind `Deref`).
    pub inner: T,
    pub site: Site,
}

impl<T> Located<T> {
    pub fn new(inner: T, site: Site) -> Self {
        Self { inner, site }
    }
}

impl<T> std::ops::Deref for Located<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: PartialEq> PartialEq for Located<T> {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl<T: Eq> Eq for Located<T> {}

impl<T: PartialOrd> PartialOrd for Located<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.inner.partial_cmp(&other.inner)
    }
}

impl<T: Ord> Ord for Located<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.inner.cmp(&other.inner)
    }
}

/// The struct name the decoder recognises; no real type is called this.
pub(crate) const NAME: &str = "$rollouts_render::Located";
pub(crate) const SITE_FIELD: &str = "$site";
pub(crate) const VALUE_FIELD: &str = "$value";
const FIELDS: &[&str] = &[SITE_FIELD, VALUE_FIELD];

thread_local! {
    /// Sites handed from the decoder to `Located::deserialize`, while a decoding runs.
    static SITES: RefCell<Vec<Option<Site>>> = const { RefCell::new(Vec::new()) };
    static DECODING: Cell<bool> = const { Cell::new(false) };
}

/// Marks one decoding; sites can be handed over while it lives.
pub(crate) struct Decoding {
    outer: bool,
}

impl Decoding {
    pub(crate) fn start() -> Self {
        Self {
            outer: DECODING.with(|decoding| decoding.replace(true)),
        }
    }
}

impl Drop for Decoding {
    fn drop(&mut self) {
        DECODING.with(|decoding| decoding.set(self.outer));
        if !self.outer {
            SITES.with(|sites| sites.borrow_mut().clear());
        }
    }
}

/// Stores a site for the `Located` being decoded; returns its index.
pub(crate) fn hand_over(site: Site) -> u64 {
    SITES.with(|sites| {
        let mut sites = sites.borrow_mut();
        sites.push(Some(site));
        (sites.len() - 1) as u64
    })
}

fn take(index: u64) -> Site {
    SITES.with(|sites| {
        usize::try_from(index)
            .ok()
            .and_then(|i| sites.borrow_mut().get_mut(i).and_then(Option::take))
            .unwrap_or_default()
    })
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if !DECODING.with(Cell::get) {
            return T::deserialize(deserializer).map(|value| Located::new(value, Site::default()));
        }
        deserializer.deserialize_struct(NAME, FIELDS, LocatedVisitor(PhantomData))
    }
}

struct LocatedVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for LocatedVisitor<T> {
    type Value = Located<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a located value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut site = None;
        let mut value = None;
        while let Some(key) = map.next_key::<Cow<'_, str>>()? {
            match key.as_ref() {
                SITE_FIELD => site = Some(take(map.next_value()?)),
                VALUE_FIELD => value = Some(map.next_value()?),
                other => return Err(de::Error::unknown_field(other, FIELDS)),
            }
        }
        let value = value.ok_or_else(|| de::Error::missing_field(VALUE_FIELD))?;
        Ok(Located::new(value, site.unwrap_or_default()))
    }
}

/// The schema of the value: where a value was written is not part of it.
impl<T: JsonSchema> JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_decoding_a_located_value_is_the_plain_value() {
        let located: Located<String> = serde_json::from_str("\"x\"").unwrap();
        assert_eq!(located.inner, "x");
        assert_eq!(located.site, Site::default());
    }
}
