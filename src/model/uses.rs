//! The plugins that other objects of the input use: a Rollout's traffic router and step
//! plugins, an analysis template's metric plugins. These objects are not ours, so only the
//! few fields that name a plugin are read, leniently: anything else, or anything of another
//! shape, is left to the API server.

use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, IgnoredAny};

use crate::input::de;
use crate::input::located::Located;
use crate::input::yaml::Document;
use crate::spec::PluginKind;

/// A plugin named by a passthrough object.
#[derive(Clone, Debug)]
pub struct PluginUse {
    pub kind: PluginKind,
    /// The name as written: a map key (`trafficRouting.plugins.<name>`) or a `name:` value.
    pub name: Located<String>,
}

/// A value that is `None` when it does not have the expected shape.
struct Lenient<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self(T::deserialize(deserializer).ok()))
    }
}

impl<T> Lenient<T> {
    fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

type Named = BTreeMap<Located<String>, IgnoredAny>;

#[derive(serde::Deserialize)]
struct TypeMeta {
    #[serde(rename = "apiVersion")]
    api_version: Option<Lenient<String>>,
    kind: Option<Lenient<String>>,
}

#[derive(serde::Deserialize)]
struct Rollout {
    spec: Option<Lenient<RolloutSpec>>,
}

#[derive(serde::Deserialize)]
struct RolloutSpec {
    strategy: Option<Lenient<Strategy>>,
}

#[derive(serde::Deserialize)]
struct Strategy {
    canary: Option<Lenient<Canary>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Canary {
    traffic_routing: Option<Lenient<TrafficRouting>>,
    steps: Option<Lenient<Vec<Lenient<Step>>>>,
}

#[derive(serde::Deserialize)]
struct TrafficRouting {
    plugins: Option<Lenient<Named>>,
}

#[derive(serde::Deserialize)]
struct Step {
    plugin: Option<Lenient<StepPlugin>>,
}

#[derive(serde::Deserialize)]
struct StepPlugin {
    name: Option<Lenient<Located<String>>>,
}

#[derive(serde::Deserialize)]
struct AnalysisTemplate {
    spec: Option<Lenient<TemplateSpec>>,
}

#[derive(serde::Deserialize)]
struct TemplateSpec {
    metrics: Option<Lenient<Vec<Lenient<Metric>>>>,
}

#[derive(serde::Deserialize)]
struct Metric {
    provider: Option<Lenient<Provider>>,
}

#[derive(serde::Deserialize)]
struct Provider {
    plugin: Option<Lenient<Named>>,
}

/// The plugins a passthrough document uses; none unless it is an `argoproj.io` Rollout or
/// (Cluster)AnalysisTemplate.
pub fn plugin_uses(document: &Document) -> Vec<PluginUse> {
    let Some(meta) = de::decode_lenient::<TypeMeta>(document, &document.root) else {
        return Vec::new();
    };
    let text = |field: &Option<Lenient<String>>| {
        field
            .as_ref()
            .and_then(Lenient::get)
            .cloned()
            .unwrap_or_default()
    };
    let api_version = text(&meta.api_version);
    if api_version.split_once('/').map(|(group, _)| group) != Some("argoproj.io") {
        return Vec::new();
    }
    let mut uses = Vec::new();
    let mut named = |kind: PluginKind, names: Option<&Named>| {
        uses.extend(names.into_iter().flat_map(|names| {
            names.keys().map(move |name| PluginUse {
                kind,
                name: name.clone(),
            })
        }));
    };
    match text(&meta.kind).as_str() {
        "Rollout" => {
            let Some(rollout) = de::decode_lenient::<Rollout>(document, &document.root) else {
                return Vec::new();
            };
            let canary = deep(&rollout.spec)
                .and_then(|spec| deep(&spec.strategy))
                .and_then(|strategy| deep(&strategy.canary));
            let Some(canary) = canary else {
                return Vec::new();
            };
            named(
                PluginKind::TrafficRouter,
                deep(&canary.traffic_routing).and_then(|routing| deep(&routing.plugins)),
            );
            for step in deep(&canary.steps).into_iter().flatten() {
                if let Some(name) = step
                    .get()
                    .and_then(|step| deep(&step.plugin))
                    .and_then(|plugin| deep(&plugin.name))
                {
                    uses.push(PluginUse {
                        kind: PluginKind::Step,
                        name: name.clone(),
                    });
                }
            }
        }
        "AnalysisTemplate" | "ClusterAnalysisTemplate" => {
            let Some(template) = de::decode_lenient::<AnalysisTemplate>(document, &document.root)
            else {
                return Vec::new();
            };
            let metrics = deep(&template.spec).and_then(|spec| deep(&spec.metrics));
            for metric in metrics.into_iter().flatten() {
                named(
                    PluginKind::MetricProvider,
                    metric
                        .get()
                        .and_then(|metric| deep(&metric.provider))
                        .and_then(|provider| deep(&provider.plugin)),
                );
            }
        }
        _ => {}
    }
    uses
}

/// An optional lenient field, when present and of the right shape.
fn deep<T>(field: &Option<Lenient<T>>) -> Option<&T> {
    field.as_ref().and_then(Lenient::get)
}
