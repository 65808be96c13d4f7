"""Rules the Kubernetes manifests keep beyond the schemas. Usage: manifest_rules.py MANIFEST.yaml...

Every secret variable the broker reads (docs/configuration.md, "Secrets from files") is given as a *_FILE
path under a mounted Secret, never as a value; each container has liveness and readiness probes on
/healthz and /readyz, runs as non-root with a read-only root file system; the file store runs one
replica, a Deployment on Redis two or more.
"""
import sys

import yaml

SECRETS = {"BROKER_API_KEY", "BROKER_API_KEYS", "BROKER_SECRET", "BROKER_ENCRYPTION_KEY", "BROKER_WEBHOOK_SECRET", "BROKER_STORE"}


def main(*paths):
    problems = []
    for path in paths:
        for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
            if not doc or doc.get("kind") not in ("Deployment", "StatefulSet"):
                continue
            pod = doc["spec"]["template"]["spec"]
            mounts = {v["name"]: v for v in pod.get("volumes", [])}
            if doc["kind"] == "Deployment" and doc["spec"].get("replicas", 1) < 2:
                problems.append(f"{path}: a Deployment on Redis runs two replicas or more")
            if doc["kind"] == "StatefulSet" and doc["spec"].get("replicas") != 1:
                problems.append(f"{path}: the file store runs exactly one replica")
            if not pod.get("securityContext", {}).get("runAsNonRoot"):
                problems.append(f"{path}: the pod does not insist on a non-root user")
            for c in pod["containers"]:
                secret_dirs = [m["mountPath"] for m in c.get("volumeMounts", [])
                               if "secret" in mounts.get(m["name"], {}) and m.get("readOnly")]
                for env in c.get("env", []):
                    name = env["name"]
                    if name in SECRETS or name.endswith("_CLIENT_SECRET") or "valueFrom" in env:
                        problems.append(f"{path}: {name} is given in the environment; give {name}_FILE instead")
                    if name.endswith("_FILE") and (name[:-5] in SECRETS or name[:-5].endswith("_CLIENT_SECRET")):
                        if not any(env.get("value", "").startswith(d + "/") for d in secret_dirs):
                            problems.append(f"{path}: {name} is not a file of a Secret mounted read-only")
                for probe, path_ in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
                    if c.get(probe, {}).get("httpGet", {}).get("path") != path_:
                        problems.append(f"{path}: {probe} is not GET {path_}")
                if not c.get("securityContext", {}).get("readOnlyRootFilesystem"):
                    problems.append(f"{path}: the root file system is writable")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
