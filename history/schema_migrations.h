#pragma once
// The store's schema as numbered migrations (docs/history.md, "Schema"). Migration N takes a store
// from version N - 1 to N; each is a list of statements valid in both SQLite and PostgreSQL, applied
// in one transaction with the version update. A released migration is never edited: a change is a
// new migration appended here (and kStoreSchemaVersion raised).
#include <string>
#include <vector>

namespace gpuscale::history {

// migrations()[i] takes version i to i + 1.
const std::vector<std::vector<std::string>>& migrations();

}  // namespace gpuscale::history
