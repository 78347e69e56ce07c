#!/usr/bin/env python3
"""Writes a Llama-family model folder of a real model's shape with random weights, for timing and
memory measurements (docs/PERFORMANCE_MODELS.md): config.json and model.safetensors in BF16 (or F32),
Hugging Face naming. The weights are not a trained model; they only have its sizes.

Values come from one block of N(0, 0.02) BF16 numbers repeated, so a 1B model is written in
seconds with the standard library alone. Norm weights are 1.

Gemma's norms scale by (1 + weight): their weights are 0, so every norm scales by 1 as well.

Usage: bench/make_llama_folder.py OUT_DIR --shape smollm-135m|qwen2.5-0.5b|llama-3.2-1b|gemma-2-2b [--dtype BF16|F32]
"""

import argparse
import json
import os
import random
import struct

SHAPES = {
    # HF config fields of the real checkpoints
    "smollm-135m": dict(model_type="llama", vocab_size=49152, hidden_size=576, intermediate_size=1536,
                        num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
                        max_position_embeddings=2048, rope_theta=10000.0, rms_norm_eps=1e-5),
    "qwen2.5-0.5b": dict(model_type="qwen2", vocab_size=151936, hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                         max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6),
    "llama-3.2-1b": dict(model_type="llama", vocab_size=128256, hidden_size=2048, intermediate_size=8192,
                         num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                         max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
                         rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    "gemma-2-2b": dict(model_type="gemma2", vocab_size=256000, hidden_size=2304, intermediate_size=9216,
                       num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                       max_position_embeddings=8192, rope_theta=10000.0, rms_norm_eps=1e-6,
                       query_pre_attn_scalar=256, sliding_window=4096, attn_logit_softcapping=50.0,
                       final_logit_softcapping=30.0, hidden_activation="gelu_pytorch_tanh"),
}

OWN_FIELDS = {  # fields a family's config class names otherwise
    "gemma2": dict(bos_token_id=2),
}


def tensors(c):
    h, inner = c["hidden_size"], c["intermediate_size"]
    dh = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * dh, c["num_key_value_heads"] * dh
    bias = c["model_type"] == "qwen2"
    yield "model.embed_tokens.weight", [c["vocab_size"], h], False
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        yield p + "input_layernorm.weight", [h], True
        for name, rows, cols in (("q_proj", q, h), ("k_proj", kv, h), ("v_proj", kv, h), ("o_proj", h, q)):
            yield p + "self_attn." + name + ".weight", [rows, cols], False
            if bias and name != "o_proj":
                yield p + "self_attn." + name + ".bias", [rows], False
        yield p + "post_attention_layernorm.weight", [h], True
        if c["model_type"] == "gemma2":
            yield p + "pre_feedforward_layernorm.weight", [h], True
            yield p + "post_feedforward_layernorm.weight", [h], True
        yield p + "mlp.gate_proj.weight", [inner, h], False
        yield p + "mlp.up_proj.weight", [inner, h], False
        yield p + "mlp.down_proj.weight", [h, inner], False
    yield "model.norm.weight", [h], True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--shape", choices=sorted(SHAPES), required=True)
    parser.add_argument("--dtype", choices=["BF16", "F32"], default="BF16")
    args = parser.parse_args()
    shape = SHAPES[args.shape]
    config = dict(dict(hidden_act="silu", bos_token_id=1), **shape, tie_word_embeddings=True, torch_dtype="bfloat16")
    config.update(OWN_FIELDS.get(shape["model_type"], {}))
    if shape["model_type"] == "gemma2":
        del config["hidden_act"]
    width = 2 if args.dtype == "BF16" else 4
    rng = random.Random(7)
    values = [rng.gauss(0.0, 0.02) for _ in range(1 << 16)]
    unit = 0.0 if config["model_type"] == "gemma2" else 1.0  # a norm weight that scales by 1
    if width == 2:  # BF16: the high half of the float32
        block = b"".join(struct.pack("<f", v)[2:] for v in values)
        one = struct.pack("<f", unit)[2:]
    else:
        block = b"".join(struct.pack("<f", v) for v in values)
        one = struct.pack("<f", unit)
    header, offset, items = {}, 0, list(tensors(config))
    for name, shape, _ in items:
        count = 1
        for s in shape:
            count *= s
        header[name] = {"dtype": args.dtype, "shape": shape, "data_offsets": [offset, offset + count * width]}
        offset += count * width
    encoded = json.dumps(header).encode()
    encoded += b" " * ((8 - len(encoded) % 8) % 8)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for name, shape, norm in items:
            count = 1
            for s in shape:
                count *= s
            if norm:
                f.write(one * count)
                continue
            size = count * width
            while size > 0:
                piece = block[: min(size, len(block))]
                f.write(piece)
                size -= len(piece)
    print(f"{args.out}: {args.shape} in {args.dtype}, {offset / 2**20:.0f} MiB of weights")


if __name__ == "__main__":
    main()
