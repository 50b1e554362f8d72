#pragma once
// What every fuzz target shares: the input as text, and the rule that a reader may refuse a file only
// with gpuscale::Error (one line for the user). Any other exception, a crash, a hang, a leak or
// undefined behaviour is a finding: libFuzzer (with ASan and UBSan) stops and keeps the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "results/result_io.h"

namespace gpuscale::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `read`; a gpuscale::Error is a valid refusal, anything else escapes to the fuzzer.
template <typename F>
void refuse_only_with_error(F&& read) {
  try {
    read();
  } catch (const Error&) {
  }
}

}  // namespace gpuscale::fuzz
