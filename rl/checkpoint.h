// A run's checkpoint.pt: the agent (model, state normalization, config, env, reference scores,
// step) and the optimizer's state, in one LibTorch archive. Written atomically (tmp + rename);
// read in a child process first (a hostile file cannot crash the reader's caller). load_agent, the
// public reader, is declared with Agent in rl/agent.h.
#pragma once
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "rl/agent.h"

namespace minrnn::rl {

// What load_agent throws for a file that is no whole archive (rl::why_not_whole_archive: not a
// zip, cut short, an entry's CRC-32 wrong), apart from its other errors: a resume adds the way on.
class NotWholeCheckpoint : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `path` whole or not at all; errors name the file and the OS reason.
void save_checkpoint(const std::string& path, Agent& agent, torch::optim::Optimizer& optimizer);

// Every tensor of `archive` and of the archives inside it finite (damaged bytes under a good CRC:
// a file written so): a model's weights, an optimizer's state. Throws std::runtime_error "PATH:
// WHAT 'KEY' holds values that are not finite (a damaged file?); REMEDY" (KEY as a module names
// its tensors, "predict_action.weight"; no "; REMEDY" when it is empty).
void check_archive_finite(torch::serialize::InputArchive& archive, const std::string& path,
                          const std::string& what, const std::string& remedy);

// Why `path` is not a whole LibTorch archive ("" where it is one): not a zip (a config or a
// dataset given for a run), one cut short (its zip's end record missing: a copy stopped early, a
// full disk), which only a load would find otherwise, or one whose entry's bytes differ from
// those its CRC-32 was taken of (damaged on a disk or in a copy), which a load would not find at
// all, naming the entry. Reads the whole file (~25 ms for 7.6 MB, a ~400 ms load_agent's);
// load_agent asks it of every checkpoint (NotWholeCheckpoint), a sweep of the runs it would resume,
// before any starts.
// `entries` false checks the ends alone (a few bytes): `sweep --status`, which a user watches,
// would read every run's checkpoint whole (a gigabyte for the paper's Table 3) at each look.
std::string why_not_whole_archive(const std::string& path, bool entries = true);

// The optimizer state saved beside the agent (resume), onto `device`. Throws std::runtime_error
// naming the file and the state where a value is not finite (a damaged file).
void load_optimizer_state(const std::string& path, const torch::Device& device,
                          torch::optim::Optimizer& optimizer);

// Writes a LibTorch archive to `path` whole or not at all (tmp + rename): agent checkpoints and
// SAC's (collect/sac_train.cpp); errors name the file and the OS reason.
void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path);

}  // namespace minrnn::rl
