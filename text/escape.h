#pragma once
// Escaping of strings that come from result files (hostnames, command lines, environment values,
// error messages) for each output format. A result file is untrusted input: nothing from it reaches an
// output unescaped.
#include <string>
#include <string_view>

namespace gpuscale {

// HTML text and attribute values (also SVG and XML): & < > " ' as entities; control characters other
// than tab and newline (not allowed in XML 1.0) become U+FFFD.
std::string html_escape(std::string_view s);
// A Markdown table cell: backslash before Markdown punctuation (\ ` * _ { } [ ] | ~), & < > as entities,
// line breaks as spaces.
std::string markdown_escape(std::string_view s);
// One RFC 4180 CSV field on one line: control characters but tab (line breaks included) as '?', as on
// the terminal, so each record is one line for line tools; quoted when it holds a comma or quote (quotes
// doubled); a field starting with = + - @ or a tab gets a leading ' so spreadsheets do not run it as a
// formula.
std::string csv_field(std::string_view s);
// A Prometheus text-format label value (without the quotes): backslash, double quote and newline escaped.
std::string prom_label_value(std::string_view s);
// Terminal text: control characters (C0, DEL, C1: escape sequences included) and invalid UTF-8 become
// '?', so a file cannot drive the terminal (core/term_text.h, shared with the readers' messages).
std::string term_text(std::string_view s);

}  // namespace gpuscale
