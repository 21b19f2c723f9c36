"""``make bench``: each section is a module here with ``run(args) -> dict``
that prints its own figures; the runner collects them into bench-results.json
(BENCHMARKS.md quotes them with the command)."""
