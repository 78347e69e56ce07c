#!/usr/bin/python3
"""Writes random normal q, k, v [H, n, d] float32 as safetensors, for `attnscope-cli run --qkv`.

    python3 bench/make_qkv.py OUT.safetensors --n 131072 [--heads 8] [--head-dim 64] [--seed 0]
"""
import argparse
import json
import struct

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shape = [args.heads, args.n, args.head_dim]
    size = 4 * args.heads * args.n * args.head_dim
    header = {name: {"dtype": "F32", "shape": shape, "data_offsets": [i * size, (i + 1) * size]}
              for i, name in enumerate(("q", "k", "v"))}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(args.seed)
    with open(args.out, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _ in range(3):
            for h in range(args.heads):  # a head at a time: at most n x d floats in memory
                f.write(rng.standard_normal((args.n, args.head_dim), dtype=np.float32).tobytes())


if __name__ == "__main__":
    main()
