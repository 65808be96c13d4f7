"""Checks deploy/grafana/token-broker.json and deploy/prometheus/alerts.yml against real brokers' /metrics.

Usage: metric_names.py DASHBOARD.json ALERTS.yml METRICS.txt [METRICS.txt...]

The dashboard must be a Grafana dashboard whose panels all query the `${datasource}` variable, each with a
PromQL expression; every alert needs a summary and a description that names a metric of its expression.
Every metric name an expression uses (broker_* and process_*) must be one the scraped text declares
(`# TYPE`, with a histogram's _bucket, _sum and _count) or has a sample of; a label an expression matches
on must be one that metric's samples carry (or `instance` and `job`, which Prometheus adds), and where the
scrape shows every value of a label (ENUMERATED: routes, account statuses, upstream error causes), each
value or alternative an expression matches must be one of them. Prints what
is wrong and exits 1, or prints what it compared and exits 0.
"""
import json
import re
import sys

import yaml

NAME = re.compile(r"\b(?:broker|process)_[a-zA-Z0-9_]+\b")
SELECTOR = re.compile(r"\b((?:broker|process)_[a-zA-Z0-9_]+)\{([^}]*)\}")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*\"((?:[^\"\\]|\\.)*)\"")
ADDED_BY_PROMETHEUS = {"instance", "job"}
# Labels whose every value the scrape shows (each series is rendered from the start, zeros included, or the
# route was requested before the scrape): a value an expression matches on must be one of them.
ENUMERATED = {
    ("broker_http_requests_total", "route"), ("broker_http_request_duration_seconds_bucket", "route"),
    ("broker_http_request_duration_seconds_sum", "route"), ("broker_http_request_duration_seconds_count", "route"),
    ("broker_accounts", "status"), ("broker_upstream_errors_total", "target"), ("broker_upstream_errors_total", "cause"),
}


def exported(paths):
    """Metric names declared or sampled in the scraped texts, and the label names each sample carries."""
    names, labels, values = set(), {}, {}
    for path in paths:
        for line in open(path, encoding="utf-8"):
            line = line.strip()
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(maxsplit=3)
                names.add(name)
                if kind == "histogram":
                    names.update(name + suffix for suffix in ("_bucket", "_sum", "_count"))
            elif line and not line.startswith("#"):
                m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s", line)
                if not m:
                    continue
                names.add(m.group(1))
                pairs = MATCHER.findall(m.group(2) or "")
                labels.setdefault(m.group(1), set()).update(k for k, _, _ in pairs)
                for k, _, v in pairs:
                    values.setdefault((m.group(1), k), set()).add(v)
    return names, labels, values


def dashboard_expressions(path, problems):
    dash = json.load(open(path, encoding="utf-8"))
    for key in ("title", "uid", "panels", "templating", "schemaVersion"):
        if key not in dash:
            problems.append(f"{path}: no {key}")
    variables = {v.get("name") for v in dash.get("templating", {}).get("list", [])}
    if "datasource" not in variables:
        problems.append(f"{path}: no datasource variable")
    exprs, ids = [], set()
    for panel in dash.get("panels", []):
        pid = panel.get("id")
        if pid in ids:
            problems.append(f"{path}: panel id {pid} twice")
        ids.add(pid)
        grid = panel.get("gridPos", {})
        if grid.get("x", 0) + grid.get("w", 0) > 24:
            problems.append(f"{path}: panel {panel.get('title')!r} is wider than the grid")
        if panel.get("type") == "row":
            continue
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"{path}: panel {panel.get('title')!r} does not query ${{datasource}}")
        if not panel.get("description"):
            problems.append(f"{path}: panel {panel.get('title')!r} has no description")
        targets = panel.get("targets", [])
        if not targets or not all(t.get("expr") for t in targets):
            problems.append(f"{path}: panel {panel.get('title')!r} has a target without an expression")
        exprs += [(f"panel {panel.get('title')!r}", t.get("expr", "")) for t in targets]
    for v in dash.get("templating", {}).get("list", []):
        query = v.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        if v.get("type") == "query":
            exprs.append((f"variable {v.get('name')}", query or ""))
    return exprs


def alert_expressions(path, problems):
    rules = yaml.safe_load(open(path, encoding="utf-8"))
    exprs = []
    for group in rules.get("groups", []):
        for rule in group.get("rules", []):
            name = rule.get("alert") or rule.get("record")
            expr = rule.get("expr", "")
            annotations = rule.get("annotations", {})
            if rule.get("alert"):
                if not annotations.get("summary") or not annotations.get("description"):
                    problems.append(f"{path}: alert {name} lacks a summary or a description")
                used = set(NAME.findall(expr))
                if not used & set(NAME.findall(annotations.get("description", ""))):
                    problems.append(f"{path}: the description of {name} names none of its metrics {sorted(used)}")
            exprs.append((f"alert {name}", expr))
    return exprs


def main(dashboard, alerts, *scrapes):
    problems = []
    names, labels, values = exported(scrapes)
    exprs = dashboard_expressions(dashboard, problems) + alert_expressions(alerts, problems)
    used = set()
    for where, expr in exprs:
        for name in NAME.findall(expr):
            used.add(name)
            if name not in names:
                problems.append(f"{where}: {name} is not in any broker's /metrics")
        for name, matchers in SELECTOR.findall(expr):
            for key, op, value in MATCHER.findall(matchers):
                if name in labels and key not in labels[name] | ADDED_BY_PROMETHEUS:
                    problems.append(f"{where}: {name} has no label {key} (it has {sorted(labels[name])})")
                seen = values.get((name, key), set())
                if (name, key) not in ENUMERATED or op not in ("=", "=~"):
                    continue
                wanted = value.split("|") if op == "=~" else [value]
                for alternative in wanted:
                    if not any(re.fullmatch(alternative if op == "=~" else re.escape(alternative), v) for v in seen):
                        problems.append(f"{where}: {name}{{{key}=...}} never takes the value {alternative!r} (it takes {sorted(seen)})")
    if len(used) < 20:
        problems.append(f"only {len(used)} metric names found in the dashboard and the alerts: the extraction is broken")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(exprs)} expressions use {len(used)} metric names, all among the {len(names)} the brokers export")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
