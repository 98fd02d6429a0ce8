#include "tests/fuzz/mutate.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tests/text_file.h"

namespace minrnn::fuzz {
namespace {

const int64_t kInteresting[] = {0,          1,           -1,        2,          3,
                                7,          8,           16,        255,        256,
                                4096,       65535,       65536,     0x7fffffff, -0x7fffffffll - 1,
                                0xffffffff, 0x100000000, 1ll << 40, 1ll << 62,  INT64_MAX,
                                INT64_MIN};

}  // namespace

void mutate_once(std::string& s, Rng& rng, const std::vector<std::string>& corpus,
                 const Target& t) {
  const size_t n = s.size();
  switch (rng.below(t.text ? 11 : 9)) {
    case 0:  // flip a bit
      if (n) s[rng.below(n)] ^= static_cast<char>(1u << rng.below(8));
      break;
    case 1:  // a random byte
      if (n) s[rng.below(n)] = static_cast<char>(rng.next());
      break;
    case 2:    // an interesting integer over 1, 2, 4 or 8 bytes, little-endian
    case 3: {  // (sizes and offsets in HDF5 headers, zip headers, pickle lengths)
      const size_t width = size_t{1} << rng.below(4);
      if (n < width) break;
      int64_t v = kInteresting[rng.below(sizeof kInteresting / sizeof kInteresting[0])];
      if (rng.below(4) == 0)  // near the edge: wraps around, as the bytes in a file would
        v = static_cast<int64_t>(static_cast<uint64_t>(v) + rng.below(9) - 4);
      std::memcpy(&s[rng.below(n - width + 1)], &v, width);
      break;
    }
    case 4: {  // nudge an integer in place
      const size_t width = size_t{1} << rng.below(4);
      if (n < width) break;
      const size_t at = rng.below(n - width + 1);
      uint64_t v = 0;
      std::memcpy(&v, &s[at], width);
      v += static_cast<uint64_t>(static_cast<int64_t>(rng.below(33)) - 16);
      std::memcpy(&s[at], &v, width);
      break;
    }
    case 5: {  // delete a range
      if (!n) break;
      const size_t at = rng.below(n), len = 1 + rng.below(std::min<size_t>(n - at, 64));
      s.erase(at, len);
      break;
    }
    case 6: {  // duplicate a range somewhere
      if (!n || n > (1u << 20)) break;
      const size_t at = rng.below(n), len = 1 + rng.below(std::min<size_t>(n - at, 128));
      s.insert(rng.below(n + 1), s.substr(at, len));
      break;
    }
    case 7:  // truncate
      if (n) s.resize(rng.below(n));
      break;
    case 8: {  // splice: the head of this input, the tail of another
      const std::string& other = corpus[rng.below(corpus.size())];
      if (other.empty()) break;
      const size_t cut = rng.below(n + 1), from = rng.below(other.size());
      s = s.substr(0, cut) + other.substr(from);
      break;
    }
    case 9:  // text: insert a dictionary word
      if (!t.dictionary.empty())
        s.insert(rng.below(n + 1), t.dictionary[rng.below(t.dictionary.size())]);
      break;
    case 10: {  // text: swap two lines' positions by copying one over another
      std::vector<std::string> lines = testing::lines_of(s);
      if (lines.size() < 2) break;
      lines[rng.below(lines.size())] = lines[rng.below(lines.size())];
      s.clear();
      for (const auto& line : lines) s += line + "\n";
      break;
    }
  }
  if (s.size() > (8u << 20)) s.resize(8u << 20);  // keep inputs small
}

}  // namespace minrnn::fuzz
