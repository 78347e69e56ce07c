#pragma once
// Result<T>: a value or an Error. The engine never lets an exception cross its public API.

#include <string>
#include <utility>
#include <variant>

namespace attnscope::engine {

/// What kind of failure an Error reports. Stable: the CLI maps codes to exit statuses.
enum class ErrorCode {
    InvalidArgument,  ///< a parameter or flag outside its allowed range or of the wrong type
    InvalidInput,     ///< user data that breaks a rule (invalid UTF-8, malformed file, NaN in q)
    NotFound,         ///< unknown variant, missing file or tensor
    OutOfBudget,      ///< the request would exceed the memory budget; nothing was allocated
    Cancelled,        ///< the progress callback returned false
    Io,               ///< the operating system refused a read or write
    Unsupported,      ///< a valid input this build cannot handle (e.g. dtype F8 on LibTorch 1.13)
    Internal,         ///< a bug: an unexpected exception caught at the API boundary
};

/// Short stable name of a code ("invalid argument"), for messages and JSON.
const char* errorCodeName(ErrorCode code);

struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message;  ///< one line, names the file/field/parameter and the rule broken
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_data(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
    Result(Error error) : m_data(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

    bool ok() const { return m_data.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(m_data); }
    const T& value() const& { return std::get<0>(m_data); }
    T&& value() && { return std::get<0>(std::move(m_data)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

/// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)), m_ok(false) {}  // NOLINT: implicit
    bool ok() const { return m_ok; }
    explicit operator bool() const { return m_ok; }
    const Error& error() const { return m_error; }

private:
    Error m_error;
    bool m_ok = true;
};

inline Error makeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace attnscope::engine
