#!/usr/bin/env python3
"""Where a kernel's warp stall samples fall, from an ncu source page (`ncu -i REP --page source
--print-source sass --csv`, xz-compressed or not): the samples by SASS line range, and the
instructions run once a tile (executed count within 2 % of --per-tile) with their stall reasons.

  python3 kernels/moe/sass-regions.py PAGE.csv.xz --per-tile N [--step 250] [--sum A:B ...]
                                      [--producer A:B]

--per-tile: instructions executed once a tile by every consumer warp (tiles x consumer warps,
e.g. w13 at T = 4K: 896 x 24 x 8 = 172032; w2: 896 x 14 x 8 = 100352). --sum A:B (repeatable):
the samples of SASS lines A .. B - 1 (line = row of the page after its two header rows), as a
share of all samples and of the consumers' (all but --producer's lines). Used for
bench/results/k3-kernels-h100-2026-12-05m/README.md (issue 17, rounds 05m-05p)."""
import argparse, collections, csv, lzma, sys


def rows(path):
    try:
        f = lzma.open(path, 'rt') if path.endswith('.xz') else open(path, newline='')
        r = csv.reader(f)
        next(r, None)
        hdr = next(r, None)
    except (OSError, lzma.LZMAError, csv.Error, UnicodeDecodeError) as e:
        sys.exit(f'{path}: {e}')
    if not hdr:
        sys.exit(f'{path}: empty, or no header row: not an ncu source page (--page source --csv)')
    ix = {h: i for i, h in enumerate(hdr)}
    for need in ('Instructions Executed', 'Warp Stall Sampling (All Samples)', 'Source'):
        if need not in ix:
            sys.exit(f'{path}: no column "{need}": not an ncu source page (--page source --csv)')
    stalls = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
    try:
        body = list(r)
    except (OSError, lzma.LZMAError, csv.Error, UnicodeDecodeError) as e:
        sys.exit(f'{path}: {e}')
    for n, row in enumerate(body):
        if len(row) != len(hdr):
            continue
        def num(c):
            try:
                return int(row[ix[c]].replace(',', '') or 0)
            except ValueError:
                return 0
        src = row[ix['Source']].split()
        op = (src[1] if src and src[0].startswith('@') and len(src) > 1 else (src[0] if src else '?')).split('.')[0]
        yield n, num('Instructions Executed'), num('Warp Stall Sampling (All Samples)'), op, {s[6:]: num(s) for s in stalls}


def span(s):
    a, b = s.split(':')
    return int(a), int(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('page')
    ap.add_argument('--per-tile', type=int, required=True)
    ap.add_argument('--step', type=int, default=250)
    ap.add_argument('--sum', type=span, action='append', default=[])
    ap.add_argument('--producer', type=span)
    a = ap.parse_args()
    if a.per_tile <= 0 or a.step <= 0:
        sys.exit('--per-tile and --step: positive')
    total, byrange, sums, prod = 0, collections.Counter(), collections.Counter(), 0
    once, once_n, once_ops = collections.Counter(), 0, collections.Counter()
    for n, ex, smp, op, st in rows(a.page):
        total += smp
        byrange[n // a.step] += smp
        for sp in a.sum:
            if sp[0] <= n < sp[1]:
                sums[sp] += smp
        if a.producer and a.producer[0] <= n < a.producer[1]:
            prod += smp
        if ex and abs(ex / a.per_tile - 1) < 0.02:
            once.update(st)
            once_n += 1
            once_ops[op] += smp
    cons = total - prod
    print(f'samples: {total} ({cons} outside the producer lines)')
    for b in sorted(byrange):
        if byrange[b] >= 0.004 * total:
            print(f'  lines {b * a.step:6d}-{(b + 1) * a.step:6d} {byrange[b]:8d} {100 * byrange[b] / total:5.1f} %')
    for sp in a.sum:
        print(f'lines {sp[0]}-{sp[1]}: {sums[sp]} samples, {100 * sums[sp] / max(total, 1):.1f} % of all, '
              f'{100 * sums[sp] / max(cons, 1):.1f} % of the consumers\'')
    ot = sum(once.values())
    print(f'once a tile: {once_n} instructions, {ot} samples ({100 * ot / max(total, 1):.1f} % of all)')
    for s, v in once.most_common(6):
        print(f'  {s:22s} {v:8d} {100 * v / max(ot, 1):5.1f} %')
    print('  by op:', ', '.join(f'{k} {v}' for k, v in once_ops.most_common(10)))


if __name__ == '__main__':
    main()
