#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Class totals (predicted / measured - 1, %) of `k3sim trace validate --json` on stdin: each op's
median times its samples, summed by class. usage: k3sim trace validate DB --hw H --clock power --json | classes.py"""
import json,sys,collections
d=json.load(sys.stdin); m=collections.Counter(); p=collections.Counter()
for q in d['per_point']:
    m[q['class']]+=q['measured_s']*q['samples']; p[q['class']]+=q['predicted_s']*q['samples']
print(' '.join('%s %+.0f'%(k, 100*(p[k]/m[k]-1)) for k in m))
