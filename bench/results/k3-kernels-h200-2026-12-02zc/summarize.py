import csv,sys,re
lab={'fp8':'def','fp8-ab':'ab','fp8-ab2':'ab2','fp8-ab3':'ab3','fp8-ab4':'ab4'}
for fn in sys.argv[1:]:
    rows=list(csv.DictReader(open(fn)))
    print('##',fn.split('/')[-1])
    tab={}; cb={}
    for r in rows:
        if r['op']=='copy' and r['variant']=='memcpy': print('copy ceiling %s GB/s'%r['gbps']); continue
        if r['op'] not in ('mla_decode','b2b','copy_b2b'): continue
        m=re.search(r'b=(\d+) heads=(\d+) ctx=(\d+) t=(\d+)',r['shape'])
        if r['op']=='copy_b2b': cb[(last,r['variant'])]=float(r['time_us']); continue
        key=(m.group(2),m.group(1),m.group(3),m.group(4)); last=key
        d=tab.setdefault(key,{}).setdefault(r['variant'],{})
        d[r['op']]=(float(r['time_us']),float(r['pct_copy_bw']))
    for k,vs in tab.items():
        out=[]
        for v,d in vs.items():
            s='%s %.1f us %.1f%%'%(lab.get(v,v),*d['mla_decode'])
            if 'b2b' in d:
                c=cb.get((k,v)); s+=' | b2b %.1f us %.1f%% (%.1f%% same-bytes)'%(d['b2b'][0],d['b2b'][1],100*c/d['b2b'][0] if c else 0)
            out.append(s)
        print('H %s B %s %s t%s: '%k); print('   '+'\n   '.join(out))
