// Store URLs: which database, and the same URL with its password masked (store_url.h).
#include "history/store_url.h"

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale::history {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::string mask_password(const std::string& url) {
  std::string out = url;
  const auto scheme = out.find("://");
  if (scheme != std::string::npos) {
    const auto start = scheme + 3;
    // The authority ends at the first '/', '?' or '#'; the user info at its last '@'.
    auto end = out.find_first_of("/?#", start);
    if (end == std::string::npos) end = out.size();
    const auto at = out.rfind('@', end == 0 ? 0 : end - 1);
    if (at != std::string::npos && at >= start) {
      const auto colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=... among the query parameters (libpq accepts it there too).
  for (std::size_t pos = 0; (pos = out.find("password=", pos)) != std::string::npos;) {
    if (pos > 0 && out[pos - 1] != '?' && out[pos - 1] != '&') {
      pos += 9;
      continue;
    }
    const auto value = pos + 9;
    auto end = out.find('&', value);
    if (end == std::string::npos) end = out.size();
    out.replace(value, end - value, "***");
    pos = value + 3;
  }
  return out;
}

std::string url_password(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const auto start = scheme + 3;
  auto end = url.find_first_of("/?#", start);
  if (end == std::string::npos) end = url.size();
  const auto at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at == std::string::npos || at < start) return "";
  const auto colon = url.find(':', start);
  return colon != std::string::npos && colon < at ? url.substr(colon + 1, at - colon - 1) : "";
}

StoreUrl parse_store_url(const std::string& url) {
  StoreUrl u;
  u.masked = mask_password(url);
  auto bad = [&](const std::string& why) {
    return Error(fmt::format("invalid store URL '{}': {} (use sqlite:///PATH or postgresql://USER@HOST/DB)",
                             u.masked, why));
  };
  if (url.empty()) throw bad("it is empty");
  if (starts_with(url, "sqlite://")) {
    u.kind = StoreKind::sqlite;
    std::string rest = url.substr(9);
    if (const auto q = rest.find_first_of("?#"); q != std::string::npos) throw bad("a SQLite store takes no query");
    if (rest.empty() || rest == "/") throw bad("no file path");
    u.path = rest;  // "/abs/path" from sqlite:///abs/path, "rel/path" from sqlite://rel/path
    if (u.path.back() == '/') throw bad("the path names a folder, not a file");
    return u;
  }
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://")) {
    u.kind = StoreKind::postgresql;
    const auto start = url.find("://") + 3;
    auto end = url.find_first_of("/?#", start);
    const std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (authority.find_first_of(" \t\n") != std::string::npos) throw bad("white space in the host part");
    const std::string host = authority.substr(authority.rfind('@') == std::string::npos ? 0 : authority.rfind('@') + 1);
    // An empty host is libpq's default (the local socket), which is fine; a port must be a number.
    if (const auto colon = host.rfind(':'); colon != std::string::npos && host.find(']') == std::string::npos) {
      const std::string port = host.substr(colon + 1);
      if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
          std::stoi(port) == 0 || std::stoi(port) > 65535)
        throw bad(fmt::format("port '{}' is not a number in 1..65535", port));
    }
    u.conninfo = url;
    return u;
  }
  if (url.find("://") == std::string::npos) throw bad("no scheme");
  throw bad(fmt::format("unknown scheme '{}'", url.substr(0, url.find("://"))));
}

}  // namespace gpuscale::history
