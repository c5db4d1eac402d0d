// Result<T>: a value or an Error, for code inside the project (never in a public header).
#pragma once

#include <tl/expected.hpp>

#include "room_outbox/error.h"

namespace room_outbox::core {

template <class T>
using Result = tl::expected<T, Error>;

// Shorthand for returning a failure: `return Fail(ErrorCode::kUnavailable, "...")`.
inline tl::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}
inline tl::unexpected<Error> Fail(Error error) { return tl::unexpected<Error>(std::move(error)); }

}  // namespace room_outbox::core
