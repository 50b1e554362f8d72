#pragma once
// Text from an untrusted file (a result file's strings, a parse error quoting it, a file name) made
// safe to print on a terminal: C0 controls, DEL and C1 controls (escape sequences included) and bytes
// that are not valid UTF-8 become '?', so a file can neither drive the terminal nor garble the line.
// text/escape.h's term_text is this function; every message that quotes a file uses it.
#include <string>
#include <string_view>

namespace gpuscale {

std::string terminal_safe(std::string_view s);

// `s` with each byte that is not part of valid UTF-8 written as the text \xHH (valid text unchanged):
// what the process was given (an environment value such as NCCL_X=$'x\xff') recorded in JSON, which
// holds only UTF-8, instead of failing the run's first write.
std::string utf8_escaped(std::string_view s);

// A message for stderr as the one line it must be, whatever it quotes (a flag's value, an environment
// variable, a file's string, a store URL): terminal_safe, cut to 8 x kMaxShownBytes with the cut marked
// (core/shown_text.h). The one rule for every line gpuscale writes to stderr: errors, warnings, notes.
std::string message_line(std::string_view what);

// terminal_safe, cut to at most `max_bytes` (at a character boundary) with "..." when it was longer:
// for quoting a value inside a one-line message.
std::string terminal_quote(std::string_view s, std::size_t max_bytes = 60);

}  // namespace gpuscale
