"""Fault drills (issue 12): ``python -m ttanjit.chaos`` (``make chaos``).

- :mod:`ttanjit.chaos.natsplay`: scripted players that talk to the shards
  over NATS the way the gateway does (sync, command with a ``cmd_id``), for
  the NATS cluster tests and ``python -m ttanjit.bench nats_cluster``.
- :mod:`ttanjit.chaos.audit`: what a run is judged on, from the games'
  write-ahead records — accepted commands missing from the record (lost) and
  live games with no input for more than 3 s (stalled; across the fault,
  counted from the fault).
- :mod:`ttanjit.chaos.stack` and :mod:`ttanjit.chaos.drill`: a whole local
  stack (NATS cluster or single node, matchmaker replicas, two shards, bot
  workers, two gateways) and each fault under the load tester's players.
"""
