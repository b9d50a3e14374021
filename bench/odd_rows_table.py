#!/usr/bin/env python3
# Issue 12: offsets and odd rows against the aligned row of 4096, per pattern
# and dtype, from a jitfuse_sweep --jsonl file:
#   python3 bench/odd_rows_table.py sweep_jitfuse.jsonl
import json,sys
pts={}
for l in open(sys.argv[1]):
    d=json.loads(l); pts[d['id']]=d
def g(p,dt,H,R,o):
    d=pts.get(f"{p}/{dt}/H{H}/R{R}/o{o}")
    return d['gbs'] if d and d['status']=='ok' else None
print("| pattern | dtype | aligned 4096 GB/s | +off | rows of 4095 | rows of 4999 |")
for p in ["add_rmsnorm","layernorm","softmax","silu_mul","rope","bias_gelu","sum_abs_amax"]:
    for dt,off in [("bf16",2),("f16",2),("f32",4)]:
        base=g(p,dt,4096,16384,0)
        if not base: continue
        r=[]
        o=g(p,dt,4096,16384,off); r.append(o/base if o else None)
        o=g(p,dt,4095,16384,0); r.append(o/base if o else None)
        o=g(p,dt,4999,16384,0) or g(p,dt,4999,13424,0); r.append(o/base if o else None)
        print(f"| {p} | {dt} | {base:.0f} | "+" | ".join("-" if x is None else f"{x:.2f}" for x in r)+" |")
