import csv, lzma, sys
f = sys.argv[1]
rows = list(csv.reader(lzma.open(f, 'rt')))
hdr = rows[1]; data = rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith('stall_') and '(Not' not in h]
tot = sum(int(r[ix['Warp Stall Sampling (All Samples)']] or 0) for r in data)
print('instructions', len(data), 'samples', tot)
# top 60 by samples, in address order with index
recs = []
for i, r in enumerate(data):
    s = int(r[ix['Warp Stall Sampling (All Samples)']] or 0)
    ex = int(r[ix['Instructions Executed']] or 0)
    rs = {k: int(r[ix[k]] or 0) for k in reasons}
    recs.append((i, r[ix['Source']].strip(), s, ex, rs))
top = sorted(recs, key=lambda x: -x[2])[:int(sys.argv[2]) if len(sys.argv) > 2 else 50]
for i, src, s, ex, rs in sorted(top):
    rr = sorted(rs.items(), key=lambda kv: -kv[1])[:3]
    print(f"{i:5d} {100*s/tot:5.2f}% ex={ex:9d} {src[:60]:60s} " + ' '.join(f"{k[6:]}={v}" for k, v in rr if v))
