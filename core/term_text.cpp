#include "core/term_text.h"

#include "core/shown_text.h"

namespace gpuscale {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when it is not valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF included).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F;  // U+0080..U+009F
    if (n == 0 || c1 || c < 0x20 || c == 0x7F) {
      out += '?';
      i += n == 0 ? 1 : n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string utf8_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t n = utf8_length(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    static const char* hex = "0123456789abcdef";
    const auto c = static_cast<unsigned char>(s[i++]);
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

std::string message_line(std::string_view what) { return terminal_safe(clip_text(what, 8 * kMaxShownBytes)); }

std::string terminal_quote(std::string_view s, std::size_t max_bytes) {
  std::string safe = terminal_safe(s);
  if (safe.size() <= max_bytes) return safe;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(safe[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return safe.substr(0, cut) + "...";
}

}  // namespace gpuscale
