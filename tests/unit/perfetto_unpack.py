#!/usr/bin/env python3
"""Writes a perfetto trace with every compressed_packets packet replaced by the packets it
holds, as Perfetto's trace processor reads them, so that protoc can decode the whole of it:

  perfetto_unpack.py IN.pftrace OUT.pftrace

TracePacket.compressed_packets (field 50) is a zlib stream of a Trace: Trace.packet fields.
Checks what the trace processor needs: every top-level field is a length-delimited packet, a
packet holding compressed_packets holds nothing else, its stream inflates whole and is itself
packets only, never compressed again. Prints the counts; exits 1 on the first fault."""
import sys
import zlib


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise ValueError("varint past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i
        if s > 63:
            raise ValueError("varint too long")


def packets(b):
    """(field start, bytes start, end) of each Trace.packet."""
    i = 0
    while i < len(b):
        h = i
        tag, i = varint(b, i)
        if tag != (1 << 3 | 2):
            raise ValueError(f"top-level field {tag >> 3} wire type {tag & 7}, not a packet")
        n, i = varint(b, i)
        if i + n > len(b):
            raise ValueError("packet past the end")
        yield h, i, i + n
        i += n


def only_compressed(b, s, e):
    """The compressed stream if the packet is compressed_packets alone, else None."""
    tag, i = varint(b, s)
    if tag != (50 << 3 | 2):
        return None
    n, i = varint(b, i)
    if i + n != e:
        raise ValueError("a compressed_packets packet holds other fields")
    return b[i:e]


def main():
    data = open(sys.argv[1], "rb").read()
    out = open(sys.argv[2], "wb")
    plain = chunks = inner = 0
    try:
        for h, s, e in packets(data):
            z = only_compressed(data, s, e)
            if z is None:
                plain += 1
                out.write(data[h:e])
                continue
            chunks += 1
            raw = zlib.decompress(z)
            for _, a, b_ in packets(raw):
                if only_compressed(raw, a, b_) is not None:
                    raise ValueError("compressed packets inside compressed packets")
                inner += 1
            out.write(raw)
    except (ValueError, zlib.error) as ex:
        print(f"perfetto_unpack: {sys.argv[1]}: {ex}", file=sys.stderr)
        return 1
    print(f"{plain} packets, {chunks} compressed chunks holding {inner}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
