import csv, lzma, sys
rows = list(csv.reader(lzma.open(sys.argv[1], 'rt')))
hdr = rows[1]; data = rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith('stall_') and '(Not' not in h]
a, b = int(sys.argv[2]), int(sys.argv[3])
tot = sum(int(r[ix['Warp Stall Sampling (All Samples)']] or 0) for r in data)
for i in range(a, b):
    r = data[i]
    s = int(r[ix['Warp Stall Sampling (All Samples)']] or 0)
    ex = int(r[ix['Instructions Executed']] or 0)
    rs = {k: int(r[ix[k]] or 0) for k in reasons}
    rr = sorted(rs.items(), key=lambda kv: -kv[1])[:2]
    print(f"{i:5d} {100*s/tot:5.2f} {ex:8d} {r[ix['Source']].strip()[:70]:70s} " + ' '.join(f"{k[6:]}={v}" for k, v in rr if v))
