//! Rules across the documents of one input: controllers that would fight over the same
//! Rollouts, and Rollouts or AnalysisTemplates that use a plugin no RolloutManager of the input
//! configures (the controller would only fail at reconcile time, with "plugin … not configured
//! in configmap").

use std::collections::HashMap;
use std::sync::Arc;

use super::{Checked, Origin};
use crate::diag::{Diagnostic, Diagnostics, Location};
use crate::input::located::Site;
use crate::model::uses::PluginUse;
use crate::spec::{Manager, PluginKind};

fn locate(source: &Arc<str>, site: &Site) -> Location {
    Location {
        source: source.clone(),
        pos: Some(site.pos),
    }
}

impl Origin {
    fn describe(&self, manager: &Manager) -> String {
        format!(
            "`{}` ({}:{})",
            manager.name, self.source, self.metadata.pos.line
        )
    }
}

/// One controller per namespace, and a cluster-scoped controller only on its own.
pub fn check_managers(checked: &[&Checked], diagnostics: &mut Diagnostics) {
    let mut first_in_namespace: HashMap<&str, &Checked> = HashMap::new();
    for this in checked {
        let (manager, origin) = (&this.manager, &this.origin);
        if let Some(first) = first_in_namespace.get(manager.namespace.as_str()) {
            let (site, from) = match &origin.namespace {
                Some(site) => (site, ""),
                None => (&origin.metadata, " (the namespace given as an option)"),
            };
            diagnostics.push(
                Diagnostic::error(format!(
                    "a second RolloutManager in namespace `{}`{from}; the first is {}",
                    manager.namespace,
                    first.origin.describe(&first.manager)
                ))
                .at(locate(&origin.source, site))
                .path(site.path.clone())
                .hint("one namespace runs one Argo Rollouts controller; merge the two RolloutManagers"),
            );
            continue;
        }
        first_in_namespace.insert(&manager.namespace, this);
        if manager.namespace_scoped {
            continue;
        }
        if let Some(other) = checked.iter().find(|other| !std::ptr::eq(**other, *this)) {
            diagnostics.push(
                Diagnostic::error(format!(
                    "this RolloutManager is cluster-scoped (no `namespaceScoped: true`), so its controller watches every namespace, and {} is here too",
                    other.origin.describe(&other.manager)
                ))
                .at(locate(&origin.source, &origin.scope))
                .path(origin.scope.path.clone())
                .hint("two controllers would act on the same Rollouts: set `namespaceScoped: true` on all of them, or keep only one"),
            );
        }
    }
}

/// Warns about every plugin used in `source` that no manager of the input configures.
pub fn check_uses(
    managers: &[&Manager],
    source: &Arc<str>,
    uses: &[PluginUse],
    diagnostics: &mut Diagnostics,
) {
    if managers.is_empty() {
        return;
    }
    let configured = |kind: PluginKind, name: &str| {
        managers
            .iter()
            .any(|m| m.plugins.list(kind).iter().any(|p| p.name == name))
    };
    for used in uses {
        let name = used.name.as_str();
        if configured(used.kind, name) {
            continue;
        }
        let elsewhere = PluginKind::ALL
            .into_iter()
            .find(|kind| configured(*kind, name));
        let hint = match elsewhere {
            Some(kind) => format!(
                "it is configured as a {}; a {} belongs in `spec.plugins.{}`",
                kind.noun(),
                used.kind.noun(),
                used.kind.spec_field()
            ),
            None => format!(
                "add it to `spec.plugins.{}` of the RolloutManager, or the controller fails with \"plugin {name} not configured in configmap\"",
                used.kind.spec_field(),
            ),
        };
        diagnostics.push(
            Diagnostic::warning(format!(
                "uses the {} `{name}`, which no RolloutManager of this input configures",
                used.kind.noun(),
            ))
            .at(locate(source, &used.name.site))
            .path(used.name.site.path.clone())
            .hint(hint),
        );
    }
}
