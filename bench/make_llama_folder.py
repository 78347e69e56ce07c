#!/usr/bin/env python3
"""Writes a Llama-family model folder of a real model's shape with random weights, for timing and
memory measurements (docs/PERFORMANCE_MODELS.md): config.json and model.safetensors in BF16 (or F32),
Hugging Face naming. The weights are not a trained model; they only have its sizes.

Values come from one block of N(0, 0.02) BF16 numbers repeated, so a 1B model is written in
seconds with the standard library alone. Norm weights are 1.

Gemma's norms scale by (1 + weight): their weights are 0, so every norm scales by 1 as well.
GPT-OSS's experts are MXFP4 blocks (random bytes) and scales (2^-4), as the released files;
DeepSeek-V2-Lite's its 64 routed and 2 shared experts per layer after a dense first layer.
--layers N keeps the first N layers (a small folder of the real widths, for screenshots).

Usage: bench/make_llama_folder.py OUT_DIR --shape NAME [--dtype BF16|F32] [--layers N]
NAME: smollm-135m, qwen2.5-0.5b, llama-3.2-1b, gemma-2-2b, gpt-oss-20b, deepseek-v2-lite
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
    "gpt-oss-20b": dict(model_type="gpt_oss", vocab_size=201088, hidden_size=2880, intermediate_size=2880,
                        num_hidden_layers=24, num_attention_heads=64, num_key_value_heads=8, head_dim=64,
                        num_local_experts=32, num_experts_per_tok=4, sliding_window=128, rope_theta=150000.0,
                        rms_norm_eps=1e-5, max_position_embeddings=131072, swiglu_limit=7.0,
                        rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                      "truncate": False, "original_max_position_embeddings": 4096}),
    "deepseek-v2-lite": dict(model_type="deepseek_v2", vocab_size=102400, hidden_size=2048, intermediate_size=10944,
                             moe_intermediate_size=1408, num_hidden_layers=27, num_attention_heads=16,
                             num_key_value_heads=16, q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128,
                             qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=64, n_shared_experts=2,
                             num_experts_per_tok=6, first_k_dense_replace=1, moe_layer_freq=1, topk_method="greedy",
                             norm_topk_prob=False, routed_scaling_factor=1.0, rms_norm_eps=1e-6, rope_theta=10000.0,
                             max_position_embeddings=163840,
                             rope_scaling={"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                                           "beta_fast": 32, "beta_slow": 1, "mscale": 0.707, "mscale_all_dim": 0.707}),
}

OWN_FIELDS = {  # fields a family's config class names otherwise
    "gemma2": dict(bos_token_id=2),
    "gpt_oss": dict(tie_word_embeddings=False),
}


def gpt_oss_tensors(c):
    """GPT-OSS: attention with biases and sinks, MXFP4 experts ([E, out, in / 32, 16] and scales)."""
    h, inner, e = c["hidden_size"], c["intermediate_size"], c["num_local_experts"]
    dh = c["head_dim"]
    q, kv = c["num_attention_heads"] * dh, c["num_key_value_heads"] * dh
    yield "model.embed_tokens.weight", [c["vocab_size"], h], "weight"
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        yield p + "input_layernorm.weight", [h], "norm"
        for name, rows, cols in (("q_proj", q, h), ("k_proj", kv, h), ("v_proj", kv, h), ("o_proj", h, q)):
            yield p + "self_attn." + name + ".weight", [rows, cols], "weight"
            yield p + "self_attn." + name + ".bias", [rows], "weight"
        yield p + "self_attn.sinks", [c["num_attention_heads"]], "weight"
        yield p + "post_attention_layernorm.weight", [h], "norm"
        yield p + "mlp.router.weight", [e, h], "weight"
        yield p + "mlp.router.bias", [e], "weight"
        for name, out, into in (("gate_up_proj", 2 * inner, h), ("down_proj", h, inner)):
            yield p + "mlp.experts." + name + "_blocks", [e, out, into // 32, 16], "blocks"
            yield p + "mlp.experts." + name + "_scales", [e, out, into // 32], "scales"
        yield p + "mlp.experts.gate_up_proj_bias", [e, 2 * inner], "weight"
        yield p + "mlp.experts.down_proj_bias", [e, h], "weight"
    yield "model.norm.weight", [h], "norm"
    yield "lm_head.weight", [c["vocab_size"], h], "weight"


def deepseek_tensors(c):
    """DeepSeek-V2: latent attention (q_proj when q_lora_rank is null), dense first layers, experts."""
    h, heads = c["hidden_size"], c["num_attention_heads"]
    nope, rope, v, latent = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]

    def swiglu(p, width):
        yield p + "gate_proj.weight", [width, h], "weight"
        yield p + "up_proj.weight", [width, h], "weight"
        yield p + "down_proj.weight", [h, width], "weight"

    yield "model.embed_tokens.weight", [c["vocab_size"], h], "weight"
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        a = p + "self_attn."
        yield p + "input_layernorm.weight", [h], "norm"
        yield a + "q_proj.weight", [heads * (nope + rope), h], "weight"
        yield a + "kv_a_proj_with_mqa.weight", [latent + rope, h], "weight"
        yield a + "kv_a_layernorm.weight", [latent], "norm"
        yield a + "kv_b_proj.weight", [heads * (nope + v), latent], "weight"
        yield a + "o_proj.weight", [h, heads * v], "weight"
        yield p + "post_attention_layernorm.weight", [h], "norm"
        if layer < c["first_k_dense_replace"]:
            yield from swiglu(p + "mlp.", c["intermediate_size"])
            continue
        yield p + "mlp.gate.weight", [c["n_routed_experts"], h], "weight"
        for e in range(c["n_routed_experts"]):
            yield from swiglu(p + f"mlp.experts.{e}.", c["moe_intermediate_size"])
        yield from swiglu(p + "mlp.shared_experts.", c["moe_intermediate_size"] * c["n_shared_experts"])
    yield "model.norm.weight", [h], "norm"


def tensors(c):
    if c["model_type"] == "gpt_oss":
        yield from gpt_oss_tensors(c)
        return
    if c["model_type"] == "deepseek_v2":
        yield from deepseek_tensors(c)
        return
    h, inner = c["hidden_size"], c["intermediate_size"]
    dh = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * dh, c["num_key_value_heads"] * dh
    bias = c["model_type"] == "qwen2"
    yield "model.embed_tokens.weight", [c["vocab_size"], h], "weight"
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        yield p + "input_layernorm.weight", [h], "norm"
        for name, rows, cols in (("q_proj", q, h), ("k_proj", kv, h), ("v_proj", kv, h), ("o_proj", h, q)):
            yield p + "self_attn." + name + ".weight", [rows, cols], "weight"
            if bias and name != "o_proj":
                yield p + "self_attn." + name + ".bias", [rows], "weight"
        yield p + "post_attention_layernorm.weight", [h], "norm"
        if c["model_type"] == "gemma2":
            yield p + "pre_feedforward_layernorm.weight", [h], "norm"
            yield p + "post_feedforward_layernorm.weight", [h], "norm"
        yield p + "mlp.gate_proj.weight", [inner, h], "weight"
        yield p + "mlp.up_proj.weight", [inner, h], "weight"
        yield p + "mlp.down_proj.weight", [h, inner], "weight"
    yield "model.norm.weight", [h], "norm"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--shape", choices=sorted(SHAPES), required=True)
    parser.add_argument("--dtype", choices=["BF16", "F32"], default="BF16")
    parser.add_argument("--layers", type=int, default=0, help="keep the first N layers (0: all)")
    args = parser.parse_args()
    shape = dict(SHAPES[args.shape])
    if args.layers > 0:
        shape["num_hidden_layers"] = args.layers
    config = dict(dict(hidden_act="silu", bos_token_id=1, tie_word_embeddings=True), **shape, torch_dtype="bfloat16")
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
    codes = bytes(rng.randrange(256) for _ in range(1 << 16))  # MXFP4 code pairs
    scale = bytes([123])  # 2^-4
    header, offset, items = {}, 0, list(tensors(config))
    for name, dims, kind in items:
        count = 1
        for d in dims:
            count *= d
        size = count if kind in ("blocks", "scales") else count * width
        dtype = "U8" if kind in ("blocks", "scales") else args.dtype
        header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(header).encode()
    encoded += b" " * ((8 - len(encoded) % 8) % 8)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for name, dims, kind in items:
            begin, end = header[name]["data_offsets"]
            size = end - begin
            if kind == "norm":
                f.write(one * (size // width))
                continue
            if kind == "scales":
                f.write(scale * size)
                continue
            source = codes if kind == "blocks" else block
            while size > 0:
                piece = source[: min(size, len(source))]
                f.write(piece)
                size -= len(piece)
    print(f"{args.out}: {args.shape} in {args.dtype}, {offset / 2**20:.0f} MiB of weights")


if __name__ == "__main__":
    main()
