#include "analysis/escape.h"

#include <cstring>

#include "core/term_text.h"

namespace gpuscale {
namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (is_control(c) && ch != '\t' && ch != '\n') out += "\xEF\xBF\xBD";
        else out += ch;
    }
  }
  return out;
}

std::string markdown_escape(std::string_view s) {
  static const char* punct = "\\`*_{}[]|~";  // [ ] escaped: ( ) ! cannot start a link or image
  std::string out;
  for (char ch : s) {
    if (ch == '&') out += "&amp;";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else if (is_control(static_cast<unsigned char>(ch))) out += '?';
    else {
      if (std::strchr(punct, ch)) out += '\\';
      out += ch;
    }
  }
  return out;
}

std::string csv_field(std::string_view s) {
  std::string v(s);
  if (!v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@' || v[0] == '\t')) v.insert(0, "'");
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string prom_label_value(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

std::string term_text(std::string_view s) { return terminal_safe(s); }

}  // namespace gpuscale
