#pragma once
// Every registered variant, once, in the order the window's picker and `attnscope-cli variants`
// list them. A variant's folder, engine/src/attention/variants/<id>/, provides
//   VariantEntry variants::<id>::entry();           <id>.cpp: its facts, schema and weights (torch-free)
//   std::unique_ptr<Variant> variants::<id>::kernel();  its run: <id>_run.cpp (plain C++: the
//                                                       engine and the launcher run it alike)
// Adding a variant: its folder, one X(<id>) here, its test, its section in docs/VARIANTS.md.

#define ATTNSCOPE_VARIANTS(X)                                                                              \
    X(full) X(transformer_xl) X(sparse_strided) X(sparse_fixed) X(longformer) X(bigbird) X(local2d) X(topk) X(entmax) X(star) X(linformer) \
        X(linear) X(performer) X(reformer) X(routing) X(model_softmax)
