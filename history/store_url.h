#pragma once
// The address of a results history (docs/history.md): the conventional URL forms
//   sqlite:///abs/path/history.db      (three slashes: an absolute path)
//   sqlite://relative/history.db       (a path relative to the working directory)
//   postgresql://user:pass@host:port/db?sslmode=...   (also postgres://; libpq's own URI syntax)
// Pure: parsing and masking only, so every message can name a store without its password.
#include <string>

namespace gpuscale::history {

enum class StoreKind { sqlite, postgresql };

struct StoreUrl {
  StoreKind kind = StoreKind::sqlite;
  std::string path;      // sqlite: the file's path
  std::string conninfo;  // postgresql: the URL as given (libpq parses it), password included
  std::string masked;    // the URL with its password replaced by *** (what messages and records show)
};

// Throws gpuscale::Error (exit 2) naming the masked URL and what is wrong.
StoreUrl parse_store_url(const std::string& url);
// `url` with the password of its user-info part (scheme://user:PASSWORD@...) and of a password=...
// query parameter replaced by ***; anything else unchanged.
std::string mask_password(const std::string& url);
// The password of the URL's user-info part, or "" (so a driver's message can be scrubbed of it too).
std::string url_password(const std::string& url);

}  // namespace gpuscale::history
