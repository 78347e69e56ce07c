#!/usr/bin/env python3
"""Writes a tiny random BERT model folder (config.json, model.safetensors, vocab.txt) in the
Hugging Face naming, with no dependency beyond the standard library. It is what the Atlas
screenshot (docs/screenshots/atlas.png) is made from; the weights are random, not trained.

Each head's query rows are scaled by a different factor, so heads range from nearly uniform to
sharply peaked attention and the atlas has something to show.

Usage: scripts/make_tiny_model.py OUT_DIR [--layers 4] [--heads 6] [--head-dim 8] [--seed 7]
"""

import argparse
import json
import os
import random
import struct

# WordPiece vocabulary: specials, then the words of samples/sample.txt's first sentence and
# common English words, so the sample text tokenizes without many [UNK]s.
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "the", "a", "of", "and", "to",
         "in", "is", "it", "that", "on", "was", "for", "with", "as", "by", "at", "from", "this",
         "cat", "sat", "mat", "dog", "ran", "park", "attention", "each", "token", "tokens", "every",
         "other", "head", "heads", "layer", "model", "transformer", "query", "key", "value", "which",
         "can", "be", "are", "not", "one", "all", "how", "what", "when", "##s", "##ing", "##ed"]


def tensor(shape, rng, std=0.3, offset=0.0):
    count = 1
    for s in shape:
        count *= s
    return shape, [offset + rng.gauss(0.0, std) for _ in range(count)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--head-dim", type=int, default=8)
    parser.add_argument("--positions", type=int, default=128)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    h = args.heads * args.head_dim
    inter = 2 * h
    tensors = {}

    def add(name, shape, std=0.3, offset=0.0):
        tensors["bert." + name] = tensor(shape, rng, std, offset)

    def norm(base):
        add(base + ".weight", [h], 0.05, 1.0)
        add(base + ".bias", [h], 0.05)

    add("embeddings.word_embeddings.weight", [len(VOCAB), h])
    add("embeddings.position_embeddings.weight", [args.positions, h])
    add("embeddings.token_type_embeddings.weight", [2, h])
    norm("embeddings.LayerNorm")
    for layer in range(args.layers):
        p = "encoder.layer.%d." % layer
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            add(p + part + ".weight", [h, h])
            add(p + part + ".bias", [h])
        # Head k's query rows (outputs k*d .. (k+1)*d) scaled: sharper heads further right and down.
        shape, values = tensors["bert." + p + "attention.self.query.weight"]
        for head in range(args.heads):
            scale = 0.3 + 0.6 * head + 0.5 * layer
            for row in range(head * args.head_dim, (head + 1) * args.head_dim):
                for col in range(h):
                    values[row * h + col] *= scale
        norm(p + "attention.output.LayerNorm")
        add(p + "intermediate.dense.weight", [inter, h])
        add(p + "intermediate.dense.bias", [inter])
        add(p + "output.dense.weight", [h, inter])
        add(p + "output.dense.bias", [h])
        norm(p + "output.LayerNorm")

    # safetensors: u64 header length, JSON header (dtype, shape, data_offsets), raw F32 data.
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        shape, values = tensors[name]
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    config = {"model_type": "bert", "vocab_size": len(VOCAB), "hidden_size": h,
              "num_hidden_layers": args.layers, "num_attention_heads": args.heads,
              "intermediate_size": inter, "max_position_embeddings": args.positions, "type_vocab_size": 2,
              "layer_norm_eps": 1e-12, "pad_token_id": 0, "hidden_act": "gelu", "do_lower_case": True}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(args.out, "vocab.txt"), "w") as f:
        f.write("\n".join(VOCAB) + "\n")


if __name__ == "__main__":
    main()
