"""Frames both ways, from one schema (``proto/ttanjit/v1/client.proto``):

- JSON (default): the proto3 JSON mapping with original field names, read
  with ``orjson`` and checked against the ``ClientFrame`` descriptor (field
  names and types), written with ``orjson``;
- protobuf (subprotocol ``ttanjit.v1.proto``): ``ClientFrame`` /
  ``ServerFrame`` serialized; numbers inside ``Struct`` values (actions,
  events, views, patches, options) come back as integers when they are
  whole, and a list a server frame always has comes back ``[]`` when empty.

Every decode error is a :class:`FrameError` with a stable code. Sans-I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError

from ttanjit.gateway.errors import FrameError
from ttanjit.gateway.limits import MAX_CMD_ID
from ttanjit.v1.client_pb2 import ClientFrame, ServerFrame

JSON_SUBPROTOCOL = "ttanjit.v1.json"
PROTO_SUBPROTOCOL = "ttanjit.v1.proto"
MAX_STRING = 512

Check = Callable[[Any], bool]


def _is_str(v: Any) -> bool:
    return type(v) is str and len(v) <= MAX_STRING


def _is_uint32(v: Any) -> bool:
    return type(v) is int and 0 <= v < 2**32


def _is_number(v: Any) -> bool:
    """An int, or a finite float (a protobuf client's Value may carry NaN
    or ±Infinity, which neither JSON nor an echo of it can hold)."""
    return type(v) is int or (type(v) is float and math.isfinite(v))


def _is_object(v: Any) -> bool:
    return type(v) is dict


def _schema(desc: Descriptor) -> dict[str, Check]:
    out: dict[str, Check] = {}
    for f in desc.fields:
        if f.type == FieldDescriptor.TYPE_STRING:
            out[f.name] = _is_str
        elif f.type in (FieldDescriptor.TYPE_UINT32,):
            out[f.name] = _is_uint32
        elif f.type == FieldDescriptor.TYPE_DOUBLE:
            out[f.name] = _is_number
        elif f.type == FieldDescriptor.TYPE_MESSAGE and f.message_type.full_name == \
                "google.protobuf.Struct":
            out[f.name] = _is_object
        elif f.type == FieldDescriptor.TYPE_MESSAGE:
            sub = _schema(f.message_type)
            out[f.name] = lambda v, sub=sub: type(v) is dict and _conforms(v, sub)
        else:  # not used by ClientFrame; refuse rather than guess
            out[f.name] = lambda v: False
    return out


def _conforms(obj: dict[str, Any], schema: dict[str, Check]) -> bool:
    for k, v in obj.items():
        check = schema.get(k)
        if check is None or (v is not None and not check(v)):
            return False
    return True


CLIENT_SCHEMA = _schema(ClientFrame.DESCRIPTOR)
# A token string of any length (within the frame cap) gets through: an
# over-long one is the token check's to refuse, with bad_token (auth.py).
CLIENT_SCHEMA["token"] = lambda v: type(v) is str


_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def is_game_id(v: Any) -> bool:
    """A game id as the shards make them: one NATS subject token and one
    KV key (no ``.``, ``*`` or ``>``: a ``spectate`` of ``*`` subscribed to
    every game's public channel)."""
    return type(v) is str and _GAME_ID.fullmatch(v) is not None


def is_cmd_id(v: Any) -> bool:
    """An action's ``cmd_id``: 1 to ``MAX_CMD_ID`` characters."""
    return type(v) is str and 1 <= len(v) <= MAX_CMD_ID


# The fields of each client frame (docs/websocket.md 3, its client → server
# table; besides ``type``): another frame's field is unknown here too — one
# list of every frame's fields let ``queue``'s misspelt ``seat`` through, the
# player queued for the default size (bad input audit). An unknown type is
# refused later (``unknown_type``).
FIELDS: dict[str, frozenset[str]] = {kind: frozenset(fields) for kind, fields in {
    "hello": ("token", "resume"),
    "ping": ("client_ms",),
    "queue": ("game", "seats", "level"),
    "cancel_queue": (),
    "room_create": ("game", "seats", "options"),
    "room_join": ("code",),
    "room_leave": (),
    "room_options": ("options", "seats"),
    "room_add_bot": ("level",),
    "room_remove_bot": ("seat",),
    "room_start": (),
    "action": ("game_id", "cmd_id", "action", "seat"),
    "sync": ("game_id",),
    "ratings": (),
    "rematch": ("game_id",),
    "rematch_decline": ("game_id",),
    "rematch_state": ("game_id",),
    "emote": ("game_id", "emote"),
    "spectate": ("game_id",),
    "spectate_stop": (),
}.items()}


def _checked(obj: Any) -> dict[str, Any]:
    if type(obj) is not dict:
        raise FrameError("bad_frame")
    kind = obj.get("type")
    if type(kind) is not str or not kind:
        raise FrameError("bad_frame")
    fields = FIELDS.get(kind)
    if not _conforms(obj, CLIENT_SCHEMA) or (fields is not None and any(
            k not in fields and k != "type" and v is not None for k, v in obj.items())):
        # the error names the frame it refuses, as every other refusal does
        # (and an action's command, so its sender stops waiting for it)
        cmd_id = obj.get("cmd_id")
        raise FrameError("bad_frame", kind if _is_str(kind) else None,
                         cmd_id if _is_str(cmd_id) and cmd_id else None)
    if None in obj.values():
        obj = {k: v for k, v in obj.items() if v is not None}
    return obj


def decode_json(data: str | bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise FrameError("bad_frame") from None
    return _checked(obj)


# a dropped frame larger than this is not read for its cmd_id (a real
# action is a few hundred bytes; reading 16 KiB costs ~100 µs)
DROPPED_PEEK = 1024


def dropped_action(data: str | bytes, proto: bool) -> str | None:
    """The ``cmd_id`` of an ``action`` frame the rate limit drops, so it can
    be answered (its sender would wait for it, and send it again, same
    ``cmd_id``, on a later reconnect: a stale [1장 뽑기] landed on a later
    turn); None for any other frame, and for one over :data:`DROPPED_PEEK`
    bytes. The ``cmd_id`` is any the refusal of a frame read would carry
    (``_checked``: a non-empty string)."""
    if len(data) > DROPPED_PEEK:
        return None
    if proto:
        if isinstance(data, str):
            return None
        try:
            msg = ClientFrame.FromString(data)
        except (DecodeError, RuntimeError, ValueError):
            return None
        kind, cmd_id = msg.type, msg.cmd_id
    else:
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        if type(obj) is not dict:
            return None
        kind, cmd_id = obj.get("type"), obj.get("cmd_id")
    return cmd_id if kind == "action" and _is_str(cmd_id) and cmd_id else None


def whole_numbers(obj: Any) -> Any:
    """Struct numbers are doubles: 58.0 -> 58 (cards, rows, seats). One
    beyond a double's exact integers stays a double (as JSON's reader
    leaves it): as an int it could not be written to the record."""
    if type(obj) is float and obj.is_integer() and abs(obj) <= 2 ** 53:
        return int(obj)
    if type(obj) is dict:
        return {k: whole_numbers(v) for k, v in obj.items()}
    if type(obj) is list:
        return [whole_numbers(v) for v in obj]
    return obj


def decode_proto(data: bytes) -> dict[str, Any]:
    try:
        msg = ClientFrame.FromString(data)
    except (DecodeError, RuntimeError, ValueError):
        raise FrameError("bad_frame") from None
    try:
        # a Struct (action, options) holding NaN or ±Infinity has no JSON:
        # a malformed frame, not an error that ends the connection — named,
        # as in JSON, by its type and command (its sender stops waiting for
        # it: it came without them, fuzz finding)
        obj = json_format.MessageToDict(msg, preserving_proto_field_name=True)
    except (RuntimeError, ValueError, json_format.Error):
        raise FrameError("bad_frame", msg.type if _is_str(msg.type) and msg.type else None,
                         msg.cmd_id if _is_str(msg.cmd_id) and msg.cmd_id else None) from None
    for key in ("action", "options"):
        if key in obj:
            obj[key] = whole_numbers(obj[key])
    if "client_ms" in obj:
        obj["client_ms"] = float(obj["client_ms"])
    return _checked(obj)


def encode_json(frame: dict[str, Any]) -> str:
    return orjson.dumps(frame).decode()


_STRUCT = "google.protobuf.Struct"
SERVER_STRUCTS = frozenset(f.name for f in ServerFrame.DESCRIPTOR.fields
                           if f.message_type is not None and f.message_type.full_name == _STRUCT)


def encode_proto(frame: dict[str, Any]) -> bytes:
    """A server frame as protobuf: the same bytes as
    ``json_format.ParseDict(frame, ServerFrame())``, 1.7-2.7x cheaper for a
    game ``update`` (a 10-seat 줄줄이 벌점 view: ~260 µs instead of ~450;
    BENCHMARKS.md):
    ``Struct`` fields (views, patches, events, options, …) are filled by the
    runtime's ``Struct.update`` rather than ``ParseDict``'s walk in Python;
    the rest, small, still goes through ``ParseDict`` (its checks and
    errors unchanged)."""
    rest: dict[str, Any] = {}
    structs: list[tuple[str, dict[str, Any]]] = []
    events: list[Any] | None = None
    for k, v in frame.items():
        if type(v) is dict and k in SERVER_STRUCTS:
            structs.append((k, v))
        elif k == "events" and type(v) is list:
            events = v
        else:
            rest[k] = v
    msg = json_format.ParseDict(rest, ServerFrame())
    for k, v in structs:
        getattr(msg, k).update(v)
    for e in events or ():
        if type(e) is dict and type(e.get("event")) is dict:
            ev = e["event"]
            ge = json_format.ParseDict({k: v for k, v in e.items() if k != "event"},
                                       msg.events.add())
            ge.event.update(ev)
        else:
            json_format.ParseDict(e, msg.events.add())
    return msg.SerializeToString()


# The list fields a frame always has (docs/websocket.md 3), even empty: an
# empty repeated field does not travel in protobuf, so the decoder puts it
# back (an ``update`` with a ``patch`` has ``events: []``; a new player's
# ``welcome`` has ``ratings: []``).
ALWAYS_LISTS = {"update": ("events",), "spectate_update": ("events",),
                "welcome": ("ratings",), "ratings": ("ratings",)}


def decode_server_proto(data: bytes) -> dict[str, Any]:
    """For clients and tests: a binary server frame as the JSON dict."""
    obj = json_format.MessageToDict(ServerFrame.FromString(data),
                                    preserving_proto_field_name=True)
    out: dict[str, Any] = whole_numbers(obj)
    for key in ALWAYS_LISTS.get(out.get("type", ""), ()):
        out.setdefault(key, [])
    return out


def encode_client_proto(frame: dict[str, Any]) -> bytes:
    """For clients and tests: a client frame dict as a binary frame."""
    return json_format.ParseDict(frame, ClientFrame()).SerializeToString()
