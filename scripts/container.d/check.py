#!/usr/bin/env python3
"""Checks of token-broker's container files, and helpers for the container-equivalent smoke test.

Called by scripts/container-check; each sub-command prints one PASS/FAIL line per
check and exits 1 when any failed.

  static ROOT --compose BIN --hadolint BIN   Dockerfile, .dockerignore, .env.example, compose file, docs
  spec ROOT                                  the run stage as JSON (user, env, entrypoint, health check, copies)
  libs ROOT BINARY                           the binary's shared libraries are all in the run stage
  envfile ROOT OUT SECRETS_OUT               the container's environment: image ENV + .env.example with test values
  http URL STATUS                            GET URL, exit 0 iff the status is STATUS
  snapshot DIR                               paths, modes, owners and SHA-256 of every file under DIR, as JSON
  logs STDERR_FILE SECRETS_FILE              the broker's stderr: JSON lines, the shutdown events, no secret
"""
import hashlib
import http.client
import json
import math
import os
import re
import secrets
import stat
import subprocess
import sys
import tempfile
import urllib.parse

# Names whose values are secrets: never given a value in the Dockerfile, .env.example or compose file.
# (BROKER_API_KEY_SCOPES names what keys may do, not a key.)
SECRET_NAME = re.compile(r"(SECRET|KEY(?!_SCOPES)|PASSWORD|PASSWD|TOKEN|CREDENTIAL)", re.I)
# Libraries debian:bookworm-slim has without installing anything (essential packages and apt's own
# dependencies), by the Debian package that ships them.
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}
# What the run stage must say; the smoke test relies on the same values.
REQUIRED_ENV = {"BROKER_HOST": "0.0.0.0", "BROKER_LOG_FORMAT": "json", "BROKER_DATA_DIR": "/data"}
# The shell environment Docker gives a debian image (the base image's PATH) before the Dockerfile's ENV.
DEBIAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Report:
    """Collects PASS/FAIL lines and the count of failures."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        print(f"{'PASS' if ok else 'FAIL'}  {name}{(' — ' + detail) if detail else ''}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok

    def note(self, text):
        print(f"NOTE  {text}", flush=True)

    def finish(self):
        print(f"COUNT {self.passed} {self.failed}", flush=True)
        sys.exit(1 if self.failed else 0)


# ---------------------------------------------------------------------------------------------
# Dockerfile

def parse_dockerfile(root):
    """The Dockerfile's instructions, parsed by BuildKit's own parser (the `dockerfile` package)."""
    import dockerfile  # installed by scripts/container-check into its venv
    return dockerfile.parse_file(os.path.join(root, "Dockerfile"))


def stages(commands):
    """Splits instructions into stages: [(from_command, [instructions])]."""
    result = []
    for command in commands:
        if command.cmd.upper() == "FROM":
            result.append((command, []))
        elif result:
            result[-1][1].append(command)
    return result


def env_pairs(command):
    """ENV/ARG key=value pairs of one instruction (ARG may have no value)."""
    values = list(command.value)
    if command.cmd.upper() == "ENV":
        return list(zip(values[0::2], values[1::2]))
    pairs = []
    for item in values:
        name, sep, value = item.partition("=")
        pairs.append((name, value if sep else None))
    return pairs


def run_stage_spec(root):
    """What the smoke test needs to run the binary the way the image does."""
    commands = parse_dockerfile(root)
    all_stages = stages(commands)
    _, final = all_stages[-1]
    spec = {"env": {}, "user": None, "entrypoint": None, "cmd": [], "healthcheck": None,
            "volumes": [], "expose": [], "copies": [], "apt": [], "stopsignal": None, "workdir": "/"}
    for command in final:
        name = command.cmd.upper()
        if name == "ENV":
            spec["env"].update(env_pairs(command))
        elif name == "USER":
            spec["user"] = command.value[0]
        elif name == "ENTRYPOINT":
            spec["entrypoint"] = list(command.value) if command.json else ["/bin/sh", "-c", " ".join(command.value)]
        elif name == "CMD":
            spec["cmd"] = list(command.value) if command.json else ["/bin/sh", "-c", " ".join(command.value)]
        elif name == "HEALTHCHECK":
            spec["healthcheck"] = {"flags": list(command.flags), "json": command.json, "test": list(command.value)}
        elif name == "VOLUME":
            spec["volumes"] += list(command.value)
        elif name == "EXPOSE":
            spec["expose"] += list(command.value)
        elif name == "STOPSIGNAL":
            spec["stopsignal"] = command.value[0]
        elif name == "WORKDIR":
            spec["workdir"] = command.value[0]
        elif name in ("COPY", "ADD"):
            source_stage = next((f.split("=", 1)[1] for f in command.flags if f.startswith("--from=")), None)
            spec["copies"].append({"from": source_stage, "sources": list(command.value[:-1]), "dest": command.value[-1]})
        elif name == "RUN":
            spec["apt"] += apt_packages(" ".join(command.value))
    return spec


def apt_packages(shell):
    """Package names given to `apt-get install` / `apt install` in a RUN line."""
    packages = []
    for segment in re.split(r"&&|\|\||;|\|", shell):
        words = segment.split()
        for i, word in enumerate(words):
            if word in ("apt-get", "apt") and "install" in words[i + 1:]:
                after = words[words.index("install", i) + 1:]
                packages += [w.split("=")[0] for w in after if not w.startswith("-")]
                break
    return packages


def check_dockerfile(report, root, hadolint):
    try:
        commands = parse_dockerfile(root)
    except Exception as error:  # the parser's own message names the line
        report.check("Dockerfile parses (BuildKit parser)", False, str(error))
        return None
    report.check("Dockerfile parses (BuildKit parser)", True, f"{len(commands)} instructions")

    config = os.path.join(os.path.dirname(__file__), "hadolint.yaml")
    lint = subprocess.run([hadolint, "--no-color", "--config", config, os.path.join(root, "Dockerfile")],
                          capture_output=True, text=True, timeout=60)
    findings = (lint.stdout + lint.stderr).strip()
    report.check("Dockerfile passes hadolint", lint.returncode == 0, findings.replace("\n", "; ") or "no findings")

    all_stages = stages(commands)
    names = set()
    bad_from = []
    images = []
    for from_command, _ in all_stages:
        words = list(from_command.value)
        image = words[0]
        if image.lower() in names:
            continue  # FROM an earlier stage
        images.append(image)
        tag = image.split("@")[0].rsplit("/", 1)[-1]
        if "@sha256:" not in image and (":" not in tag or tag.endswith(":latest") or "$" in image):
            bad_from.append(image)
        if len(words) >= 3 and words[1].upper() == "AS":
            names.add(words[2].lower())
    report.check("base images pinned by tag (no latest, no untagged)", not bad_from and bool(images),
                 ", ".join(bad_from) if bad_from else ", ".join(images))
    report.check("multi-stage build (toolchain not in the run image)", len(all_stages) >= 2,
                 f"{len(all_stages)} stages")

    spec = run_stage_spec(root)
    user = spec["user"]
    uid = (user or "").split(":")[0]
    report.check("run stage USER is a numeric non-root uid", uid.isdigit() and int(uid) != 0,
                 f"USER {user}" if user else "no USER in the run stage (runs as root)")

    health = spec["healthcheck"]
    health_ok = bool(health) and health["json"] and health["test"][:1] == ["CMD"] \
        and health["test"][1:] and os.path.basename(health["test"][1]) == "token-broker" \
        and health["test"][2:] == ["healthcheck"]
    report.check("HEALTHCHECK runs `token-broker healthcheck` (exec form, no curl)", health_ok,
                 " ".join(health["flags"] + health["test"]) if health else "no HEALTHCHECK")
    tools = [p for p in spec["apt"] if p in ("curl", "wget", "busybox")]
    report.check("run stage installs no curl/wget", not tools, ", ".join(tools) or "apt: " + " ".join(spec["apt"]))
    # The TLS client loads libssl.so.3 with dlopen, so readelf's NEEDED list (check_libs) cannot show it.
    tls = [p for p in ("libssl3", "ca-certificates") if p not in spec["apt"]]
    report.check("run stage installs libssl3 and ca-certificates (the TLS client dlopens libssl.so.3)", not tls,
                 "missing: " + ", ".join(tls) if tls else "apt: " + " ".join(spec["apt"]))

    report.check("EXPOSE 8080", "8080" in [e.split("/")[0] for e in spec["expose"]], " ".join(spec["expose"]))
    report.check("STOPSIGNAL SIGTERM", spec["stopsignal"] in ("SIGTERM", "15"), str(spec["stopsignal"]))

    entry = spec["entrypoint"] or []
    entry_ok = bool(entry) and os.path.basename(entry[0]) == "token-broker" and entry[0] not in ("/bin/sh", "sh")
    report.check("ENTRYPOINT exec form starts token-broker itself (PID 1, no shell or init)", entry_ok,
                 json.dumps(entry + spec["cmd"]))

    env = spec["env"]
    wrong = {k: env.get(k) for k, v in REQUIRED_ENV.items() if env.get(k) != v}
    report.check("ENV " + " ".join(f"{k}={v}" for k, v in REQUIRED_ENV.items()), not wrong,
                 f"got {wrong}" if wrong else "")
    port = env.get("BROKER_PORT", "8080")
    report.check("BROKER_PORT matches EXPOSE", port in [e.split("/")[0] for e in spec["expose"]], f"BROKER_PORT={port}")

    data_dir = env.get("BROKER_DATA_DIR")
    volume_index = next((i for i, c in enumerate(all_stages[-1][1])
                         if c.cmd.upper() == "VOLUME" and data_dir in c.value), None)
    prepared = volume_index is not None and any(
        c.cmd.upper() == "RUN" and re.search(r"(install -d|mkdir)[^&;]*\s" + re.escape(data_dir) + r"(\s|$)",
                                              " ".join(c.value))
        for c in all_stages[-1][1][:volume_index])
    report.check("VOLUME at BROKER_DATA_DIR, created with its owner before VOLUME", prepared,
                 f"VOLUME {' '.join(spec['volumes'])}")

    leaks = []
    for command in commands:
        if command.cmd.upper() in ("ENV", "ARG"):
            for name, value in env_pairs(command):
                if SECRET_NAME.search(name) and value not in (None, ""):
                    leaks.append(f"line {command.start_line}: {command.cmd} {name}")
        if command.cmd.upper() in ("COPY", "ADD") and any(".env" in s for s in command.value[:-1]):
            leaks.append(f"line {command.start_line}: copies an env file")
    report.check("no secret in ARG/ENV, no env file copied", not leaks, "; ".join(leaks))
    return spec


# ---------------------------------------------------------------------------------------------
# .dockerignore (Docker's rules: patterns match a path or any of its parents, the last match wins)

def dockerignore_patterns(root):
    patterns = []
    with open(os.path.join(root, ".dockerignore")) as handle:
        for line in handle:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            pattern = os.path.normpath(line[1:] if negate else line).lstrip("/")
            patterns.append((negate, re.compile(glob_to_regex(pattern))))
    return patterns


def glob_to_regex(pattern):
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    return "^" + out + "$"


def ignored(patterns, path):
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    result = False
    for negate, regex in patterns:
        if any(regex.match(p) for p in prefixes):
            result = not negate
    return result


def check_dockerignore(report, root):
    try:
        patterns = dockerignore_patterns(root)
    except FileNotFoundError:
        report.check(".dockerignore exists", False)
        return
    must_exclude = [".build/debug/token-broker", ".build-release/release/token-broker", ".build-tools/x",
                    "data/broker-secret", "data/accounts/x.json", "data/accounts.snapshot.jsonl",
                    "data/accounts.journal.1.jsonl", "data/backups/accounts-20260101T000000Z.snapshot.jsonl",
                    ".env", ".git/config", "Sources/.env"]
    leaked = [p for p in must_exclude if not ignored(patterns, p)]
    report.check(".dockerignore keeps .build*, data/, .env and .git out of the context", not leaked,
                 "sent: " + ", ".join(leaked) if leaked else f"{len(must_exclude)} paths excluded")
    tracked = subprocess.run(["git", "-C", root, "ls-files", "Package.swift", "Package.resolved", "Sources", "Tests"],
                             capture_output=True, text=True, timeout=30).stdout.split()
    missing = [p for p in tracked if ignored(patterns, p)]
    report.check(".dockerignore sends every tracked file the build COPYs", bool(tracked) and not missing,
                 ", ".join(missing[:5]) if missing else f"{len(tracked)} files")


# ---------------------------------------------------------------------------------------------
# .env.example

def read_env_example(root):
    entries = []
    with open(os.path.join(root, ".env.example")) as handle:
        for number, line in enumerate(handle, 1):
            text = line.rstrip("\n")
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            match = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(.*)", text)
            entries.append((number, match.group(1) if match else None, match.group(2) if match else text))
    return entries


def entropy(value):
    counts = {c: value.count(c) for c in set(value)}
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def check_env_example(report, root):
    try:
        entries = read_env_example(root)
    except FileNotFoundError:
        report.check(".env.example exists", False)
        return {}
    malformed = [f"line {n}" for n, name, _ in entries if name is None]
    names = [name for _, name, _ in entries if name]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    report.check(".env.example is KEY=value lines", not malformed and not duplicates,
                 "; ".join(malformed + [f"duplicate {d}" for d in duplicates]) or f"{len(names)} variables")
    suspicious = []
    for number, name, value in entries:
        if not name:
            continue
        if SECRET_NAME.search(name) and value:
            suspicious.append(f"{name} (line {number}) has a value")
        elif len(value) >= 20 and not value.startswith(("http://", "https://")) and entropy(value) > 3.5:
            suspicious.append(f"{name} (line {number}) looks random")
    report.check(".env.example holds no real secret (secret names empty)", not suspicious, "; ".join(suspicious))
    image_owned = [n for n in names if n in ("BROKER_HOST", "BROKER_DATA_DIR")]
    report.check(".env.example leaves BROKER_HOST and BROKER_DATA_DIR to the image", not image_owned,
                 ", ".join(image_owned))
    ignored_by_git = subprocess.run(["git", "-C", root, "check-ignore", "-q", ".env"], stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    report.check(".env is ignored by git", ignored_by_git, "" if ignored_by_git else "add a line `.env` to .gitignore")
    return {name: value for _, name, value in entries if name}


# ---------------------------------------------------------------------------------------------
# docker-compose.yml, through the real Docker Compose (v2) parser

def compose(binary, project, *args):
    return subprocess.run([binary, "--project-directory", project, "-f", os.path.join(project, "docker-compose.yml"),
                           *args], capture_output=True, text=True, timeout=60)


def seconds(duration):
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)(ms|h|m|s)", duration or ""):
        total += float(number) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total


def check_compose(report, root, binary, documented):
    version = subprocess.run([binary, "version", "--short"], capture_output=True, text=True, timeout=30).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="compose-check.") as project:
        # A copy of the project with .env made from .env.example: a developer's real .env is never read.
        with open(os.path.join(root, "docker-compose.yml")) as source, \
                open(os.path.join(project, "docker-compose.yml"), "w") as target:
            target.write(source.read())
        with open(os.path.join(root, ".env.example")) as source, open(os.path.join(project, ".env"), "w") as target:
            target.write(source.read())
        for profile in ([], ["--profile", "scale"], ["--profile", "tls"], ["--profile", "postgres"]):
            result = compose(binary, project, *profile, "config", "--quiet")
            label = f"{profile[1]} profile" if profile else "default profile"
            report.check(f"compose file valid, {label} (docker compose {version} config)", result.returncode == 0,
                         result.stderr.strip().replace("\n", "; "))
        raw = compose(binary, project, "--profile", "scale", "--profile", "tls", "--profile", "postgres", "config", "--no-interpolate",
                      "--no-env-resolution", "--format", "json")
        default_services = compose(binary, project, "config", "--services").stdout.split()
        variables = compose(binary, project, "--profile", "scale", "--profile", "tls", "--profile", "postgres", "config", "--variables",
                            "--format", "json")
    if raw.returncode != 0:
        report.check("compose file renders", False, raw.stderr.strip())
        return
    model = json.loads(raw.stdout)
    services = model.get("services", {})
    report.check("default profile runs only `broker`", default_services == ["broker"], " ".join(default_services))
    scale = sorted(n for n, s in services.items() if "scale" in (s.get("profiles") or []))
    report.check("scale profile: broker-a, broker-b, lb, redis", scale == ["broker-a", "broker-b", "lb", "redis"], " ".join(scale))
    lb = services.get("lb", {})
    lb_ports = [p.get("published") for p in lb.get("ports", [])]
    announced = {str((services.get(n, {}).get("environment") or {}).get("BROKER_PUBLIC_URL", "")) for n in ("broker-a", "broker-b")}
    report.check("scale profile: the load balancer listens where the replicas' BROKER_PUBLIC_URL points",
                 announced == {"http://localhost:8090"} and "8090" in [str(p) for p in lb_ports],
                 f"public URLs {sorted(announced)}, lb ports {lb_ports}")

    tls = sorted(n for n, s in services.items() if "tls" in (s.get("profiles") or []))
    report.check("tls profile: broker-tls, redis-tunnel", tls == ["broker-tls", "redis-tunnel"], " ".join(tls))
    tunnel = services.get("redis-tunnel", {})
    tunnel_config = str((model.get("configs") or {}).get("redis-tunnel", {}).get("content", ""))
    report.check("tls profile: the tunnel shares broker-tls's network and verifies the server's chain and name",
                 tunnel.get("network_mode") == "service:broker-tls" and "verifyChain = yes" in tunnel_config
                 and "checkHost = " in tunnel_config and "client = yes" in tunnel_config,
                 f"network_mode {tunnel.get('network_mode')}")

    postgres = sorted(n for n, s in services.items() if "postgres" in (s.get("profiles") or []))
    report.check("postgres profile: broker-pg, postgres", postgres == ["broker-pg", "postgres"], " ".join(postgres))
    database = services.get("postgres", {})
    database_ok = ":" in database.get("image", "") and "pg_isready" in " ".join((database.get("healthcheck") or {}).get("test", [])) \
        and not database.get("ports") \
        and str((services.get("broker-pg", {}).get("environment") or {}).get("BROKER_STORE", "")).startswith("postgres://")
    report.check("postgres profile: image pinned, pg_isready health check, no host port, broker-pg on postgres://", database_ok,
                 database.get("image", ""))

    grace = float(documented.get("BROKER_SHUTDOWN_GRACE") or 10)
    for name in ("broker", "broker-a", "broker-b", "broker-pg"):
        service = services.get(name, {})
        problems = []
        env_files = [os.path.basename(e.get("path", "")) for e in service.get("env_file", [])]
        if ".env" not in env_files:
            problems.append("env_file .env missing")
        data = [v for v in service.get("volumes", []) if v.get("target") == "/data"]
        if not data or data[0].get("type") != "volume" or data[0].get("source") not in model.get("volumes", {}):
            problems.append("/data is not a declared named volume")
        if service.get("read_only") is not True:
            problems.append("read_only is not true")
        if not any(t.split(":")[0] == "/tmp" for t in service.get("tmpfs", [])):
            problems.append("no tmpfs at /tmp")
        if service.get("restart") not in ("unless-stopped", "always", "on-failure"):
            problems.append(f"restart {service.get('restart')}")
        test = (service.get("healthcheck") or {}).get("test", [])
        if test[:1] != ["CMD"] or os.path.basename(test[1] if len(test) > 1 else "") != "token-broker" \
                or test[2:] != ["healthcheck"]:
            problems.append(f"healthcheck {test}")
        if service.get("init") is True:
            problems.append("init: true puts another process at PID 1")
        if seconds(service.get("stop_grace_period")) <= grace:
            problems.append(f"stop_grace_period {service.get('stop_grace_period')} is not above {grace:g}s")
        if not any(p.get("target") == 8080 for p in service.get("ports", [])):
            problems.append("container port 8080 not published")
        store = str((service.get("environment") or {}).get("BROKER_STORE", ""))
        if name in ("broker-a", "broker-b") and not store.startswith("redis://"):
            problems.append("BROKER_STORE is not redis://")
        report.check(f"compose `{name}`: env file, /data volume, read-only root, restart, health, grace",
                     not problems, "; ".join(problems))

    redis = services.get("redis", {})
    image = redis.get("image", "")
    redis_ok = ":" in image and not image.endswith(":latest") \
        and "redis-cli" in " ".join((redis.get("healthcheck") or {}).get("test", [])) and not redis.get("ports")
    report.check("compose `redis`: image pinned by tag, redis-cli ping health check, no host port", redis_ok, image)

    unpinned = [f"{n}: {s['image']}" for n, s in services.items()
                if "build" not in s and (":" not in s.get("image", "") or s["image"].endswith(":latest"))]
    report.check("compose images pinned by tag", not unpinned, "; ".join(unpinned))

    inline = [f"{n}.{k}" for n, s in services.items() for k, v in (s.get("environment") or {}).items()
              if SECRET_NAME.search(k) and v and not re.fullmatch(r"\$\{[^}]+\}", str(v))]
    report.check("compose file carries no secret value inline", not inline, ", ".join(inline))

    referenced = sorted(json.loads(variables.stdout or "{}").keys()) if variables.returncode == 0 else None
    undocumented = [v for v in referenced or [] if v not in documented]
    report.check("compose uses only variables documented in .env.example", referenced is not None and not undocumented,
                 ", ".join(undocumented) or (f"{len(referenced)} referenced" if referenced is not None
                                             else variables.stderr.strip()))


# ---------------------------------------------------------------------------------------------
# Operations docs

def check_docs(report, root, documented, spec):
    texts = []
    for path in ("README.md", "docs/configuration.md", "docs/deployment.md"):
        try:
            with open(os.path.join(root, path)) as handle:
                texts.append(handle.read())
        except FileNotFoundError:
            pass
    text = "\n".join(texts)
    wanted = sorted(set(documented) | {k for k in (spec or {}).get("env", {}) if k.startswith("BROKER_")})
    missing = [name for name in wanted if f"`{name}`" not in text]
    report.check("every container variable is documented in README.md or docs/", not missing,
                 ", ".join(missing) or f"{len(wanted)} variables")


# ---------------------------------------------------------------------------------------------
# Shared libraries

def needed_libraries(binary):
    output = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, timeout=30, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", output)


def debian_package_of(soname):
    for directory in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib/aarch64-linux-gnu",
                      "/usr/lib/aarch64-linux-gnu", "/lib"):
        path = os.path.join(directory, soname)
        if os.path.exists(path):
            for candidate in (path, os.path.realpath(path)):
                result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, timeout=30)
                if result.returncode == 0:
                    return result.stdout.split(":")[0]
    return None


def check_libs(report, root, binary):
    spec = run_stage_spec(root)
    available = BASE_IMAGE_PACKAGES | set(spec["apt"])
    libraries = needed_libraries(binary)
    swift_runtime = [lib for lib in libraries if lib.startswith(("libswift", "libFoundation", "libdispatch",
                                                                 "lib_Foundation", "libBlocksRuntime"))]
    report.check("binary links the Swift runtime statically (--static-swift-stdlib)", not swift_runtime,
                 ", ".join(swift_runtime) or "NEEDED: " + " ".join(libraries))
    missing = []
    for lib in libraries:
        package = debian_package_of(lib)
        if package is None or package not in available:
            missing.append(f"{lib} ({package or 'no Debian package'})")
    report.check("run stage provides every shared library the binary loads", not missing,
                 "missing: " + ", ".join(missing) if missing else "base + " + " ".join(spec["apt"]))


# ---------------------------------------------------------------------------------------------
# Smoke-test helpers

def write_envfile(root, out, secrets_out):
    """The container's environment, as Docker builds it: the base image's PATH, HOSTNAME and HOME,
    then the Dockerfile's ENV, then the env file (here .env.example with test values), NUL-separated."""
    spec = run_stage_spec(root)
    env = {"PATH": DEBIAN_PATH, "HOSTNAME": "token-broker-smoke", "HOME": "/nonexistent"}
    env.update(spec["env"])
    test_secrets = []
    for _, name, value in read_env_example(root):
        if not name:
            continue
        if not value and name == "BROKER_API_KEYS":
            # A list of name:key entries; the key is the secret the scans look for.
            key = "smoke-" + secrets.token_hex(24)
            value = "smoke:" + key
            test_secrets.append(key)
        elif not value and SECRET_NAME.search(name) and name != "BROKER_SECRET":
            # BROKER_SECRET stays unset so the broker generates /data/broker-secret, as a fresh install does.
            value = "smoke-" + secrets.token_hex(24)
            test_secrets.append(value)
        elif not value and name.endswith("_CLIENT_ID"):
            value = "smoke-" + name.lower().replace("_", "-")
        if value:
            env[name] = value
    with open(out, "wb") as handle:
        for name, value in env.items():
            handle.write(f"{name}={value}".encode() + b"\0")
    with open(secrets_out, "w") as handle:
        handle.write("\n".join(test_secrets) + "\n")
    print(json.dumps({k: ("<test secret>" if v in test_secrets else v) for k, v in env.items()}))


def http_get(url, expected):
    parsed = urllib.parse.urlsplit(url)
    try:
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=2)
        connection.request("GET", parsed.path or "/")
        response = connection.getresponse()
        body = response.read(512).decode(errors="replace")
        print(f"{response.status} {body.strip()}")
        return 0 if response.status == int(expected) else 1
    except OSError as error:
        print(f"no answer: {error}")
        return 1


def snapshot(directory):
    entries = {}
    for base, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(base, name)
            info = os.lstat(path)
            entry = {"mode": oct(stat.S_IMODE(info.st_mode)), "uid": info.st_uid, "gid": info.st_gid,
                     "dir": stat.S_ISDIR(info.st_mode)}
            if stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    entry["sha256"] = hashlib.sha256(handle.read()).hexdigest()
            entries[os.path.relpath(path, directory)] = entry
    print(json.dumps(entries, sort_keys=True))


def check_logs(stderr_file, secrets_file):
    report = Report()
    with open(stderr_file, errors="replace") as handle:
        lines = [line.rstrip("\n") for line in handle if line.strip()]
    objects, bad = [], []
    for number, line in enumerate(lines, 1):
        try:
            value = json.loads(line)
            if not isinstance(value, dict) or not {"ts", "level", "msg"} <= value.keys():
                raise ValueError("not an object with ts, level, msg")
            objects.append(value)
        except ValueError as error:
            bad.append(f"line {number}: {error}: {line[:80]}")
    report.check("every stderr line is a JSON log object (ts, level, msg)", bool(lines) and not bad,
                 "; ".join(bad[:3]) or f"{len(lines)} lines")
    messages = [o["msg"] for o in objects]
    listening = next((o for o in objects if o["msg"] == "listening"), None)
    report.check("log: `listening` on 0.0.0.0:8080 with data_dir /data",
                 bool(listening) and listening.get("host") == "0.0.0.0" and listening.get("port") == 8080
                 and listening.get("data_dir") == "/data", json.dumps(listening) if listening else "no such line")
    term = any(o["msg"] == "signal received" and o.get("signal") == "SIGTERM" for o in objects)
    report.check("log: SIGTERM received, then `stopped`", term and "stopped" in messages
                 and messages.index("stopped") > messages.index("signal received"), " → ".join(messages[-4:]))
    with open(secrets_file) as handle:
        values = [v for v in handle.read().split() if v]
    text = "\n".join(lines)
    leaked = sum(1 for v in values if v in text)
    report.check("no secret from the env file appears in the logs", leaked == 0,
                 f"{leaked} of {len(values)} secrets found" if leaked else f"{len(values)} secrets checked")
    report.finish()


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "static":
        root = argv[2]
        options = dict(zip(argv[3::2], argv[4::2]))
        report = Report()
        spec = check_dockerfile(report, root, options["--hadolint"])
        check_dockerignore(report, root)
        documented = check_env_example(report, root)
        check_compose(report, root, options["--compose"], documented)
        check_docs(report, root, documented, spec)
        report.finish()
    elif command == "spec":
        print(json.dumps(run_stage_spec(argv[2])))
    elif command == "libs":
        report = Report()
        check_libs(report, argv[2], argv[3])
        report.finish()
    elif command == "envfile":
        write_envfile(argv[2], argv[3], argv[4])
    elif command == "http":
        sys.exit(http_get(argv[2], argv[3]))
    elif command == "snapshot":
        snapshot(argv[2])
    elif command == "logs":
        check_logs(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
