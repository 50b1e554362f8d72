#pragma once
// Steps every rank takes together (open the backend, check the output path, plan) either succeed on
// all ranks or fail on all of them with one message, so no rank is left waiting for the others.
#include <functional>
#include <string>

#include "core/error.h"
#include "world/world.h"

namespace gpuscale {

// An error every rank knows about: only rank 0 prints it.
class AgreedError : public Error {
 public:
  using Error::Error;
};

// Runs `step` on every rank; if it throws gpuscale::Error anywhere, every rank throws an AgreedError
// with the first failing rank's message (naming that rank when the ranks disagree) and exit code.
void agree(const World& world, const std::function<void()>& step);

}  // namespace gpuscale
