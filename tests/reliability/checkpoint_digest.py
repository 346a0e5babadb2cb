#!/usr/bin/python3
"""Reads an attnlab checkpoint (safetensors) without attnlab and prints what a resume restores.

    tests/reliability/checkpoint_digest.py run/checkpoint.safetensors
    -> step=120 state=3f9a... (sha256 of every model.* and optim.* tensor's name, dtype, shape
       and bytes, and of the rng.* / data.position metadata)

Exit 1 with a message when the file is not a structurally valid safetensors file (short,
header length past the end, bad JSON, offsets outside the data). The checksum stored inside
is verified by attnlab itself when it loads the file (scripts/crash_safety does that too).
Used by scripts/crash_safety to compare an interrupted run with an uninterrupted one.
"""
import hashlib
import json
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    if len(data) < 8:
        raise ValueError(f"{len(data)} bytes: too short")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"header length {n} past the end ({len(data)} bytes)")
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        if not 0 <= begin <= end <= len(body):
            raise ValueError(f"tensor {name}: offsets {begin}..{end} outside {len(body)} bytes")
        tensors[name] = (e["dtype"], e["shape"], body[begin:end])
    return tensors, meta


def main():
    try:
        tensors, meta = read(sys.argv[1])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"unreadable: {sys.argv[1]}: {e}")
        return 1
    h = hashlib.sha256()
    for name in sorted(tensors):
        if name.startswith(("model.", "optim.")):
            dtype, shape, raw = tensors[name]
            h.update(f"{name}|{dtype}|{shape}|".encode() + raw)
    for key in sorted(meta):
        if key.startswith("rng.") or key == "data.position" or key == "step":
            h.update(f"{key}={meta[key]}|".encode())
    print(f"step={meta.get('step', '?')} state={h.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
