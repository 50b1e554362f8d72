#pragma once
// SHA-256 through OpenSSL's EVP interface (libcrypto): the identity of a stored run.
#include <string>
#include <string_view>

namespace gpuscale::history {

// Lowercase hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace gpuscale::history
