#pragma once
// What an image input changes in a request before anything runs: the parameters that take their
// value from its grid when the request leaves them out (ParamSpec::imageDefault: the Sparse
// Transformer's stride and block on pixels, local2d's width and prefix).

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <string>
#include <vector>

namespace attnscope::engine {

/// Fills in the parameters of `info` that an image of this grid sets and `given` lacks; each
/// value that differs from the schema's default is named in `notices` ("stride = 32 (the image's width)").
void applyImageDefaults(const VariantInfo& info, const GridShape& grid, ParamValues& given, std::vector<std::string>& notices);

}  // namespace attnscope::engine
