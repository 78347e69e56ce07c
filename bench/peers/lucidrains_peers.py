#!/usr/bin/python3
"""Runs one of lucidrains' efficient-attention modules on a Q, K, V file: the peers of our variants.

The peers are read and run from a checkout that is not part of this project (fetch each repository
and unpack its package directory; docs/PERFORMANCE.md says how). Their `einops` import is served
by bench/peers/einops_shim (Debian 12 has no einops); packages they import only for their full
models (product_key_memory, axial_positional_embedding, mixture_of_experts, hyper_connections) are
replaced by empty modules, since the attention modules timed here never call them.

    /usr/bin/python3 bench/peers/lucidrains_peers.py QKV.safetensors --peer NAME --peers-dir DIR \
        [--threads N]

Peers, each configured as the variant it is compared with (docs/PERFORMANCE.md):
  local      local_attention.LocalAttention, window 256 back and forward, exact window (= longformer window 256,
             one-sided: the same keys; its output equals ours within 5e-7)
  performer  performer_pytorch.FastAttention, 256 features (= performer nb_features 256)
  linformer  linformer.LinformerSelfAttention, k 256, its projections replaced by the file's q, k, v
  reformer   reformer_pytorch.LSHAttention, bucket 64, 8 hashes (= reformer chunk 64, 256 buckets)
  routing    routing_transformer.KmeansAttention, window 256, round(sqrt(n)) clusters, 3 k-means steps at its
             first call (= routing window_size 256, clusters 0, iterations 3)

Prints the attention seconds and a checksum; time the whole process from outside for the
first-call figure.
"""
import argparse
import json
import math
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "einops_shim"))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from torch_full_blocked import read_safetensors  # noqa: E402

REPOSITORIES = {"local": "local-attention", "performer": "performer-pytorch", "linformer": "linformer",
                "reformer": "reformer-pytorch", "routing": "routing-transformer"}


def stub_model_only_packages():
    """Empty modules for imports the timed attention modules never use."""
    def unusable(name):
        def fail(*_args, **_kwargs):
            raise RuntimeError(f"{name} is not available in this benchmark")
        return fail

    names = {"product_key_memory": ["PKM"], "axial_positional_embedding": ["AxialPositionalEmbedding"],
             "mixture_of_experts": ["MoE"], "hyper_connections": ["get_init_and_expand_reduce_stream_functions"]}
    for module_name, attributes in names.items():
        if module_name in sys.modules:
            continue
        module = types.ModuleType(module_name)
        for attribute in attributes:
            setattr(module, attribute, unusable(f"{module_name}.{attribute}"))
        sys.modules[module_name] = module


class Fixed(nn.Module):
    """Stands in for a projection layer: returns the given tensor whatever its input."""
    def __init__(self, tensor):
        super().__init__()
        self.tensor = tensor

    def forward(self, _x):
        return self.tensor


def run_local(q, k, v):
    from local_attention import LocalAttention
    attention = LocalAttention(window_size=256, look_backward=1, look_forward=1, exact_windowsize=True,
                               use_rotary_pos_emb=False)
    return attention(q, k, v)


def run_performer(q, k, v):
    from performer_pytorch import FastAttention
    attention = FastAttention(dim_heads=q.shape[-1], nb_features=256)
    return attention(q[None], k[None], v[None])[0]


def run_linformer(q, k, v):
    from linformer import LinformerSelfAttention
    heads, n, d = q.shape
    flat = lambda t: t.transpose(0, 1).reshape(1, n, heads * d)  # noqa: E731
    attention = LinformerSelfAttention(dim=heads * d, seq_len=n, k=256, heads=heads, dim_head=d)
    attention.to_q, attention.to_k, attention.to_v = Fixed(flat(q)), Fixed(flat(k)), Fixed(flat(v))
    attention.to_out = nn.Identity()
    out = attention(torch.empty(1, n, heads * d))
    return out.reshape(n, heads, d).transpose(0, 1)


def run_reformer(q, k, v):
    from reformer_pytorch import LSHAttention
    attention = LSHAttention(bucket_size=64, n_hashes=8)
    return attention(q, v)[0]


def run_routing(q, k, v):
    import routing_transformer.routing_transformer as module
    from routing_transformer import KmeansAttention
    module.KMEAN_INIT_ITERS = 3  # our `iterations` default (theirs: 10 at the first call)
    heads, n, d = q.shape
    attention = KmeansAttention(num_clusters=round(math.sqrt(n)), window_size=256, num_heads=heads, head_dim=d)
    attention.eval()
    return attention(q[None], k[None], v[None])[0][0]


RUNNERS = {"local": run_local, "performer": run_performer, "linformer": run_linformer,
           "reformer": run_reformer, "routing": run_routing}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qkv")
    parser.add_argument("--peer", required=True, choices=sorted(RUNNERS))
    parser.add_argument("--peers-dir", required=True, help="folder holding the unpacked repositories")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    package_root = os.path.join(args.peers_dir, REPOSITORIES[args.peer])
    if not os.path.isdir(package_root):
        sys.exit(f"{package_root}: no such folder (unpack lucidrains/{REPOSITORIES[args.peer]} there)")
    sys.path.insert(0, package_root)
    sys.path.insert(1, os.path.join(args.peers_dir, REPOSITORIES["local"]))  # the others import it
    stub_model_only_packages()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    tensors = read_safetensors(args.qkv)
    q, k, v = tensors["q"], tensors["k"], tensors["v"]
    start = time.perf_counter()
    with torch.inference_mode():
        out = RUNNERS[args.peer](q, k, v)
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": args.peer, "attention_s": round(seconds, 3), "threads": torch.get_num_threads(),
                      "shape": list(out.shape), "checksum": float(out.double().sum())}))


if __name__ == "__main__":
    main()
