#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the kernels of two PTX files entry by entry (2026-12-02q: the default KDA prefill path
of a branch against main's, without a device).

  ptx-same.py A.ptx B.ptx [SUBSTR_A=SUBSTR_B ...]

Each entry's body is compared with its own name, the anonymous namespace's per-file hash, its
shared-variable names, labels and comments normalized. Without pairs, every entry whose normalized
name is in both files; a pair compares the one entry of A whose name holds SUBSTR_A with the one
of B holding SUBSTR_B (e.g. a kernel made a template: intra_kernelENS=intra_kernelILb0).
Prints SAME / DIFF per entry; exit status 1 if any differs.
Make the PTX with the build's nvcc line, `-ptx` instead of `-c` (a copy of the .cu beside the
original keeps its includes)."""
import re
import sys

ANON = re.compile(r'_ZN\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}')


def entries(path):
    text = open(path).read()
    out = {}
    for part in re.split(r'(?m)^(?=(?:\.visible |\.weak )?\.entry )', text):
        m = re.match(r'(?:\.visible |\.weak )?\.entry (\S+)\(', part)
        if not m:
            continue
        name = m.group(1)
        body = part.replace(name, 'ENTRY')
        body = re.sub(r'_ZZN\S+?E(\d+\w+)', r'SHARED_\1', body)
        body = ANON.sub('ANON', body)
        body = re.sub(r'__local_depot\d+', 'DEPOT', body)
        body = re.sub(r'\$L__BB\d+_\d+', 'L', body)
        body = re.sub(r'//.*', '', body)
        body = '\n'.join(l.rstrip() for l in body.splitlines() if l.strip())
        out[ANON.sub('', name)] = body
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    a, b = entries(sys.argv[1]), entries(sys.argv[2])
    pairs = [p.split('=', 1) for p in sys.argv[3:]]
    if not pairs:
        pairs = [(k, k) for k in a if k in b]
    bad = 0
    for sa, sb in pairs:
        ka = [k for k in a if sa in k]
        kb = [k for k in b if sb in k]
        if len(ka) != 1 or len(kb) != 1:
            print('AMBIGUOUS %s (%d) = %s (%d)' % (sa, len(ka), sb, len(kb)))
            bad = 1
            continue
        same = a[ka[0]] == b[kb[0]]
        bad |= not same
        print('%s %s = %s' % ('SAME' if same else 'DIFF', ka[0], kb[0]))
    return bad


if __name__ == '__main__':
    sys.exit(main())
