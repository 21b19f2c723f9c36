"""The load tester (issue 9): ``ttanjit loadtest play|record|replay|report``.

Simulated players speak the real WebSocket protocol (docs/websocket.md) to a
gateway (local or ``--url`` of a remote deployment):

- :mod:`~ttanjit.loadtest.stats` — counters and round-trip samples per message
  type, the report (terminal table, JSON, Prometheus text for a Pushgateway);
- :mod:`~ttanjit.gateway.capture` (the gateway's, used here) — the capture
  file (``ttanjit.capture/1``, JSON lines: a header, then one line per frame
  with its timing and direction), written by the load tester and by a
  gateway sampling real sessions (``TTANJIT_RECORD_SAMPLE``,
  ``TTANJIT_RECORD_DIR``);
- :mod:`~ttanjit.loadtest.client` — one WebSocket connection that times its
  requests and can record every frame;
- :mod:`~ttanjit.loadtest.player` — a simulated player: quick match or a
  private room, plays with a bot policy from the view the server sends;
- :mod:`~ttanjit.loadtest.play` — N players ramped over time, live progress;
- :mod:`~ttanjit.loadtest.replay` — a capture replayed at ``--speed``, fanned
  out ``--fanout`` times, accept/refuse outcomes checked against the capture.
"""
