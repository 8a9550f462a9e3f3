// "Did you mean" hints for unknown names: keys, ops, dtypes, node names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tfrun {

// The closest of `candidates` to `word` (case-insensitive edit distance),
// or "" when none is close.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace tfrun
