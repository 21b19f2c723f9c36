"""The matchmaker (DESIGN.md 3.2, issue 6): quick match, private rooms,
ratings and placement on shards. ``python -m ttanjit.matchmaker``.

``core`` (tickets, grouping, rooms, options) and ``ratings`` are sans-I/O;
``service`` owns gRPC, NATS, JetStream and the clock."""
