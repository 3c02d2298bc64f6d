#!/usr/bin/env python3
"""Metric values of an Nsight Compute report (.ncu-rep) without ncu (it is not on the dev machine).

usage: ncu-rep-metrics.py REPORT [SUBSTRING ...] [--opcodes]

Prints `name value` for every metric of each profiled kernel whose name holds one of the
substrings (all metrics without any); --opcodes also prints sass__inst_executed_per_opcode per
opcode. The report is read as the ncu of the H200 machines (CUDA 13.0) writes it: a 4-byte-length-prefixed sequence of protobuf
messages, a metric-name table (repeated strings) followed by the kernel's result message, whose
field 13 entries are (name index, value message). Only the wire format is assumed: no schema.
Written for issue 17's round u (bench/results/k3-kernels-h200-2026-12-01u/README.md).
"""
import struct
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def parse(b):
    """One protobuf message as [(field, wire type, value)]; ValueError if it is not one."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, t = key >> 3, key & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v = struct.unpack_from("<d", b, i)[0]
            i += 8
        elif t == 5:
            v = struct.unpack_from("<f", b, i)[0]
            i += 4
        elif t == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d" % t)
        if f == 0 or i > len(b):
            raise ValueError("not a message")
        out.append((f, t, v))
    return out


def tryparse(b):
    try:
        return parse(b)
    except (ValueError, IndexError, struct.error):
        return None


def blocks(d):
    pos, out = 4, []
    while pos + 4 <= len(d):
        n = struct.unpack_from("<I", d, pos)[0]
        if n <= 0 or pos + 4 + n > len(d):
            break
        out.append(d[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def results(path):
    """[(kernel name, {metric: (scalar values, raw entry)})] of the report."""
    bl = blocks(open(path, "rb").read())
    out = []
    for i, b in enumerate(bl):
        p = tryparse(b)
        if not p or len(p) > 6 or {4, 5, 6} - {f for f, _, _ in p}:
            continue
        table = tryparse([v for f, _, v in p if f == 4][0])
        if not table or i + 1 >= len(bl):
            continue
        try:
            names = [v.decode() for _, _, v in table]
        except (AttributeError, UnicodeDecodeError):
            continue
        r = tryparse(bl[i + 1])
        if not r:
            continue
        kernel = next((v.decode(errors="replace") for f, t, v in r if f == 7 and t == 2), "?")
        res = {}
        for f, t, v in r:
            e = tryparse(v) if f == 13 and t == 2 else None
            if not e:
                continue
            idx = [x for ff, _, x in e if ff == 1]
            val = [x for ff, tt, x in e if ff == 2 and tt == 2]
            if not idx or not val or idx[0] >= len(names):
                continue
            vv = tryparse(val[0]) or []
            res[names[idx[0]]] = ([x for _, tt, x in vv if tt != 2], e)
        out.append((kernel, res))
    return out


def per_opcode(entry):
    rows = []
    for f, t, x in entry:
        q = tryparse(x) if f == 3 and t == 2 else None
        if q and len(q) >= 2:
            key = tryparse(q[0][2])
            val = tryparse(q[1][2])
            if key and val:
                rows.append((key[0][2].decode(errors="replace"), val[0][2]))
    return rows


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    subs = [a for a in argv[2:] if a != "--opcodes"]
    for kernel, res in results(argv[1]):
        print("== " + kernel)
        for k in sorted(res):
            if not subs or any(s in k for s in subs):
                print(k, " ".join("%.6g" % v if isinstance(v, float) else str(v) for v in res[k][0]))
        if "--opcodes" in argv and "sass__inst_executed_per_opcode" in res:
            for op, v in per_opcode(res["sass__inst_executed_per_opcode"][1]):
                print("opcode %-12s %.0f" % (op, v))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
