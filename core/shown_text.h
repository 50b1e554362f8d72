#pragma once
// How much of a string from a file any output shows, and JSON text made inert on a terminal: the rules
// every output shares (text/escape.h applies clip_text in each format's escaper; core/term_text.h
// makes the characters safe).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuscale {

// The most bytes of one string from a file that any output shows (a terminal line, a report cell, a
// label): a 50 MiB host name must not become 50 MiB on the terminal or 100 MiB of HTML.
inline constexpr std::size_t kMaxShownBytes = 400;

// `s` cut to at most `max_bytes` at a UTF-8 character boundary, with a marker saying how much was cut
// ("...[52428400 bytes cut]") when it was longer; `s` itself otherwise.
std::string clip_text(std::string_view s, std::size_t max_bytes = kMaxShownBytes);

// JSON text (as nlohmann dumps it: C0 controls already \u escapes) with DEL and the C1 controls
// (U+0080..U+009F) written as \u escapes too, so a result or reference file printed on a terminal cannot
// drive it. Those bytes only occur inside JSON strings, so the text stays the same JSON; text without
// them is returned unchanged (byte for byte).
std::string json_terminal_safe(std::string text);

}  // namespace gpuscale
