"""The WebSocket gateway (DESIGN.md 3.3, docs/websocket.md):
``python -m ttanjit.gateway``.

Sans-I/O parts: ``auth`` (guest tokens), ``codec`` (frames both ways, one
schema: ``proto/ttanjit/v1/client.proto``), ``limits`` (rate limiting),
``session`` (frame sequence numbers and the resume mapping). The asyncio
layer: ``conn`` (one player's connection), ``app`` (FastAPI for HTTP plus a
plain ASGI WebSocket path), ``__main__`` (uvicorn)."""
