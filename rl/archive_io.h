// Saving a torch archive (checkpoint.pt, sac.pt) through io::AtomicFile: the bytes torch produces
// are written and checked one by one, so a full disk or a size limit gives "cannot write
// <path>: No space left on device" with the previous checkpoint intact and no temp file left.
#pragma once
#include <torch/serialize/output-archive.h>

#include <string>

namespace minrnn::rl {

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path);

}  // namespace minrnn::rl
