#!/usr/bin/python3
"""Exact softmax attention in PyTorch, a block of queries at a time: the yardstick for `full`.

Reads q, k, v [H, n, d] float32 from a safetensors file (the one `attnscope-cli run --qkv` reads),
computes softmax(q k^T / sqrt(d)) v per head in query blocks — the scores, weights and output
buffers made once and written in place, as someone who knows the library would — and prints the
attention seconds and a checksum of the output. Time the whole process from outside (farm-bench, /usr/bin/time) for the
first-call figure; the printed seconds are the computation alone.

    /usr/bin/python3 bench/peers/torch_full_blocked.py QKV.safetensors [--block 1024] [--threads N]
"""
import argparse
import json
import struct
import sys
import time

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"{path}: tensor '{name}' is {info['dtype']}, expected F32")
        begin, end = info["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[begin:end], dtype=np.float32).copy().reshape(info["shape"]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qkv")
    parser.add_argument("--block", type=int, default=256, help="queries per block")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    t = read_safetensors(args.qkv)
    q, k, v = t["q"], t["k"], t["v"]
    heads, n, d = q.shape
    scale = d ** -0.5
    out = torch.empty_like(q)
    # buffers made once and reused for every block (fresh memory costs a page fault per 4 KiB here):
    # the products write into them (out=), the softmax in place of its input
    block = min(args.block, n)
    scores = torch.empty(block, n)
    weights = torch.empty(block, n)
    start = time.perf_counter()
    with torch.inference_mode():
        for h in range(heads):
            kt = k[h].t()
            for i0 in range(0, n, block):
                rows = min(block, n - i0)
                s = scores[:rows]
                torch.mm(q[h, i0:i0 + rows], kt, out=s)
                s.mul_(scale)
                w = weights[:rows]
                torch._softmax(s, 1, False, out=w) if hasattr(torch, "_softmax") else torch.softmax(s, 1, out=w)
                torch.mm(w, v[h], out=out[h, i0:i0 + rows])
    seconds = time.perf_counter() - start
    print(json.dumps({"attention_s": round(seconds, 3), "threads": torch.get_num_threads(),
                      "checksum": float(out.double().sum())}))


if __name__ == "__main__":
    main()
