// A Minari dataset's metadata.json, as read_minari reads it (datasets/minari.h): where Minari keeps
// it, <dir>/data/metadata.json, else <dir>/metadata.json; Python's JSON (documents inside strings,
// -Infinity bounds); every value it uses checked, naming the file and the key.
#pragma once
#include <filesystem>

#include "datasets/minari.h"

namespace minrnn::data {

// The dataset id, versions, env specs, spaces, declared totals and reference scores. Throws
// std::invalid_argument naming the file (or where it belongs, when there is none) and the key.
MinariInfo read_minari_metadata(const std::filesystem::path& dir);

}  // namespace minrnn::data
