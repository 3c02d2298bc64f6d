#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The k loop's instruction mix from an ncu source page (`ncu -i R --page source --print-source sass
--csv`, as kernels/calls/moe-ab-call.sh writes sass-<tag>.csv.xz): the loop body is taken as the
instructions executed as often as the most executed wgmma (HGMMA / QGMMA) instruction (the N the
launch ran most); prints their count, the opcodes by frequency and the stall samples on them, then
those samples by stall reason and the body's instructions holding the most (each with its largest
reason). With --per-tile TILES_X_WARPS (the launch's tiles times its consumer warps, e.g. 21504 x 8
= 172032 for w13 at T = 4K: 896 experts x 24 tiles of 256 rows): also the samples on the
instructions executed exactly that often (the code a consumer warp runs once a tile: the epilogue
and the tile's set-up) beside those on every k loop body (every instruction executed as often as a
wgmma instruction of its block of code), and that code's opcodes by samples.
    python3 kernels/moe/sass-loop-ops.py sass-fp8.csv.xz [--per-tile 172032]
"""
import collections
import csv
import io
import lzma
import sys


def main(path, per_tile=0):
    try:
        raw = lzma.open(path, "rt") if path.endswith(".xz") else open(path)
        rows = list(csv.reader(raw))
    except (OSError, lzma.LZMAError, csv.Error, UnicodeDecodeError) as e:
        sys.exit("sass-loop-ops.py: %s: %s" % (path, e))
    head = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if head is None:
        sys.exit("sass-loop-ops.py: %s: no 'Address' header row (not an ncu --page source --csv page)" % path)
    h = rows[head]
    if "Instructions Executed" not in h or "Warp Stall Sampling (All Samples)" not in h:
        sys.exit("sass-loop-ops.py: %s:%d: the header lacks 'Instructions Executed' or the stall samples" %
                 (path, head + 1))
    ie, st = h.index("Instructions Executed"), h.index("Warp Stall Sampling (All Samples)")
    reasons = [i for i, c in enumerate(h) if c.startswith("stall_") and "Not Issued" not in c]
    data = []
    for r in rows[head + 1:]:
        if len(r) <= max([ie, st] + reasons) or not r[0].startswith("0x"):
            continue
        data.append((r[1].strip(), int(r[ie] or 0), int(r[st] or 0),
                     {h[i][6:]: int(r[i] or 0) for i in reasons}))
    mma = [d for d in data if "GMMA" in d[0]]
    if not mma:
        sys.exit("no wgmma instruction in " + path)
    n = max(d[1] for d in mma)
    body = [d for d in data if d[1] == n]
    op = lambda s: (s.split()[1] if s.startswith("@") else s.split()[0])
    ops = collections.Counter(op(d[0]) for d in body)
    print("loop body: %d instructions, each executed %d times; %d of %d stall samples" %
          (len(body), n, sum(d[2] for d in body), sum(d[2] for d in data)))
    for k, v in ops.most_common():
        print("  %-40s %d" % (k, v))
    by = collections.Counter()
    for d in body:
        by.update(d[3])
    total = sum(by.values()) or 1
    print("loop body's stall samples by reason:")
    for k, v in by.most_common():
        if v:
            print("  %-24s %7d  %5.1f %%" % (k, v, 100.0 * v / total))
    print("loop body's instructions with the most stall samples:")
    for d in sorted(body, key=lambda d: -d[2])[:12]:
        top = max(d[3], key=d[3].get) if d[3] else "-"
        print("  %7d  %-16s %s" % (d[2], top, d[0][:80]))
    if per_tile:
        loops = set(d[1] for d in mma)  # each k loop instance's count (one a token width)
        in_loops = sum(d[2] for d in data if d[1] in loops)
        tile = [d for d in data if d[1] == per_tile]
        in_tile = sum(d[2] for d in tile)
        print("k loop bodies (%d counts): %d samples; once-a-tile code (%d instructions, each %d times): "
              "%d samples (%.1f %% of the two)" % (len(loops), in_loops, len(tile), per_tile, in_tile,
                                                   100.0 * in_tile / max(1, in_loops + in_tile)))
        by_op = collections.Counter()
        n_op = collections.Counter()
        for d in tile:
            by_op[op(d[0])] += d[2]
            n_op[op(d[0])] += 1
        for k, v in by_op.most_common(12):
            print("  %-28s %4d instructions %7d samples" % (k, n_op[k], v))


if __name__ == "__main__":
    args = sys.argv[1:]
    per = 0
    if "--per-tile" in args:
        i = args.index("--per-tile")
        if i + 1 >= len(args) or not args[i + 1].isdigit() or int(args[i + 1]) <= 0:
            sys.exit("sass-loop-ops.py: --per-tile needs a positive count (tiles x consumer warps)")
        per = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit("usage: sass-loop-ops.py SASS.csv[.xz] [--per-tile TILES_X_CONSUMER_WARPS]")
    main(args[0], per)
