#!/usr/bin/env python3
"""Recompute a tile of attention weights from an AttnScope result file alone, with numpy only.

    python3 tile_from_result.py RESULT.safetensors HEAD R0 R1 C0 C1

prints the weights of queries R0..R1-1 x keys C0..C1-1 of HEAD as JSON. The file keeps the output,
the Q and K the variant ran on, per-row statistics and the variant's draws (RESULT_FORMAT.md);
which keys a pattern variant allows comes from its listing (`run --write-pattern`) or, within the
dense limit, from `mask`. The formulas are those of RESULT_FORMAT.md, "Row statistics".
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "I64": np.int64, "I32": np.int32, "U8": np.uint8, "BOOL": np.uint8}


def load(path):
    """A safetensors file as (tensors, metadata), without the safetensors package."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    meta = header.pop("__metadata__", {})
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[base + begin : base + end], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors, meta


def multiplicity(t, variant, head, n, m):
    """[n, m] times each key is listed for each query: from the listing, else from the mask."""
    if "pattern.row_ptr" in t:
        ptr, col = t["pattern.row_ptr"], t["pattern.col_idx"]
        c = np.zeros((n, m))
        for i in range(n):
            np.add.at(c[i], col[ptr[head * n + i] : ptr[head * n + i + 1]], 1)
        return c
    if "mask" in t:
        return t["mask"][head].astype(float)
    sys.exit(f"{variant}: the file has neither pattern.* (run --write-pattern) nor mask (--dense-limit)")


def softmax_rows(scores, c, t, head):
    """c · exp(s − row_max) / row_sum, 0 outside the pattern and for empty rows."""
    shift = t["stats.row_max"][head].astype(float)[:, None]
    total = t["stats.row_sum"][head].astype(float)[:, None]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        w = np.where((c > 0) & (total > 0), c * np.exp(scores - shift) / np.where(total > 0, total, 1), 0.0)
    return w


def phi_performer(x, w, normalizer, shift_of, eps, relu):
    dash = (x * normalizer) @ w.T
    if relu:
        return np.maximum(dash, 0) + 1e-3
    diagonal = (x * x).sum(-1, keepdims=True) * normalizer * normalizer / 2
    return (np.exp(dash - diagonal - shift_of(dash)) + eps) / np.sqrt(w.shape[0])


def weights(path, head):
    t, meta = load(path)
    summary = json.loads(meta["attnscope.result"])
    variant, params = summary["variant"], summary["params"]
    n, m, d = summary["n"], summary["m"], summary["head_dim"]
    q = t["q"][head].astype(float)
    k = t["k"][head].astype(float)
    pad = t["key_padding"].astype(bool) if "key_padding" in t else np.zeros(k.shape[0], bool)
    scale = 1 / np.sqrt(d)
    causal = params.get("causal", False)
    visible = np.tril(np.ones((n, m)), m - n) if causal else np.ones((n, m))
    if variant == "full":
        c = visible * ~pad[None, :m]
        if pad.shape[0] == n:
            c[pad] = 0
        return softmax_rows(q @ k.T * scale, c, t, head)
    if variant in ("sparse_strided", "sparse_fixed", "longformer", "bigbird", "star", "topk"):
        if variant == "star":
            k = np.vstack([k, k.mean(0)])
        if variant == "topk":
            c = np.zeros((n, m))
            for i, row in enumerate(t["stats.kept_keys"][head]):
                c[i, row[row >= 0]] = 1
        else:
            c = multiplicity(t, variant, head, n, m)
        c = c * ~np.append(pad, np.zeros(m - pad.shape[0], bool))[None, :]
        return softmax_rows(q @ k.T * scale, c, t, head)
    if variant == "reformer":
        keys = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        scores = q @ keys.T * scale
        np.fill_diagonal(scores, -5e4)
        c = multiplicity(t, variant, head, n, m)
        if not params["allow_duplicate_attention"]:
            c = np.minimum(c, 1)
        c = c * ~pad[None, :]
        return softmax_rows(scores, c, t, head)
    if variant == "routing":
        scores = q @ k.T * scale
        allowed = visible * ~pad[None, :]
        w = np.zeros((n, m))
        shift, total = t["stats.row_max"][head].astype(float), t["stats.row_sum"][head].astype(float)
        if params["mode"] == "topw":
            queries, keys = t["routing.cluster_queries"][head], t["routing.cluster_keys"][head]
            count = t["routing.routed_count"][head] + 1e-5
            for cl in range(queries.shape[0]):
                for r, i in enumerate(queries[cl]):
                    if total[cl, r] <= 0 or pad[i]:
                        continue
                    ks = keys[cl][allowed[i, keys[cl]] > 0]
                    w[i, ks] += np.exp(scores[i, ks] - shift[cl, r]) / total[cl, r] / count[i]
            return w
        nearest = t["routing.nearest"][head]
        for i in range(n):
            ks = np.nonzero((nearest[1] == nearest[0][i]) & (allowed[i] > 0))[0]
            if total[i] > 0 and not pad[i]:
                w[i, ks] = np.exp(scores[i, ks] - shift[i]) / total[i]
        return w
    if variant == "entmax":
        alpha = params["alpha"]
        alpha = alpha[head] if len(alpha) > 1 else alpha[0]
        z = q @ k.T * np.float64(np.float32(scale))
        shift = t["stats.shift"][head].astype(float)[:, None] * np.float64(np.float32(scale))
        tau, norm = t["stats.tau"][head].astype(float)[:, None], t["stats.norm"][head].astype(float)[:, None]
        if alpha == 1:
            p = np.exp(z - shift)
        else:
            p = np.maximum((alpha - 1) * (z - shift) - tau, 0) ** (1 / (alpha - 1))
        ok = (norm > 0) & (visible > 0) & ~pad[None, :]
        return np.where(ok, p / np.where(norm > 0, norm, 1), 0.0)
    if variant in ("linear", "performer"):
        if variant == "linear":
            phi_q, phi_k = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0))), np.where(k > 0, k + 1, np.exp(np.minimum(k, 0)))
        else:
            w_proj = t["performer.projection"][head].astype(float)
            normalizer = d ** -0.25
            eps, relu = params["feature_eps"], params["kernel"] == "relu"
            key_shift = t["stats.key_shift"][head]
            phi_q = phi_performer(q, w_proj, normalizer, lambda dash: dash.max(-1, keepdims=True), eps, relu)
            phi_k = phi_performer(k, w_proj, normalizer, lambda dash: key_shift, eps, relu)
        phi_k[pad] = 0
        den = t["stats.den"][head].astype(float)[:, None]
        return np.where(den > 0, phi_q @ phi_k.T / np.where(den > 0, den, 1), 0.0) * visible
    if variant == "linformer":
        f = t["linformer.F"]
        f = (f[head] if f.ndim == 3 else f).astype(float) * ~pad[None, :]
        scores = q @ t["stats.k_proj"][head].astype(float).T * scale
        pbar = np.exp(scores - t["stats.row_max"][head][:, None]) / t["stats.row_sum"][head][:, None]
        return pbar @ f
    sys.exit(f"unknown variant {variant}")


if __name__ == "__main__":
    path, head, r0, r1, c0, c1 = sys.argv[1], *map(int, sys.argv[2:7])
    tile = weights(path, head)[r0:r1, c0:c1]
    print(json.dumps({"head": head, "rows": [r0, r1], "keys": [c0, c1], "weights": tile.tolist()}))
