// Clearing key material from memory when a string holding it is replaced or dropped: the bytes
// are overwritten (OPENSSL_cleanse, which the compiler cannot drop as a dead store) over the
// string's whole capacity, then the string is emptied.
#pragma once

#include <string>

namespace room_outbox::core {

void WipeString(std::string& secret);

// Replaces `secret` with `next`, wiping the old content first.
void ReplaceSecret(std::string& secret, std::string next);

}  // namespace room_outbox::core
