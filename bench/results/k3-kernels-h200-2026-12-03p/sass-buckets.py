import csv, lzma, sys
rows = list(csv.reader(lzma.open(sys.argv[1], 'rt')))
hdr = rows[1]; data = rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
S = [int(r[ix['Warp Stall Sampling (All Samples)']] or 0) for r in data]
E = [int(r[ix['Instructions Executed']] or 0) for r in data]
tot = sum(S); step = int(sys.argv[2])
for a in range(0, len(data), step):
    s = sum(S[a:a+step]); e = sum(E[a:a+step])
    if s > tot * 0.003:
        src = [data[i][ix['Source']].strip().split()[0] for i in range(a, min(a+step, len(data)))]
        hg = sum(1 for x in src if x.startswith('HGMMA'))
        print(f"{a:5d}-{a+step-1:5d} {100*s/tot:6.2f}% exec={e:11d} hgmma={hg}")
