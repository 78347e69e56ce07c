#!/usr/bin/env python3
"""Writes a GGUF file of a real model's shape with random weights, for timing and memory
measurements (docs/PERFORMANCE_MODELS.md), laid out as llama.cpp's converter and quantizer lay
them out: GGUF's tensor names, dimensions fastest first, norms in F32, the rest in the type mix
asked for —
  Q4_K_M: Q4_K, with attn_v and ffn_down in Q6_K on the layers llama.cpp gives more bits (the
          first and last eighth and every third between) and the embedding in Q6_K;
  Q8_0, F16, BF16: every matrix in that type.
Quantized blocks are 256 random blocks cycled, their scales set so weights are a few hundredths;
the weights are not a trained model, they only have its sizes and storage. A Llama 3 style
rope scaling is written as llama.cpp writes it, a rope_freqs tensor of per-frequency divisors.

--tokenizer FILE takes a byte-level tokenizer.json (Llama 3's, Qwen's) and writes it as
tokenizer.ggml.* (gpt2 model: tokens, token types, merges, the pre-tokenizer --pre names).

Usage: bench/make_gguf.py OUT.gguf --shape NAME --type Q4_K_M|Q8_0|F16|BF16 [--layers N]
       [--tokenizer tokenizer.json --pre llama-bpe|qwen2]
NAME: smollm-135m, qwen2.5-0.5b, llama-3.2-1b (architectures llama and qwen2)
"""

import argparse
import json
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_llama_folder import SHAPES  # noqa: E402

TYPES = {"F32": 0, "F16": 1, "Q5_0": 6, "Q8_0": 8, "Q4_K": 12, "Q6_K": 14, "BF16": 30}
BLOCKS = {"Q5_0": (32, 22), "Q8_0": (32, 34), "Q4_K": (256, 144), "Q6_K": (256, 210)}
SCALES = {"Q5_0": [(0, 0.002)], "Q8_0": [(0, 0.0003)], "Q4_K": [(0, 0.0002), (2, 0.002)], "Q6_K": [(208, 0.00003)]}
FALLBACK = {"Q4_K": "Q5_0", "Q6_K": "Q8_0"}  # llama.cpp's types for rows that are no whole number of 256


def half(value):
    return struct.pack("<e", value)


def random_blocks(kind, rng):
    size = BLOCKS[kind][1]
    blocks = bytearray(rng.randrange(256) for _ in range(256 * size))
    for b in range(256):
        for at, scale in SCALES[kind]:
            blocks[b * size + at: b * size + at + 2] = half(scale * rng.uniform(0.5, 1.5))
    return bytes(blocks)


def stored_size(kind, count):
    if kind in BLOCKS:
        per, size = BLOCKS[kind]
        return count // per * size
    return count * (4 if kind == "F32" else 2)


def tensor_bytes(kind, count, blocks, floats):
    if kind in BLOCKS:
        per, size = BLOCKS[kind]
        n = count // per * size
        return (blocks[kind] * (n // len(blocks[kind]) + 1))[:n]
    width = 4 if kind == "F32" else 2
    n = count * width
    return (floats[kind] * (n // len(floats[kind]) + 1))[:n]


def more_bits(layer, layers):
    # llama.cpp's use_more_bits: the first and last eighth of the layers and every third between
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def tensors(c, mix):
    """(GGUF name, dims fastest first, type)"""
    h, inner, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    dh = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * dh, c["num_key_value_heads"] * dh
    matrix = "Q4_K" if mix == "Q4_K_M" else mix
    yield "token_embd.weight", [h, c["vocab_size"]], "Q6_K" if mix == "Q4_K_M" else matrix
    for layer in range(layers):
        p = f"blk.{layer}."
        big = "Q6_K" if mix == "Q4_K_M" and more_bits(layer, layers) else matrix
        yield p + "attn_norm.weight", [h], "F32"
        yield p + "attn_q.weight", [h, q], matrix
        yield p + "attn_k.weight", [h, kv], matrix
        yield p + "attn_v.weight", [h, kv], big
        yield p + "attn_output.weight", [q, h], matrix
        if c["model_type"] == "qwen2":
            for name, rows in (("attn_q", q), ("attn_k", kv), ("attn_v", kv)):
                yield p + name + ".bias", [rows], "F32"
        yield p + "ffn_norm.weight", [h], "F32"
        yield p + "ffn_gate.weight", [h, inner], matrix
        yield p + "ffn_up.weight", [h, inner], matrix
        yield p + "ffn_down.weight", [inner, h], big
    yield "output_norm.weight", [h], "F32"
    scaling = c.get("rope_scaling") or {}
    if scaling.get("rope_type") == "llama3":
        yield "rope_freqs.weight", [dh // 2], "F32"


def llama3_divisors(c):
    """Llama 3's rope scaling as llama.cpp's converter stores it: one divisor per frequency."""
    s = c["rope_scaling"]
    dh = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    factor, low, high, old = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
    out = []
    for i in range(0, dh, 2):
        freq = 1.0 / (c["rope_theta"] ** (i / dh))
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return out


class Writer:
    def __init__(self):
        self.out = bytearray()

    def u32(self, v):
        self.out += struct.pack("<I", v)

    def u64(self, v):
        self.out += struct.pack("<Q", v)

    def string(self, s):
        b = s.encode()
        self.u64(len(b))
        self.out += b

    def kv(self, key, value):
        self.string(key)
        if isinstance(value, bool):
            self.u32(7)
            self.out += bytes([1 if value else 0])
        elif isinstance(value, int):
            self.u32(4)
            self.u32(value)
        elif isinstance(value, float):
            self.u32(6)
            self.out += struct.pack("<f", value)
        elif isinstance(value, str):
            self.u32(8)
            self.string(value)
        elif isinstance(value, list):
            self.u32(9)
            kind = 8 if value and isinstance(value[0], str) else 5
            self.u32(kind)
            self.u64(len(value))
            for v in value:
                if kind == 8:
                    self.string(v)
                else:
                    self.out += struct.pack("<i", v)


def tokenizer_metadata(path, pre):
    with open(path, encoding="utf-8") as f:
        t = json.load(f)
    tokens, types = {}, {}
    for token, i in t["model"]["vocab"].items():
        tokens[i], types[i] = token, 1
    for added in t.get("added_tokens", []):
        tokens[added["id"]], types[added["id"]] = added["content"], 3 if added.get("special") else 4
    count = max(tokens) + 1
    merges = [m if isinstance(m, str) else m[0] + " " + m[1] for m in t["model"]["merges"]]
    return {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre,
            "tokenizer.ggml.tokens": [tokens.get(i, f"[PAD{i}]") for i in range(count)],
            "tokenizer.ggml.token_type": [types.get(i, 5) for i in range(count)],
            "tokenizer.ggml.merges": merges}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--shape", choices=["smollm-135m", "qwen2.5-0.5b", "llama-3.2-1b"], required=True)
    parser.add_argument("--type", choices=["Q4_K_M", "Q8_0", "F16", "BF16"], required=True)
    parser.add_argument("--layers", type=int, default=0)
    parser.add_argument("--tokenizer")
    parser.add_argument("--pre", default="llama-bpe")
    args = parser.parse_args()
    c = dict(SHAPES[args.shape])
    if args.layers > 0:
        c["num_hidden_layers"] = args.layers
    arch = c["model_type"]
    dh = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    metadata = {"general.architecture": arch, "general.alignment": 32,
                f"{arch}.context_length": c["max_position_embeddings"], f"{arch}.embedding_length": c["hidden_size"],
                f"{arch}.block_count": c["num_hidden_layers"], f"{arch}.feed_forward_length": c["intermediate_size"],
                f"{arch}.attention.head_count": c["num_attention_heads"],
                f"{arch}.attention.head_count_kv": c["num_key_value_heads"],
                f"{arch}.attention.key_length": dh, f"{arch}.attention.value_length": dh,
                f"{arch}.rope.dimension_count": dh,
                f"{arch}.attention.layer_norm_rms_epsilon": float(c["rms_norm_eps"]),
                f"{arch}.rope.freq_base": float(c["rope_theta"]), f"{arch}.vocab_size": c["vocab_size"]}
    if args.tokenizer:
        metadata.update(tokenizer_metadata(args.tokenizer, args.pre))
    rng = random.Random(7)
    blocks = {kind: random_blocks(kind, rng) for kind in BLOCKS}
    floats = {"F32": struct.pack("<f", 1.0),
              "F16": b"".join(half(rng.gauss(0, 0.02)) for _ in range(1 << 14)),
              "BF16": b"".join(struct.pack("<f", rng.gauss(0, 0.02))[2:] for _ in range(1 << 14))}
    items = list(tensors(c, args.type))
    w = Writer()
    w.u32(0x46554747)
    w.u32(3)
    w.u64(len(items))
    w.u64(len(metadata))
    for key, value in metadata.items():
        w.kv(key, value)
    offset, placed = 0, []
    items = [(name, dims, FALLBACK.get(kind, kind) if kind in BLOCKS and dims[0] % BLOCKS[kind][0] else kind)
             for name, dims, kind in items]
    for name, dims, kind in items:
        count = 1
        for d in dims:
            count *= d
        data = struct.pack(f"<{dims[0]}f", *llama3_divisors(c)) if name == "rope_freqs.weight" else None
        size = len(data) if data else stored_size(kind, count)
        w.string(name)
        w.u32(len(dims))
        for d in dims:
            w.u64(d)
        w.u32(TYPES[kind])
        w.u64(offset)
        placed.append((name, count, kind, data))
        offset += (size + 31) // 32 * 32
    w.out += bytes((32 - len(w.out) % 32) % 32)
    with open(args.out, "wb") as f:
        f.write(w.out)
        for name, count, kind, data in placed:
            payload = data if data else tensor_bytes(kind, count, blocks, floats)
            f.write(payload)
            f.write(bytes((32 - len(payload) % 32) % 32))
    print(f"{args.out}: {os.path.getsize(args.out) / 2**30:.2f} GiB, {len(items)} tensors")


if __name__ == "__main__":
    main()
