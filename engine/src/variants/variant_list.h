#pragma once
// Every registered variant, once, in the order the window's picker and `attnscope-cli variants`
// list them. A variant's folder, engine/src/variants/<id>/, provides
//   VariantEntry variants::<id>::entry();           <id>.cpp: its facts, schema and weights (torch-free)
//   std::unique_ptr<Variant> variants::<id>::kernel();  its run: <id>_kernel.cpp (LibTorch), or
//                                                       <id>_run.cpp (torch-free: listed below too)
// Adding a variant: its folder, one X(<id>) here, its test, its section in docs/VARIANTS.md.

#define ATTNSCOPE_VARIANTS(X)                                                                              \
    X(full) X(transformer_xl) X(sparse_strided) X(sparse_fixed) X(longformer) X(bigbird) X(local2d) X(topk) X(entmax) X(star) X(linformer) \
        X(linear) X(performer) X(reformer) X(routing) X(model_softmax)

// The variants whose runs need no LibTorch (<id>_run.cpp): the launcher runs them on explicit
// q, k, v itself (attnscope/torch_free_run.h), the engine like the others.
#define ATTNSCOPE_TORCH_FREE_VARIANTS(X) \
    X(full) X(transformer_xl) X(sparse_strided) X(sparse_fixed) X(longformer) X(bigbird) X(local2d) X(topk) X(entmax) X(linformer) X(linear) \
        X(performer) X(reformer) X(routing) X(model_softmax)
