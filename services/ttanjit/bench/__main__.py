"""Run the benchmark sections: ``python -m ttanjit.bench [section ...]``."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
import traceback

import ttanjit.bench as pkg


def sections() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def load(path: str) -> dict[str, object]:
    """The figures already in ``path`` (an earlier run's other sections)."""
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
    except (OSError, ValueError):
        return {}
    return old if isinstance(old, dict) else {}


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m ttanjit.bench")
    p.add_argument("sections", nargs="*", help=f"default: all of {', '.join(sections())}")
    p.add_argument("--quick", action="store_true", help="smaller runs (smoke check)")
    p.add_argument("--out", help="the figures as JSON: each section run replaces its own entry, "
                                 "the others' stay (default bench-results.json; with --quick "
                                 "bench-results-quick.json, so a smoke run never stands in "
                                 "for a full one)")
    args = p.parse_args()
    args.out = args.out or ("bench-results-quick.json" if args.quick else "bench-results.json")
    chosen = [s.replace("-", "_") for s in args.sections] or sections()  # nats-cluster
    unknown = [s for s in chosen if s not in sections()]
    if unknown:
        p.error(f"no section {', '.join(unknown)} (there are: {', '.join(sections())})")
    results = load(args.out)
    when = results.get("started_at")
    started = dict(when) if isinstance(when, dict) else {}
    failed = False
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        started[name] = time.strftime("%Y-%m-%d %H:%M:%S")
        try:
            mod = importlib.import_module(f"ttanjit.bench.{name}")
            results[name] = mod.run(args)
        except Exception as exc:  # a failing section is reported, the rest still run
            failed = True
            print(f"section {name} failed: {exc!r}", file=sys.stderr)
            traceback.print_exc()  # where, not only what
            results[name] = {"error": repr(exc)}
        results["started_at"] = started  # by section; written after each one
        results.pop("started", None)  # the single start time of before
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, ensure_ascii=False, indent=2)
    print(f"\nfigures written to {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
