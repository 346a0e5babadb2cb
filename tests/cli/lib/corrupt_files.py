#!/usr/bin/python3
"""Writes one damaged copy of a safetensors file per corruption class (for bad_inputs.sh).

    tests/cli/lib/corrupt_files.py GOOD.safetensors OUTDIR
    -> OUTDIR/truncated.safetensors, OUTDIR/header-length.safetensors, ...

Each class is something a disk, a download or a hand edit can do to a file; the loader must
reject every one with a message naming the file (and never crash or read out of bounds).
"""
import json
import os
import struct
import sys


def split(data):
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def join(header, body):
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + body


def first_tensor(header):
    return next(k for k in header if k != "__metadata__")


def edit(data, change):
    header, body = split(data)
    change(header, header[first_tensor(header)])
    return join(header, body)


def set_key(key, value):
    return lambda header, entry: entry.__setitem__(key, value)


def main():
    good, out = sys.argv[1], sys.argv[2]
    data = open(good, "rb").read()
    header, body = split(data)
    entry = header[first_tensor(header)]
    begin = entry["data_offsets"][0]
    classes = {
        "zero-bytes": b"",
        "short": data[:5],
        "truncated": data[: len(data) // 2],
        "header-length": struct.pack("<Q", len(data)) + data[8:],
        "header-length-huge": struct.pack("<Q", 2**63 + 5) + data[8:],
        "bad-json": data[:8] + b"#" + data[9:],
        "not-object": join([1, 2, 3], b""),
        "overflow-shape": edit(data, set_key("shape", [2**62])),
        "overflow-product": edit(data, set_key("shape", [2**32, 2**32, 16])),
        "negative-dim": edit(data, set_key("shape", [-4, 4])),
        "fraction-dim": edit(data, set_key("shape", [3.5, 4])),
        "string-dim": edit(data, set_key("shape", ["4"])),
        "wrong-dtype": edit(data, set_key("dtype", "Q7")),
        "offsets-out-of-range": edit(data, set_key("data_offsets", [begin, len(body) + 64])),
        "offsets-reversed": edit(data, set_key("data_offsets", [begin + 8, begin])),
        "offsets-huge": edit(data, set_key("data_offsets", [2**64 - 4, 2**64 - 1])),
        "flipped-byte": data[:-1] + bytes([data[-1] ^ 0x40]),
        "metadata-not-strings": edit(
            data, lambda h, e: h.__setitem__("__metadata__", {"step": 5})
        ),
    }
    os.makedirs(out, exist_ok=True)
    for name, blob in classes.items():
        open(os.path.join(out, name + ".safetensors"), "wb").write(blob)
    os.makedirs(os.path.join(out, "a-directory.safetensors"), exist_ok=True)


if __name__ == "__main__":
    main()
