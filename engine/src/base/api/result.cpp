#include <attnscope/result.h>

namespace attnscope::engine {

const char* errorCodeName(ErrorCode code) {
    switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::InvalidInput: return "invalid input";
    case ErrorCode::NotFound: return "not found";
    case ErrorCode::OutOfBudget: return "out of budget";
    case ErrorCode::Cancelled: return "cancelled";
    case ErrorCode::Io: return "I/O error";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::Internal: return "internal error";
    }
    return "internal error";
}

}  // namespace attnscope::engine
