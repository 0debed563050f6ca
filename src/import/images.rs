//! Plugins an installation delivers in images, found again on import: a ConfigMap entry whose
//! `file:` location lies in a volume of the controller's Deployment that is an image volume, or
//! an emptyDir that an init container fills with a plain `cp` from its image, becomes an entry
//! with `image` instead of `location`. That covers what `render` writes in both delivery modes
//! and the init-container layout the plugins' own docs show (`/bin/sh -c "cp SRC DIR"`).

use serde_json::{Map, Value as Json, json};

use crate::diag::Diagnostic;
use crate::render::tables;
use crate::validate::location::{Location, parse_location, resolve_file};

/// The controller Deployment of one namespace (`None`: the input's only one, whatever its
/// namespace), as data.
pub(super) struct Deployment {
    pub namespace: Option<String>,
    pub object: Json,
}

/// Where a plugin's binary comes from, found in the Deployment.
#[derive(Debug, PartialEq)]
struct Found {
    reference: String,
    path: String,
    pull_policy: Option<String>,
    /// How: `image volume `x`` or `init container `x``.
    how: String,
}

/// Replaces the `location` of `plugin` by an `image` when the Deployment delivers it from one;
/// the message says what was found (a warning: the location is the renderer's from now on),
/// or why a location inside the renderer's image mounts cannot be imported (an error).
pub(super) fn recover(
    plugin: &mut Map<String, Json>,
    deployment: Option<&Json>,
) -> Option<Diagnostic> {
    let location = plugin.get("location")?.as_str()?.to_owned();
    let Ok(Location::File { path }) = parse_location(&location) else {
        return None;
    };
    let file = resolve_file(&path);
    let found = deployment.and_then(|d| find(d, &file));
    let Some(found) = found else {
        let inside = file.starts_with(&format!("{}/", tables::PLUGIN_IMAGES_DIR));
        return inside.then(|| {
            Diagnostic::error(format!(
                "`{location}` is inside `{}`, where rollouts-render mounts plugin images, and no controller Deployment of the input delivers it",
                tables::PLUGIN_IMAGES_DIR
            ))
            .hint("import the Deployment with the ConfigMap: `(kubectl get deployment argo-rollouts -n <namespace> -o yaml; echo ---; kubectl get configmap argo-rollouts-config -n <namespace> -o yaml) | rollouts-render import`")
        });
    };
    plugin.remove("location");
    let mut image = json!({"reference": found.reference, "path": found.path});
    if let Some(policy) = found.pull_policy {
        image["pullPolicy"] = json!(policy);
    }
    plugin.insert("image".to_owned(), image);
    Some(
        Diagnostic::warning(format!(
            "`{location}` comes from the {}: imported as an `image`",
            found.how
        ))
        .hint("rendered, its volume and location get rollouts-render's own names; pick the delivery with --plugin-image-delivery"),
    )
}

/// The controller container (`argo-rollouts`, else the first one).
fn controller(pod: &Json) -> Option<&Json> {
    let containers = pod["containers"].as_array()?;
    containers
        .iter()
        .find(|c| c["name"] == tables::RESOURCE_NAME)
        .or_else(|| containers.first())
}

/// `dir` and `file` as paths: the file inside the directory, as `/rest`.
fn inside(dir: &str, file: &str) -> Option<String> {
    let dir = dir.trim_end_matches('/');
    file.strip_prefix(dir)
        .filter(|rest| rest.starts_with('/') && rest.len() > 1)
        .map(str::to_owned)
}

fn find(deployment: &Json, file: &str) -> Option<Found> {
    let pod = &deployment["spec"]["template"]["spec"];
    let container = controller(pod)?;
    // The mount holding the file (mounts cannot nest in a way that matters here: the deepest
    // one wins, as in the container's file system).
    let mount = container["volumeMounts"]
        .as_array()?
        .iter()
        .filter(|m| m["subPath"].is_null() && m["subPathExpr"].is_null())
        .filter_map(|m| Some((m, inside(m["mountPath"].as_str()?, file)?)))
        .max_by_key(|(m, _)| m["mountPath"].as_str().map_or(0, str::len));
    let (mount, rest) = mount?;
    let volume_name = mount["name"].as_str()?;
    let volume = pod["volumes"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == volume_name)?;
    let policy = |value: &Json| value.as_str().map(str::to_owned);
    if let Some(reference) = volume["image"]["reference"].as_str() {
        return Some(Found {
            reference: reference.to_owned(),
            path: rest,
            pull_policy: policy(&volume["image"]["pullPolicy"]),
            how: format!("image volume `{volume_name}`"),
        });
    }
    if !volume["emptyDir"].is_object() {
        return None;
    }
    // An init container writing the file into the same volume with a plain copy.
    pod["initContainers"].as_array()?.iter().find_map(|init| {
        let mount_path = init["volumeMounts"]
            .as_array()?
            .iter()
            .find(|m| m["name"] == volume_name && m["subPath"].is_null())?["mountPath"]
            .as_str()?
            .trim_end_matches('/')
            .to_owned();
        let (source, target) = copy_command(init)?;
        let written = format!("{mount_path}{rest}");
        let basename = source.rsplit('/').next()?;
        let copies_there = target.trim_end_matches('/') == written
            || (target.trim_end_matches('/') == mount_path && rest == format!("/{basename}"));
        copies_there.then(|| Found {
            reference: init["image"].as_str().unwrap_or_default().to_owned(),
            path: source,
            pull_policy: policy(&init["imagePullPolicy"]),
            how: format!(
                "init container `{}`",
                init["name"].as_str().unwrap_or_default()
            ),
        })
    })
}

/// `cp SOURCE TARGET` as the container's command and args, or as the one script of
/// `sh -c` (split at spaces, nothing else of the shell's syntax): the absolute source and the
/// target.
fn copy_command(init: &Json) -> Option<(String, String)> {
    let words: Vec<&str> = init["command"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(init["args"].as_array().into_iter().flatten())
        .map(Json::as_str)
        .collect::<Option<_>>()?;
    let script;
    let words: Vec<&str> = match words.as_slice() {
        [shell, "-c", text] if matches!(*shell, "sh" | "/bin/sh" | "bash" | "/bin/bash") => {
            if text.contains(['\'', '"', '\\', '$', ';', '&', '|', '`', '>', '<', '*', '?']) {
                return None;
            }
            script = text.to_string();
            script.split_whitespace().collect()
        }
        _ => words,
    };
    match words.as_slice() {
        [cp, source, target] if matches!(*cp, "cp" | "/bin/cp") && source.starts_with('/') => {
            Some(((*source).to_owned(), (*target).to_owned()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(pod: Json) -> Json {
        json!({"spec": {"template": {"spec": pod}}})
    }

    #[test]
    fn an_image_volume_gives_its_reference_and_the_path_inside() {
        let d = deployment(json!({
            "containers": [{"name": "argo-rollouts", "volumeMounts": [
                {"name": "plugin-bin", "mountPath": "/home/argo-rollouts/plugin-bin"},
                {"name": "gw", "mountPath": "/home/argo-rollouts/plugin-images/gw", "readOnly": true}]}],
            "volumes": [{"name": "plugin-bin", "emptyDir": {}},
                {"name": "gw", "image": {"reference": "ghcr.io/x/gw@sha256:00", "pullPolicy": "Never"}}],
        }));
        let found = find(&d, "/home/argo-rollouts/plugin-images/gw/bin/gw").unwrap();
        assert_eq!(found.reference, "ghcr.io/x/gw@sha256:00");
        assert_eq!(found.path, "/bin/gw");
        assert_eq!(found.pull_policy.as_deref(), Some("Never"));
        assert_eq!(find(&d, "/home/argo-rollouts/plugin-images/gw"), None);
        assert_eq!(find(&d, "/home/argo-rollouts/plugin-bin/x"), None);
    }

    #[test]
    fn an_init_container_copy_gives_its_image_and_source() {
        // The layout of the Gateway API plugin's installation docs.
        let d = deployment(json!({
            "containers": [{"name": "argo-rollouts", "volumeMounts": [{"name": "gw", "mountPath": "/plugins"}]}],
            "initContainers": [{"name": "copy", "image": "ghcr.io/x/gw:v1",
                "command": ["/bin/sh", "-c"], "args": ["cp /bin/gw /plugins"],
                "volumeMounts": [{"name": "gw", "mountPath": "/plugins"}]}],
            "volumes": [{"name": "gw", "emptyDir": {}}],
        }));
        let found = find(&d, "/plugins/gw").unwrap();
        assert_eq!(
            (found.reference.as_str(), found.path.as_str()),
            ("ghcr.io/x/gw:v1", "/bin/gw")
        );
        assert_eq!(find(&d, "/plugins/other"), None);
        // The renderer's form: exec `cp SRC DST`, the volume mounted at the same path.
        let d = deployment(json!({
            "containers": [{"name": "argo-rollouts", "volumeMounts": [{"name": "v", "mountPath": "/m/v", "readOnly": true}]}],
            "initContainers": [{"name": "v", "image": "r/p@sha256:00", "imagePullPolicy": "Always",
                "command": ["cp", "/p", "/m/v/plugin"], "volumeMounts": [{"name": "v", "mountPath": "/m/v"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}],
        }));
        let found = find(&d, "/m/v/plugin").unwrap();
        assert_eq!(found.path, "/p");
        assert_eq!(found.pull_policy.as_deref(), Some("Always"));
        // Anything but a plain copy is not guessed at.
        for script in [
            "cp /bin/gw /plugins && chmod +x /plugins/gw",
            "cp -r /bin /plugins",
            "cp $SRC /plugins",
        ] {
            let d = deployment(json!({
                "containers": [{"name": "argo-rollouts", "volumeMounts": [{"name": "gw", "mountPath": "/plugins"}]}],
                "initContainers": [{"name": "copy", "image": "i", "command": ["sh", "-c", script],
                    "volumeMounts": [{"name": "gw", "mountPath": "/plugins"}]}],
                "volumes": [{"name": "gw", "emptyDir": {}}],
            }));
            assert_eq!(find(&d, "/plugins/gw"), None, "{script}");
        }
    }
}
