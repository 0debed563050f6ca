"""Validate rendered manifests with kubernetes-validate (the Kubernetes
OpenAPI schemas as JSON Schema), strict mode (unknown fields rejected),
against Kubernetes 1.33 and the newest version the package knows.

Usage: validate.py FILE...   (multi-document YAML streams)
Prints one line per failure and a closing count; exit 1 on any failure.
Kinds without a schema in the package (CRDs: argoproj.io,
monitoring.coreos.com, ...) are skipped and listed; a built-in API group
without a schema is a failure.
"""
import functools
import json
import sys
from collections import Counter

import yaml
from kubernetes_validate import utils
from kubernetes_validate.version import __version__

# validate() reloads the large _definitions.json on every call; the schema
# files never change during a run.
utils.schema_contents = functools.lru_cache(maxsize=None)(utils.schema_contents)

OLDEST = "1.33"


def builtin_group(api_version):
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return group == "" or "." not in group or group.endswith(".k8s.io")


def main(files):
    versions = [OLDEST, utils.latest_version()]
    seen = {}
    passed = failed = 0
    skipped = Counter()
    for path in files:
        with open(path, encoding="utf-8") as f:
            try:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                print(f"FAIL {path}: YAML: {e}")
                failed += 1
                continue
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
                print(f"FAIL {path} document {i}: not a Kubernetes object")
                failed += 1
                continue
            name = doc.get("metadata", {}).get("name", "?")
            what = f"{doc['kind']} {doc['apiVersion']}"
            for version in versions:
                key = (json.dumps(doc, sort_keys=True, default=str), version)
                if key not in seen:
                    seen[key] = check(doc, version)
                outcome = seen[key]
                if outcome is None:
                    passed += 1
                elif outcome == "no schema":
                    if builtin_group(doc["apiVersion"]):
                        print(f"FAIL {path} document {i} ({what} {name}): no schema in Kubernetes {version}")
                        failed += 1
                    else:
                        skipped[what] += 1
                else:
                    print(f"FAIL {path} document {i} ({what} {name}), Kubernetes {version}: {outcome}")
                    failed += 1
    if skipped:
        kinds = ", ".join(f"{k} x{n}" for k, n in sorted(skipped.items()))
        print(f"kubernetes-validate {__version__}: no schema, skipped: {kinds}")
    print(f"kubernetes-validate: {passed} passed, {failed} failed, {sum(skipped.values())} skipped "
          f"(strict, Kubernetes {' and '.join(versions)})")
    return 1 if failed or passed == 0 else 0


def check(doc, version):
    try:
        utils.validate(doc, version, strict=True)
        return None
    except utils.SchemaNotFoundError:
        return "no schema"
    except utils.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        return f"{where}: {e.message}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
