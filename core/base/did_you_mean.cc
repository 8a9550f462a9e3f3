#include "core/base/did_you_mean.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tfrun {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] =
          std::min({row[j] + 1, row[j - 1] + 1, prev + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    // The distance is at least the difference in length: a 30,000-character
    // word costs nothing against short names.
    const size_t length_gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (length_gap >= best_d) continue;
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string hint = ClosestMatch(word, candidates);
  return hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint);
}

}  // namespace tfrun
