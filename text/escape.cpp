#include "text/escape.h"

#include <cstring>

#include "core/shown_text.h"
#include "core/term_text.h"

namespace gpuscale {
namespace {

// The one rule every format shares: the string cut to kMaxShownBytes with a marker (clip_text), then
// each character handed to `put` with whether it is a control character: C0 (tab and newline
// included; a format keeps those it allows), DEL, and C1 (U+0080..U+009F, two bytes in UTF-8: 0xC2
// 0x80..0x9F; a terminal reads U+009B as CSI and U+0085 as a line break).
template <typename Put>
std::string each_char(std::string_view s, Put&& put) {
  const std::string clipped = clip_text(s);
  std::string out;
  out.reserve(clipped.size());
  for (std::size_t i = 0; i < clipped.size(); ++i) {
    const auto c = static_cast<unsigned char>(clipped[i]);
    if (c == 0xC2 && i + 1 < clipped.size() && static_cast<unsigned char>(clipped[i + 1]) <= 0x9F &&
        static_cast<unsigned char>(clipped[i + 1]) >= 0x80) {
      put(out, '\0', true);  // a C1 control: reported as a control without its own byte
      ++i;
    } else {
      put(out, clipped[i], c < 0x20 || c == 0x7f);
    }
  }
  return out;
}

}  // namespace

std::string html_escape(std::string_view s) {
  return each_char(s, [](std::string& out, char ch, bool control) {
    if (control && ch != '\t' && ch != '\n') return void(out += "\xEF\xBF\xBD");  // U+FFFD
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  });
}

std::string markdown_escape(std::string_view s) {
  static const char* punct = "\\`*_{}[]|~";  // [ ] escaped: ( ) ! cannot start a link or image
  return each_char(s, [](std::string& out, char ch, bool control) {
    if (ch == '\n' || ch == '\r') out += ' ';
    else if (control) out += '?';
    else if (ch == '&') out += "&amp;";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else {
      if (std::strchr(punct, ch)) out += '\\';
      out += ch;
    }
  });
}

std::string csv_field(std::string_view s) {
  // Control characters but tab become '?', line breaks too, as on the terminal: RFC 4180 lets a quoted
  // field hold a line break, but then a record is no longer a line, and wc, grep, awk and sort break.
  std::string v = each_char(s, [](std::string& out, char ch, bool control) { out += control && ch != '\t' ? '?' : ch; });
  if (!v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@' || v[0] == '\t')) v.insert(0, "'");
  if (v.find_first_of(",\"") == std::string::npos) return v;
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string prom_label_value(std::string_view s) {
  return each_char(s, [](std::string& out, char ch, bool control) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += control ? '?' : ch;
  });
}

std::string term_text(std::string_view s) { return terminal_safe(clip_text(s)); }

}  // namespace gpuscale
